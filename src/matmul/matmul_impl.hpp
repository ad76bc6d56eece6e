// SPDX-License-Identifier: Apache-2.0
#pragma once
// The object behind Matmul and behind every cached plan of the function forms: the planned problem, the operands,
// the lifecycle and the stream contract (PhaseOrder) of one product. How it runs is its route's business
// (matmul_route.hpp), chosen once at construction.

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "base/nvtx.hpp"
#include "cuplan/matmul.hpp"
#include "matmul/matmul_route.hpp"
#include "matmul/planner.hpp"
#include "plan/cache/operand_signature.hpp"
#include "plan/cache/plan_cache.hpp"
#include "plan/cache/route_memory.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {

class MatmulImpl : public RouteMemoryPlan<MatmulImpl> {
 public:
  MatmulImpl(TensorRef a, TensorRef b, MatmulOptions options, const char* who);
  ~MatmulImpl() override;

  void plan(const MatmulPlanOptions& options);
  std::vector<AlgorithmInfo> algorithms() const;
  void autotune(const AutotuneOptions& options);
  Tensor execute(const MatmulExecuteOptions& options);
  void reset_operand(MatmulOperand which, TensorRef operand, std::optional<StreamRef> stream);
  void reset_operands(const MatmulOperands& operands, std::optional<StreamRef> stream);
  /// The function form's cache hit: takes the operands without the checks of reset_operands, because the plan key
  /// already fixed every operand's layout, memory and alignment class (and the call's execute orders its stream).
  void adopt_operands(MatmulOperands&& operands) noexcept;
  void release_operand() noexcept;
  void free() noexcept;
  /// alpha / beta of later executes (the function form passes them per call).
  void set_scalars(std::complex<double> alpha, std::complex<double> beta);

  const ExecutionTarget& target() const noexcept { return target_; }
  const Shape& result_shape() const noexcept { return problem_.result_shape; }
  DType result_dtype() const noexcept { return problem_.result_dtype; }
  const Strides& result_strides() const noexcept { return problem_.result_strides; }
  std::string describe() const;
  /// The planned algorithm's workspace bytes (0 before plan() and on the CPU).
  std::size_t workspace_size() const noexcept;
  /// The object as a LibraryError's context names it: product size, dtypes, epilog, shape of D, device, backend.
  std::string error_context() const;
  void require_alive(const char* method) const { state_.require_alive(method); }
  bool freed() const noexcept { return state_.freed(); }

  /// The epilog outputs of the last execute (undefined when the epilog has none).
  const Tensor& aux() const noexcept { return last_.aux; }
  const mm::Problem& problem() const noexcept { return problem_; }
  const Tensor& bias_gradient() const noexcept { return last_.bias_gradient; }

 private:
  friend class RouteMemoryPlan<MatmulImpl>;  // the plan cache's view of the route's memory
  MatmulRoute& memory_route() const noexcept { return *route_; }
  /// reset_operand(s): checks every given operand against its planned signature before replacing any.
  void replace_operands(const MatmulOperands& operands, std::optional<StreamRef> stream, const char* method);
  void validate_and_plan_problem();
  /// What an `out` must match: D's dtype, shape and planned strides where D would live, aligned as the route needs.
  void plan_output_signature();
  void require_ready(const char* method) const;
  /// The phases with an NVTX range of their own, and the range's name for this object (cached: see NvtxNames).
  enum NvtxPhase { nvtx_plan, nvtx_autotune, nvtx_execute, nvtx_reset, nvtx_release, nvtx_free, nvtx_phases };
  const char* nvtx_name(NvtxPhase phase, const char* range) noexcept;

  const char* who_;
  NvtxNames<nvtx_phases> nvtx_;
  MatmulOptions options_;
  mm::OperandSlots operands_;
  std::array<TensorView, mm::slot_count> planned_views_;
  ExecutionTarget target_;
  mm::Problem problem_;
  ObjectState state_;
  PhaseOrder order_;
  PhaseStreams streams_;  ///< phases without a stream run on MatmulOptions::stream, else the current stream
  OperandSignature out_signature_;
  std::string out_strides_note_;         ///< why D has its planned orientation, for a strides mismatch of `out`
  bool construct_after_pending_ = true;  ///< MatmulOptions::after not yet waited for (the first plan does)
  MatmulResult last_;                    ///< the last execute's epilog outputs (its D is the caller's)
  std::unique_ptr<MatmulRoute> route_;   ///< device, staged or CPU: how this product runs
};

}  // namespace cuplan::detail
