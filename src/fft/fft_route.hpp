// SPDX-License-Identifier: Apache-2.0
#pragma once
// The execution route of an FFT (docs/dev/architecture.md, "Routes"): one class per way a planned transform runs,
// chosen once when the FFT is made. A route owns its path's plan, execute, release and workspace, and opens its
// phases by the object's stream rule (plan/phase.hpp). FftImpl keeps the lifecycle, the operand and the phases'
// order, and never asks which route it holds.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "cuplan/fft.hpp"
#include "fft/callbacks/callback_set.hpp"
#include "fft/planner.hpp"
#include "plan/operation/operation_route.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {

/// What a route reads of its FFT. FftImpl owns all of it and the route; the decision and the walk are final once
/// the FFT's constructor returns (the route reads them from plan() on).
struct FftRouteContext : RouteContext {
  const LayoutDecision& decision;
  const OutputWalk& walk;
  std::unique_ptr<CallbackSet>& callbacks;  ///< prolog and epilog (null without either), made with the decision
  bool inplace = false;
};

/// One execute, validated by FftImpl.
struct FftCall : OperationCall {
  Direction direction = Direction::forward;
  double scale = 1.0;  ///< multiplies the result (1: none)
};

class FftRoute : public TransformRoute<FftRouteContext, FftCall> {
 public:
  /// What the route asks of the layout decision: staging copies, whether a loop of calls is costly, aligned real
  /// calls.
  virtual void shape_request(LayoutRequest& request) const = 0;
  /// The alignment operand and result memory need on this route.
  virtual std::size_t required_alignment(DType dtype) const noexcept = 0;
  /// NotSupported when the route cannot run the decided transform (default: it runs every one).
  virtual void check_supported(const LayoutDecision& /*decision*/) const {}
  /// Library calls one execute makes (describe()).
  virtual std::size_t calls_per_execute() const noexcept = 0;

 protected:
  using TransformRoute::TransformRoute;
};

/// For an in-place R2C/C2R, the operand's memory seen with the result's dtype, shape and strides.
template <>
std::optional<Tensor> TransformRoute<FftRouteContext, FftCall>::given_result(const FftCall& call) const;

/// The route of an FFT on `target` for `operand` (the one place that tells the routes apart).
std::unique_ptr<FftRoute> make_fft_route(const FftRouteContext& context, const FFTOptions& options,
                                         const TensorView& operand);

}  // namespace cuplan::detail
