// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the route interface of every operation (FftRoute, R2RRoute, ConvolutionRunner) declares alike: a route is
// one way a planned operation runs, chosen once when the object is made, and owned by its Impl; it is not copied.
// Each operation's interface adds its own plan and execute (their calls differ) and what it asks of its planner.

#include <cstddef>
#include <optional>
#include <string>

#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "plan/execution_target.hpp"
#include "plan/phase.hpp"

namespace cuplan::detail {

/// What every route reads of its object besides the layout its operation planned: where it runs, and the object's
/// phase order and streams (its PlannedOperation owns them, and the route). An operation's route context adds its
/// layout.
struct RouteContext {
  const ExecutionTarget& target;
  PhaseOrder& order;
  PhaseStreams& streams;

  /// reset_operand's phase on a route whose executes rely on the object's phase order (the CUDA routes of device
  /// operands): `stream` (by the object's rule) runs after the object's last phase.
  void order_after_last_phase(const std::optional<StreamRef>& stream) const {
    Phase phase(order, streams, target, stream, EventList{}, "reset_operand");
    phase.close();
  }
};

/// One execute, validated by the Impl: the phase's stream and events, the caller's out (nullptr: a new result, or
/// the operand's memory in place), whether the workspace goes at the end of the call, and the operand. An
/// operation's call adds what it alone needs (a direction, a scale).
struct OperationCall {
  const std::optional<StreamRef>& stream;
  const EventList& after;
  const TensorRef* out = nullptr;
  bool release_workspace = false;
  const TensorRef& operand;
};

class OperationRoute {
 public:
  virtual ~OperationRoute() = default;
  OperationRoute(const OperationRoute&) = delete;
  OperationRoute& operator=(const OperationRoute&) = delete;

  /// reset_operand's phase: the stream (by the object's rule) runs after the object's last phase, where a later
  /// execute relies on that order (default: nothing to order, every execute returns when its result is written).
  virtual void order_new_operand(const std::optional<StreamRef>& /*stream*/) {}
  /// Plans, workspace and buffers go; waits for the object's last phase first where they may still be in use.
  virtual void free() noexcept = 0;
  /// Workspace bytes the route holds for the object (default: none of its own).
  virtual std::size_t workspace_size() const noexcept { return 0; }
  /// What workspace_size() will report once planned, without planning (estimate_workspace_size; default: none).
  virtual std::size_t estimate_workspace_size() const { return 0; }
  /// Memory the route holds between calls by itself (an owned work area, staging buffers), for the plan cache.
  virtual std::size_t held_bytes() const noexcept { return 0; }
  /// Releases what held_bytes() counts (stream-ordered); the next execute allocates again.
  virtual void release_idle_memory() noexcept {}
  /// How it runs, for describe(): "cuFFT execution on cuda:0", "FFTW execution (estimate planning)".
  virtual std::string execution() const = 0;
  /// Where it runs, for a LibraryError's context: "cuda:0 (cuFFT)", "cpu (FFTW)".
  virtual std::string location() const = 0;

 protected:
  OperationRoute() = default;
};

/// The route interface of a transform that plans on a stream and executes `Call`s (FFT, RealTransform), over the
/// `Context` it reads of its object.
template <class Context, class Call>
class TransformRoute : public OperationRoute {
 public:
  /// The plan phase on `stream`; a route that waits for `pending_after` (the constructor's events) clears it.
  virtual void plan(const std::optional<StreamRef>& stream, EventList& pending_after) = 0;
  virtual Tensor execute(const Call& call) = 0;

 protected:
  explicit TransformRoute(const Context& context) : context_(context) {}
  /// The caller's out, or for an in-place transform the operand's memory seen as the result; nullopt when the route
  /// makes a new result. Each operation defines it (an explicit specialization, declared in its route header).
  std::optional<Tensor> given_result(const Call& call) const;

  Context context_;
};

}  // namespace cuplan::detail

/// Declares, inside a route class `Route`, what every route class of one operation declares alike: its constructor
/// (the operation's route `Context`, its `Options` and the operand), its destructor, and its plan, execute (of
/// `Call`) and free phases. The class then declares the overrides of its own.
#define CUPLAN_ROUTE_CLASS_MEMBERS(Route, Context, Options, Call)                       \
  Route(const Context& context, const Options& options, const TensorView& operand);     \
  ~Route() override;                                                                    \
  void plan(const std::optional<StreamRef>& stream, EventList& pending_after) override; \
  Tensor execute(const Call& call) override;                                            \
  void free() noexcept override

/// Declares, inside a route class over device operands, the overrides such a route adds: the ordering of a new
/// operand after the object's last phase (RouteContext::order_after_last_phase) and the workspace it holds.
#define CUPLAN_DEVICE_ROUTE_MEMBERS                                        \
  void order_new_operand(const std::optional<StreamRef>& stream) override; \
  std::size_t workspace_size() const noexcept override

/// Declares, inside a route class, its descriptions: how it runs (describe()) and where (a LibraryError's context).
#define CUPLAN_ROUTE_DESCRIPTIONS         \
  std::string execution() const override; \
  std::string location() const override
