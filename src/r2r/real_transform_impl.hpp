// SPDX-License-Identifier: Apache-2.0
#pragma once
// The object behind the class form RealTransform and the function forms' cached plans: the decision, the operand,
// the lifecycle and the stream contract of one planned real-to-real transform. How it runs is its route's business
// (r2r_route.hpp), chosen once at construction.

#include <memory>
#include <optional>
#include <string>

#include "cuplan/r2r.hpp"
#include "plan/cache/operand_signature.hpp"
#include "plan/cache/plan_cache.hpp"
#include "plan/operation/planned_operation.hpp"
#include "plan/stateful.hpp"
#include "r2r/planner.hpp"
#include "r2r/r2r_route.hpp"

namespace cuplan::detail {

class RealTransformImpl final : public PlannedOperation {
 public:
  /// `all_axes_by_default`: empty axes mean every axis (dctn ...), not the last min(ndim, 3). `axes_option`: the
  /// option that named the axes, for messages (`axis` for dct ...).
  RealTransformImpl(TensorRef operand, const RealTransformOptions& options, const char* who,
                    bool all_axes_by_default = false, const char* axes_option = "axes");
  ~RealTransformImpl() override;

  CUPLAN_PLANNED_OPERATION_PHASES(RealTransformExecuteOptions);
  /// A call already known valid (planned, operand present, direction in range, `out` of the planned signature).
  Tensor execute_validated(Direction direction, const std::optional<StreamRef>& stream, const EventList& after,
                           const TensorRef* out, bool release_workspace);

  const R2RDecision& decision() const noexcept { return decision_; }
  std::size_t workspace_size() const noexcept { return route_->workspace_size(); }
  std::string describe() const override;
  std::string error_context() const override;

 private:
  OperationRoute& memory_route() const noexcept override { return *route_; }
  R2RDecision decision_;
  std::unique_ptr<R2RRoute> route_;
};

}  // namespace cuplan::detail
