// SPDX-License-Identifier: Apache-2.0
#pragma once
// The plan-cache entry of an object whose memory between calls is its route's: one rule for FFT, RealTransform and
// Convolution (through PlannedOperation) and for Matmul. `Owner` has `state_` (ObjectState), `target_`
// (ExecutionTarget) and `memory_route()` (the route, with held_bytes() and release_idle_memory()), and befriends
// this class.

#include <cstddef>

#include "plan/cache/plan_cache.hpp"

namespace cuplan::detail {

template <class Owner>
class RouteMemoryPlan : public CachedPlan {
 public:
  /// The route's memory (an owned work area, staging buffers) while the object lives; nothing once freed.
  std::size_t held_bytes() const noexcept final {
    return owner().state_.freed() ? 0 : owner().memory_route().held_bytes();
  }
  /// On the target's CUDA device, or the host (-1).
  int memory_device() const noexcept final { return owner().target_.cuda ? owner().target_.device : -1; }
  void release_idle_memory() noexcept final {
    if (!owner().state_.freed()) owner().memory_route().release_idle_memory();
  }

 private:
  const Owner& owner() const noexcept { return static_cast<const Owner&>(*this); }
};

}  // namespace cuplan::detail
