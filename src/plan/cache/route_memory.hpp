// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CachedPlan memory overrides of an Impl whose memory between calls is its route's (FFT, Matmul, RealTransform,
// Convolution).

/// Defines, in an Impl with `state_` (ObjectState), `target_` (ExecutionTarget) and the route member `route`, the
/// CachedPlan overrides that report and release its route's memory while the object lives; on the target's CUDA
/// device, or the host (-1).
#define CUPLAN_CACHED_PLAN_ROUTE_MEMORY(Impl, route)   \
  std::size_t Impl::held_bytes() const noexcept {      \
    return state_.freed() ? 0 : route->held_bytes();   \
  }                                                    \
  int Impl::memory_device() const noexcept {           \
    return target_.cuda ? target_.device : -1;         \
  }                                                    \
  void Impl::release_idle_memory() noexcept {          \
    if (!state_.freed()) route->release_idle_memory(); \
  }
