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
#include "plan/stateful.hpp"
#include "r2r/planner.hpp"

namespace cuplan::detail {

/// What a route reads of its object (owned by RealTransformImpl, final once its constructor returns).
struct R2RRouteContext {
  const R2RDecision& decision;
  const ExecutionTarget& target;
  PhaseOrder& order;
  PhaseStreams& streams;
};

/// One execute, validated by RealTransformImpl.
struct R2RCall {
  Direction direction = Direction::forward;
  const std::optional<StreamRef>& stream;
  const EventList& after;
  const TensorRef* out = nullptr;  ///< the caller's out (nullptr: a new result, or the operand in place)
  bool release_workspace = false;
  const TensorRef& operand;
};

class R2RRoute {
 public:
  virtual ~R2RRoute() = default;
  R2RRoute(const R2RRoute&) = delete;
  R2RRoute& operator=(const R2RRoute&) = delete;

  virtual void plan(const std::optional<StreamRef>& stream, EventList& pending_after) = 0;
  virtual Tensor execute(const R2RCall& call) = 0;
  /// reset_operand's phase (default: nothing to order).
  virtual void order_new_operand(const std::optional<StreamRef>& /*stream*/) {}
  virtual void free() noexcept = 0;
  virtual std::size_t workspace_size() const noexcept { return 0; }
  /// "cuFFT on cuda:0: axis 1 even/odd reorder + R2C(n) + twiddle", "FFTW r2r (estimate planning)".
  virtual std::string execution() const = 0;
  /// "cuda:0 (cuFFT)", "cpu (FFTW)".
  virtual std::string location() const = 0;

 protected:
  explicit R2RRoute(const R2RRouteContext& context) : context_(context) {}
  /// The caller's out, or the operand in place; nullopt when the route makes a new result.
  std::optional<Tensor> given_result(const R2RCall& call) const;

  R2RRouteContext context_;
};

std::unique_ptr<R2RRoute> make_r2r_route(const R2RRouteContext& context, const RealTransformOptions& options,
                                         const TensorView& operand);

}  // namespace cuplan::detail
