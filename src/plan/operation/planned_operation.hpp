// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the Impl of every one-operand operation (FFT, RealTransform, Convolution) keeps the same way: its plan-cache
// entry (RouteMemoryPlan, the route's memory), the lifecycle, the execution target, the phase order and streams, the
// operand with the signature a new one must match, the planned signature of an execute's `out`, the construction's
// `after` events; the plan phase's steps, and the checks of reset_operand and execute, with messages naming the
// operation. The operation's route is built over
// route_context() and called with route_call().

#include <optional>
#include <string>

#include "base/error_context.hpp"
#include "base/overlap.hpp"
#include "cuplan/tensor.hpp"
#include "plan/cache/operand_signature.hpp"
#include "plan/cache/route_memory.hpp"
#include "plan/execution_target.hpp"
#include "plan/object_state.hpp"
#include "plan/operation/operation_route.hpp"
#include "plan/phase.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan::detail {

class PlannedOperation : public RouteMemoryPlan<PlannedOperation> {
 public:
  /// A plan-cache hit's operand: no phase and no check (the plan key holds its signature).
  void adopt_operand(TensorRef&& operand) noexcept;
  /// Drops the reference to the operand (an owning Tensor is then freed after its recorded stream uses).
  void release_operand();
  void require_alive(const char* method) const { state_.require_alive(method); }
  bool freed() const noexcept { return state_.freed(); }
  const OperandSignature& out_signature() const noexcept { return out_signature_; }
  const ExecutionTarget& target() const noexcept { return target_; }
  /// The object in one line (its log line when planned).
  virtual std::string describe() const = 0;
  /// The object as a LibraryError's context names it: operation, dtypes, shapes, axes, device and backend.
  virtual std::string error_context() const = 0;

 protected:
  /// `name`: the operation as messages name it ("FFT"), a string literal.
  /// `stream` and `after`: the options' construction stream and events.
  PlannedOperation(const char* name, TensorRef operand, const std::optional<StreamRef>& stream, EventList after)
      : name_(name),
        state_(name),
        streams_(stream, name),
        operand_(std::move(operand)),
        pending_after_(std::move(after)) {
    require_defined(operand_, name, "operand");
  }
  ~PlannedOperation() override = default;

  /// The route whose memory the object holds between calls (held_bytes, release_idle_memory).
  virtual OperationRoute& memory_route() const noexcept = 0;

  /// execute's checks of `out` (null when none): not with an in-place transform, writable, and of the planned
  /// signature. An out in the planned layout cannot overlap itself (checked when planned), so the repeated call pays
  /// one comparison; any other gets the overlap error first, else the mismatch. `method`: "FFT.execute".
  const TensorRef* checked_out(const std::optional<TensorRef>& out, bool inplace, const char* method) const {
    return out ? &checked_given_out(*out, inplace, method) : nullptr;
  }

  /// What the route reads of this object: its target, phase order and streams.
  RouteContext route_context() noexcept { return {target_, order_, streams_}; }
  /// An execute's call of the route on the held operand, once `out` (if any) is checked against it: where out lies
  /// relative to this call's operand is part of no plan key.
  OperationCall route_call(const std::optional<StreamRef>& stream, const EventList& after, const TensorRef* out,
                           bool release_workspace) const;

  /// reset_operand: alive, `operand` of the planned signature (and writable when `inplace_method`, the message's
  /// "FFT.reset_operand (inplace)", is given); `order` (the route's ordering of a new operand after the last phase,
  /// and any check of the operation's own) runs last, before the operand is replaced.
  template <class Order>
  void replace_operand(TensorRef&& operand, const char* inplace_method, Order&& order) {
    state_.require_alive("reset_operand");
    require_defined(operand, name_, "reset_operand", "operand");
    operand_signature_.require_match(operand.view(), name_, "reset_operand", "operand");
    if (inplace_method != nullptr) check_writable(operand.view(), "operand", inplace_method);
    order();
    operand_ = std::move(operand);
    state_.set_operand(true);
  }

  /// The plan phase: the object is alive, `plan_route(pending_after)` runs the route's plan (which clears the
  /// construction's `after` events once waited for), and the object is then planned and logged. A LibraryError from
  /// it names "<name>.plan" and error_context().
  template <class PlanRoute>
  void plan_phase(PlanRoute&& plan_route) try {
    state_.require_alive("plan");
    plan_route(pending_after_);
    mark_planned();
  } catch (const LibraryError& error) {
    rethrow_with_context(error, std::string(name_) + ".plan", [this] { return error_context(); });
  }

  /// What execute asks of the object first: planned (so alive) and holding an operand.
  void require_runnable(const char* method) const {
    state_.require_planned(method);
    state_.require_operand(method);
  }

  friend class RouteMemoryPlan<PlannedOperation>;  // the plan cache's view of the route's memory
  const char* name_;
  ObjectState state_;
  ExecutionTarget target_;  // set by the operation's constructor
  PhaseOrder order_;
  PhaseStreams streams_;
  TensorRef operand_;
  OperandSignature operand_signature_;  // what reset_operand's operands must match
  OperandSignature out_signature_;      // what an execute's `out` must match
  EventList pending_after_;             // the options' `after`, until a plan phase waits for them

 private:
  const TensorRef& checked_given_out(const TensorRef& out, bool inplace, const char* method) const;
  void mark_planned();
};

}  // namespace cuplan::detail

/// Declares, inside the Impl of a one-operand operation, the phases its public class forwards to: plan, execute (of
/// the public `ExecuteOptions`: validates the call, then runs it), reset_operand and free. Each Impl defines them on
/// PlannedOperation's steps (plan_phase, require_runnable and checked_out, replace_operand).
#define CUPLAN_PLANNED_OPERATION_PHASES(ExecuteOptions)                   \
  void plan(std::optional<StreamRef> stream);                             \
  Tensor execute(const ExecuteOptions& options);                          \
  void reset_operand(TensorRef operand, std::optional<StreamRef> stream); \
  void free() noexcept
