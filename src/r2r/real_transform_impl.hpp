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
#include "plan/stateful.hpp"
#include "r2r/planner.hpp"
#include "r2r/r2r_route.hpp"

namespace cuplan::detail {

class RealTransformImpl final : public CachedPlan {
 public:
  /// `all_axes_by_default`: empty axes mean every axis (dctn ...), not the last min(ndim, 3).
  RealTransformImpl(TensorRef operand, const RealTransformOptions& options, const char* who,
                    bool all_axes_by_default = false);
  ~RealTransformImpl() override;

  void plan(std::optional<StreamRef> stream);
  Tensor execute(const RealTransformExecuteOptions& options);
  /// A call already known valid (planned, operand present, direction in range, `out` of the planned signature).
  Tensor execute_validated(Direction direction, const std::optional<StreamRef>& stream, const EventList& after,
                           const TensorRef* out, bool release_workspace);
  void reset_operand(TensorRef operand, std::optional<StreamRef> stream);
  /// A plan-cache hit's operand (its signature is the key's): no phase, no check.
  void adopt_operand(TensorRef&& operand);
  void release_operand();
  void free() noexcept;

  const R2RDecision& decision() const noexcept { return decision_; }
  const ExecutionTarget& target() const noexcept { return target_; }
  const OperandSignature& out_signature() const noexcept { return out_signature_; }
  std::size_t workspace_size() const noexcept { return route_->workspace_size(); }
  std::string describe() const;
  std::string error_context() const;
  void require_alive(const char* method) const { state_.require_alive(method); }
  bool freed() const noexcept { return state_.freed(); }

 private:
  R2RDecision decision_;
  ExecutionTarget target_;
  ObjectState state_{"RealTransform"};
  PhaseOrder order_;
  PhaseStreams streams_;
  TensorRef operand_;
  OperandSignature operand_signature_;
  OperandSignature out_signature_;
  EventList pending_after_;
  std::unique_ptr<R2RRoute> route_;
};

}  // namespace cuplan::detail
