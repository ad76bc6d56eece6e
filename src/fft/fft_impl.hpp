// SPDX-License-Identifier: Apache-2.0
#pragma once
// The object behind the class form FFT and the function forms' cached plans: the layout decision, the operand, the
// lifecycle and the stream contract (PhaseOrder) of one planned transform. How it runs is its route's business
// (fft_route.hpp), chosen once at construction.

#include <memory>
#include <optional>
#include <string>

#include "base/nvtx.hpp"
#include "cuplan/fft.hpp"
#include "fft/fft_route.hpp"
#include "fft/planner.hpp"
#include "plan/cache/operand_signature.hpp"
#include "plan/cache/plan_cache.hpp"
#include "plan/operation/planned_operation.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {

class FftImpl final : public PlannedOperation {
 public:
  /// `out_hint`: a user output the plan should write into directly (its strides become the result layout).
  FftImpl(TensorRef operand, const FFTOptions& options, const std::optional<TensorView>& out_hint = {});
  ~FftImpl() override;

  CUPLAN_PLANNED_OPERATION_PHASES(FFTExecuteOptions);
  /// Runs a call already known to be valid: the object is planned and has an operand, `direction` fits the type
  /// and `out` (if any) has the planned result shape, dtype, strides, memory space and alignment (the function
  /// forms: the plan key holds all of them).
  Tensor execute_validated(Direction direction, const std::optional<StreamRef>& stream, const EventList& after,
                           const TensorRef* out, bool release_workspace);
  /// PlannedOperation's, after the room check of an in-place R2C/C2R (the plan key does not hold the owner's size).
  void adopt_operand(TensorRef&& operand);
  /// PlannedOperation's, in an NVTX range of its own.
  void release_operand();
  /// New user data pointers of the callbacks (an execute's override, or a function-form call's options on a plan
  /// cache hit); StateError for a callback the object was planned without.
  void set_callback_data(const std::optional<void*>& prolog, const std::optional<void*>& epilog, const char* method);

  const LayoutDecision& decision() const noexcept { return decision_; }
  std::size_t workspace_size() const noexcept;
  /// What workspace_size() reports once planned, without planning (no work area is allocated).
  std::size_t estimate_workspace_size() const;
  std::string describe() const override;
  std::string error_context() const override;

 private:
  OperationRoute& memory_route() const noexcept override { return *route_; }
  /// In-place R2C/C2R on an owning Tensor: its memory must hold the result's span (padded real rows).
  void check_inplace_room(const TensorRef& operand, const char* method) const;
  double scale_for(Direction direction) const noexcept {
    return direction == Direction::forward ? forward_scale_ : inverse_scale_;
  }
  std::string callbacks_description() const;  // ", prolog 'f', epilog 'g'" or empty

  LayoutDecision decision_;
  /// The phases with an NVTX range of their own, and the range's name for this object (cached: see NvtxNames).
  enum NvtxPhase { nvtx_plan, nvtx_execute, nvtx_reset, nvtx_release, nvtx_free, nvtx_phases };
  NvtxNames<nvtx_phases> nvtx_;
  const char* nvtx_name(NvtxPhase phase, const char* range) noexcept;
  Direction default_direction_ = Direction::forward;
  bool inplace_ = false;
  double forward_scale_ = 1.0;
  double inverse_scale_ = 1.0;
  Normalization normalization_ = Normalization::none;
  OutputWalk walk_;
  // Prolog and epilog (null without either): checked at construction, compiled and linked by the route's plan.
  std::unique_ptr<CallbackSet> callbacks_;
  std::unique_ptr<FftRoute> route_;  // device, staged or CPU: how this transform runs
};

}  // namespace cuplan::detail
