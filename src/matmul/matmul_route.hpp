// SPDX-License-Identifier: Apache-2.0
#pragma once
// The execution route of a Matmul (docs/dev/architecture.md, "Routes"): one class per way a planned product runs,
// chosen once when the Matmul is made; no route derives from another. A route owns its path's plan, autotune,
// execute, release and workspace, and opens its phases by the object's stream rule (plan/phase.hpp). MatmulImpl
// keeps the lifecycle, the operands, the last outputs and the phases' order, and never asks which route it holds.

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuplan/matmul.hpp"
#include "matmul/operand_slots.hpp"
#include "matmul/planner.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {

/// What a route reads of its Matmul. MatmulImpl owns all of it and the route: the options (alpha and beta as last
/// set), the planned problem and the current operands, read at each phase.
struct MatmulRouteContext {
  const char* who;
  const MatmulOptions& options;
  const mm::Problem& problem;
  const mm::OperandSlots& operands;
  const ExecutionTarget& target;
  PhaseOrder& order;
  PhaseStreams& streams;
};

/// What a route asks of the planned problem and of D, fixed when the route is made.
struct MatmulRouteTraits {
  mm::RouteRequest request;  ///< what the planning must know of the backend (the aux layout)
  int result_device = -1;    ///< where D lives (an `out` must be there too)
  /// The alignment D's memory needs (0: its element's own): the device route's algorithms are chosen for 16 bytes.
  std::uint32_t result_alignment = 0;
};

/// What one execute produced: D, and the epilog's outputs (undefined when the epilog has none).
struct MatmulResult {
  Tensor d, aux, bias_gradient;
};

/// How the route names itself: describe() and a LibraryError's context.
struct MatmulRouteDescription {
  std::string epilog_note;  ///< " (bias gradient by a separate kernel)" or empty
  std::string execution;    ///< "CUDA execution on cuda:0", "CPU execution"
  std::string algorithm;    ///< "cuBLASLt <algorithm>", "OpenBLAS gemm per batch entry"
  std::string location;     ///< "cuda:0 (cuBLASLt)", "cpu (OpenBLAS)"
};

class MatmulRoute {
 public:
  virtual ~MatmulRoute() = default;
  MatmulRoute(const MatmulRoute&) = delete;
  MatmulRoute& operator=(const MatmulRoute&) = delete;

  virtual MatmulRouteTraits traits() const noexcept = 0;
  /// The newly planned problem as this route runs it (dense copies of staged operands, C copied into D);
  /// NotSupported when the route cannot run it.
  virtual mm::Problem adapt(mm::Problem problem) = 0;
  /// The plan phase, after `after` (MatmulImpl picks the events: the first plan's default is MatmulOptions::after).
  virtual void plan(const MatmulPlanOptions& options, const EventList& after) = 0;
  virtual std::vector<AlgorithmInfo> algorithms() const = 0;
  virtual void autotune(const AutotuneOptions& options) = 0;
  /// Runs a validated execute (the object is planned and has its operands; `out` matches the planned D).
  virtual MatmulResult execute(const MatmulExecuteOptions& options) = 0;
  /// New alpha / beta (MatmulImpl's options already hold them; default: the route reads them there per call).
  virtual void scalars_changed(std::complex<double> /*alpha*/, std::complex<double> /*beta*/) {}
  /// reset_operand(s)' phase: new operands may be written by work on the stream (by the object's rule), ordered
  /// after the object's last phase where a later execute relies on that order (default: nothing to order, every
  /// execute returns when D is written).
  virtual void order_new_operands(const std::optional<StreamRef>& /*stream*/, const char* /*method*/) {}
  /// The operands changed: uses recorded for the old ones no longer cover them (default: the route records none).
  virtual void operands_changed() noexcept {}
  /// Plans, workspace and buffers go.
  virtual void free() noexcept = 0;
  /// The planned algorithm's workspace bytes (default: none, the CPU).
  virtual std::size_t workspace_size() const noexcept { return 0; }
  /// Memory the route holds between calls by itself (an owned work area, staging buffers), for the plan cache.
  virtual std::size_t held_bytes() const noexcept { return 0; }
  /// Releases what held_bytes() counts (stream-ordered); the next execute allocates again.
  virtual void release_idle_memory() noexcept {}
  virtual MatmulRouteDescription description() const = 0;

 protected:
  explicit MatmulRoute(const MatmulRouteContext& context) : context_(context) {}

  MatmulRouteContext context_;
};

/// The route of a Matmul on `target` (the one place that tells the routes apart).
std::unique_ptr<MatmulRoute> make_matmul_route(const MatmulRouteContext& context);

}  // namespace cuplan::detail
