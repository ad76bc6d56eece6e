// SPDX-License-Identifier: Apache-2.0
#pragma once
// The execution route of a RealTransform, as for FFT (docs/architecture.md, "Routes"): CPU (FFTW) or CUDA (cuFFT
// with the pre and post passes), chosen once when the object is made. A route owns its plans, workspace and
// buffers and opens its phases by the object's stream rule; RealTransformImpl keeps the lifecycle and the operand.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "cuplan/r2r.hpp"
#include "plan/operation/operation_route.hpp"
#include "plan/stateful.hpp"
#include "r2r/planner.hpp"

namespace cuplan::detail {

/// What a route reads of its object (owned by RealTransformImpl, final once its constructor returns).
struct R2RRouteContext : RouteContext {
  const R2RDecision& decision;
  const char* who;  ///< the call's name for messages ("RealTransform", "dct")
};

/// One execute, validated by RealTransformImpl.
struct R2RCall : OperationCall {
  Direction direction = Direction::forward;
};

/// Its execution() reads "cuFFT on cuda:0: axis 1 even/odd reorder + R2C(n) + twiddle", "FFTW r2r (estimate
/// planning)".
using R2RRoute = TransformRoute<R2RRouteContext, R2RCall>;

/// In place, the result is the operand.
template <>
std::optional<Tensor> R2RRoute::given_result(const R2RCall& call) const;

/// NotSupported for RealTransformOptions::route `fused` with CPU execution (FFTW runs every other route value).
std::unique_ptr<R2RRoute> make_r2r_route(const R2RRouteContext& context, const RealTransformOptions& options,
                                         const TensorView& operand);

}  // namespace cuplan::detail
