// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CUDA route of a RealTransform. Device operands: the passes and cuFFT run on the phase's stream and execute
// returns once they are enqueued. Host operands (the blocking rule): the operand is copied into a device stage on
// the phase's stream, transformed there in place, copied back to a host result, and the call waits for it. An
// execute on device operands whose pointers and direction came among the last few calls is captured once as a CUDA
// graph and replayed (RealTransformOptions::graph_replay), as FFT does.

#include <memory>

#include "plan/graph_replay.hpp"
#include "plan/work_area.hpp"
#include "r2r/cufft/cufft_r2r.hpp"
#include "r2r/r2r_route.hpp"

namespace cuplan::detail {

class CudaR2RRoute final : public R2RRoute {
 public:
  CUPLAN_ROUTE_CLASS_MEMBERS(CudaR2RRoute, R2RRouteContext, RealTransformOptions, R2RCall);
  CUPLAN_DEVICE_ROUTE_MEMBERS;
  CUPLAN_ROUTE_DESCRIPTIONS;
  std::size_t held_bytes() const noexcept override;
  void release_idle_memory() noexcept override;

 private:
  bool host_operand_;
  WorkArea work_area_;  // owned, the stream's shared area, or the caller's (RealTransformOptions::work_area)
  std::unique_ptr<CufftR2R> cufft_;
  GraphReplay replay_;   // device operands: a repeated call's passes and cuFFT calls as one graph launch
  Tensor device_stage_;  // host operands: the operand on the device, in the result's layout
};

}  // namespace cuplan::detail
