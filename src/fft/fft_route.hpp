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
#include "plan/stateful.hpp"

namespace cuplan::detail {

/// What a route reads of its FFT. FftImpl owns all of it and the route; the decision and the walk are final once
/// the FFT's constructor returns (the route reads them from plan() on).
struct FftRouteContext {
  const LayoutDecision& decision;
  const OutputWalk& walk;
  const ExecutionTarget& target;
  PhaseOrder& order;
  PhaseStreams& streams;
  std::unique_ptr<CallbackSet>& callbacks;  ///< prolog and epilog (null without either), made with the decision
  bool inplace = false;
};

/// One execute, validated by FftImpl.
struct FftCall {
  Direction direction = Direction::forward;
  double scale = 1.0;  ///< multiplies the result (1: none)
  const std::optional<StreamRef>& stream;
  const EventList& after;
  const TensorRef* out = nullptr;  ///< the caller's out (nullptr: a new result, or the operand's memory in place)
  bool release_workspace = false;
  const TensorRef& operand;
};

class FftRoute {
 public:
  virtual ~FftRoute() = default;
  FftRoute(const FftRoute&) = delete;
  FftRoute& operator=(const FftRoute&) = delete;

  /// What the route asks of the layout decision: staging copies, whether a loop of calls is costly, aligned real
  /// calls.
  virtual void shape_request(LayoutRequest& request) const = 0;
  /// The alignment operand and result memory need on this route.
  virtual std::size_t required_alignment(DType dtype) const noexcept = 0;
  /// NotSupported when the route cannot run the decided transform (default: it runs every one).
  virtual void check_supported(const LayoutDecision& /*decision*/) const {}
  /// The plan phase on `stream`; a route that waits for `pending_after` (the constructor's events) clears it.
  virtual void plan(const std::optional<StreamRef>& stream, EventList& pending_after) = 0;
  virtual Tensor execute(const FftCall& call) = 0;
  /// reset_operand's phase: the stream (by the object's rule) runs after the object's last phase, where a later
  /// execute relies on that order (default: nothing to order, every execute returns when its result is written).
  virtual void order_new_operand(const std::optional<StreamRef>& /*stream*/) {}
  /// Plans, workspace and buffers go; waits for the object's last phase first where plans may still be in use.
  virtual void free() noexcept = 0;
  /// Workspace bytes the route holds for the object (default: none of its own).
  virtual std::size_t workspace_size() const noexcept { return 0; }
  /// What workspace_size() will report once planned, without planning (estimate_workspace_size; default: none).
  virtual std::size_t estimate_workspace_size() const { return 0; }
  /// Memory the route holds between calls by itself (an owned work area, staging buffers), for the plan cache.
  virtual std::size_t held_bytes() const noexcept { return 0; }
  /// Releases what held_bytes() counts (stream-ordered); the next execute allocates again.
  virtual void release_idle_memory() noexcept {}
  /// Library calls one execute makes (describe()).
  virtual std::size_t calls_per_execute() const noexcept = 0;
  /// "cuFFT execution on cuda:0", "FFTW execution (estimate planning)" (describe()).
  virtual std::string execution() const = 0;
  /// "cuda:0 (cuFFT)", "cpu (FFTW)" (a LibraryError's context).
  virtual std::string location() const = 0;

 protected:
  explicit FftRoute(const FftRouteContext& context) : context_(context) {}
  /// The caller's out, or for an in-place transform the operand's memory seen as the result; nullopt when the
  /// route makes a new result.
  std::optional<Tensor> given_result(const FftCall& call) const;

  FftRouteContext context_;
};

/// The route of an FFT on `target` for `operand` (the one place that tells the routes apart).
std::unique_ptr<FftRoute> make_fft_route(const FftRouteContext& context, const FFTOptions& options,
                                         const TensorView& operand);

}  // namespace cuplan::detail
