// SPDX-License-Identifier: Apache-2.0
// Memory counted by use and device (see memory_uses.hpp): relaxed atomics, one slot per use for the host and each
// of the first `max_devices` devices (cudaGetDeviceCount never reports more on today's systems).

#include "runtime/memory_uses.hpp"

#include <array>
#include <atomic>
#include <cstdint>

namespace cuplan::detail {
namespace {

constexpr int max_devices = 64;
constexpr int uses = static_cast<int>(MemoryUse::staging_ring) + 1;

struct Slot {
  std::atomic<std::int64_t> items{0};
  std::atomic<std::int64_t> bytes{0};
};

std::array<Slot, static_cast<std::size_t>(uses*(max_devices + 1))> g_slots;

Slot* slot(MemoryUse use, int device) noexcept {
  if (device < -1 || device >= max_devices) return nullptr;
  return &g_slots[static_cast<std::size_t>(static_cast<int>(use) * (max_devices + 1) + device + 1)];
}

}  // namespace

void account_memory(MemoryUse use, int device, std::ptrdiff_t items, std::ptrdiff_t bytes) noexcept {
  if (Slot* s = slot(use, device)) {
    s->items.fetch_add(items, std::memory_order_relaxed);
    s->bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
}

MemoryUseTotal memory_use(MemoryUse use, int device) noexcept {
  const Slot* s = slot(use, device);
  if (s == nullptr) return {};
  return {static_cast<std::size_t>(s->items.load(std::memory_order_relaxed)),
          static_cast<std::size_t>(s->bytes.load(std::memory_order_relaxed))};
}

}  // namespace cuplan::detail
