// SPDX-License-Identifier: Apache-2.0
#include "plan/staging/pinned_ring.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>

#include "cuplan/device.hpp"
#include "runtime/storage.hpp"

namespace cuplan::detail::staging {

namespace {
// Slots start on a cache line (and DMA-friendly) boundary.
constexpr std::size_t slot_alignment = 256;
std::size_t round_up(std::size_t bytes) noexcept {
  return (bytes + slot_alignment - 1) / slot_alignment * slot_alignment;
}
std::atomic<std::size_t> g_ring_bytes{0};  // every ring's pinned bytes, for the memory report
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
  g_ring_bytes += storage_->bytes();
}

void* PinnedRing::slot(int i) const noexcept {
  return static_cast<std::byte*>(storage_->data()) + static_cast<std::size_t>(i) * slot_bytes_;
}

void PinnedRing::release() noexcept {
  if (storage_) g_ring_bytes -= storage_->bytes();
  storage_.reset();
  slots_ = 0;
  slot_bytes_ = 0;
}

std::size_t pinned_ring_bytes() noexcept {
  return g_ring_bytes.load(std::memory_order_relaxed);
}

}  // namespace cuplan::detail::staging
