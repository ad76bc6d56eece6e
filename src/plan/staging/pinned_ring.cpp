// SPDX-License-Identifier: Apache-2.0
#include "plan/staging/pinned_ring.hpp"

#include <algorithm>
#include <cstddef>

#include "cuplan/device.hpp"
#include "runtime/memory_uses.hpp"
#include "runtime/storage.hpp"

namespace cuplan::detail::staging {

namespace {
// Slots start on a cache line (and DMA-friendly) boundary.
constexpr std::size_t slot_alignment = 256;
std::size_t round_up(std::size_t bytes) noexcept {
  return (bytes + slot_alignment - 1) / slot_alignment * slot_alignment;
}
}  // namespace

void PinnedRing::ensure(int slots, std::size_t bytes) {
  bytes = round_up(bytes);
  if (storage_ && slots <= slots_ && bytes <= slot_bytes_) return;
  const int new_slots = std::max(slots, slots_);
  const std::size_t new_bytes = std::max(bytes, slot_bytes_);
  release();  // the old memory first: pinned memory is scarce
  storage_ = Storage::allocate(static_cast<std::size_t>(new_slots) * new_bytes, Device::cpu(), MemorySpace::host_pinned,
                               StreamRef{});
  slots_ = new_slots;
  slot_bytes_ = new_bytes;
  account_memory(MemoryUse::staging_ring, -1, 1, static_cast<std::ptrdiff_t>(storage_->bytes()));
}

void* PinnedRing::slot(int i) const noexcept {
  return static_cast<std::byte*>(storage_->data()) + static_cast<std::size_t>(i) * slot_bytes_;
}

void PinnedRing::release() noexcept {
  if (storage_) account_memory(MemoryUse::staging_ring, -1, -1, -static_cast<std::ptrdiff_t>(storage_->bytes()));
  storage_.reset();
  slots_ = 0;
  slot_bytes_ = 0;
}

}  // namespace cuplan::detail::staging
