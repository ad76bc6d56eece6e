// SPDX-License-Identifier: Apache-2.0
#pragma once
// The switch of the ordering checker (docs/streams.md, "The ordering checker") and the three notes the runtime
// gives it: an event recorded on a stream, a stream made to wait for an event, device memory freed. The checker
// itself lives in the plan layer (plan/ordering/ordering_checker.hpp) and installs the hooks; the runtime calls these
// inline notes, which cost one relaxed atomic load while checking is off.

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>

namespace cuplan::detail::ordering {

struct Hooks {
  void (*recorded)(cudaEvent_t event, cudaStream_t stream);
  void (*waited)(cudaStream_t stream, cudaEvent_t event);
  void (*freed)(const void* data, std::size_t bytes);
};

/// On when CUPLAN_CHECK=1 at load or after set_checking(true).
extern std::atomic<bool> g_on;
/// Installed once by the plan layer; null before that (nothing to note then).
extern std::atomic<const Hooks*> g_hooks;

inline bool on() noexcept {
  return g_on.load(std::memory_order_relaxed);
}

inline void note_record(cudaEvent_t event, cudaStream_t stream) {
  if (!on()) [[likely]]
    return;
  if (const Hooks* hooks = g_hooks.load(std::memory_order_acquire)) hooks->recorded(event, stream);
}

inline void note_wait(cudaStream_t stream, cudaEvent_t event) {
  if (!on()) [[likely]]
    return;
  if (const Hooks* hooks = g_hooks.load(std::memory_order_acquire)) hooks->waited(stream, event);
}

/// Freed memory may be reused by the pool on any stream, ordered by the pool itself: its history is dropped.
inline void note_free(const void* data, std::size_t bytes) noexcept {
  if (!on()) [[likely]]
    return;
  if (const Hooks* hooks = g_hooks.load(std::memory_order_acquire)) hooks->freed(data, bytes);
}

}  // namespace cuplan::detail::ordering
