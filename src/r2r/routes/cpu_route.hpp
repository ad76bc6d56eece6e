// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CPU route of a RealTransform: FFTW r2r on the host. Operands in device memory are copied to the host and the
// result back (blocking) on the stream the object's rule picks on their device.

#include <memory>

#include "r2r/fftw/fftw_r2r.hpp"
#include "r2r/r2r_route.hpp"

namespace cuplan::detail {

class CpuR2RRoute final : public R2RRoute {
 public:
  CUPLAN_ROUTE_CLASS_MEMBERS(CpuR2RRoute, R2RRouteContext, RealTransformOptions, R2RCall);
  CUPLAN_ROUTE_DESCRIPTIONS;

 private:
  Planning planning_;
  bool host_operand_;
  std::unique_ptr<FftwR2RPlan> fftw_;
  Tensor host_stage_;  // device operands: the operand and result on the host, in the result's layout
};

}  // namespace cuplan::detail
