// SPDX-License-Identifier: Apache-2.0
#pragma once
// The object behind Matmul and behind every cached plan of the function forms.

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "base/nvtx.hpp"
#include "cuplan/matmul.hpp"
#include "matmul/cublaslt/cublaslt_backend.hpp"
#include "matmul/matmul_staged.hpp"
#include "matmul/planner.hpp"
#include "plan/cache/operand_signature.hpp"
#include "plan/cache/plan_cache.hpp"
#include "plan/graph_replay.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {
namespace mm {

/// A device view of memory at `data` of `shape` with `strides`; dense row-major for dense_view.
inline TensorView device_view(void* data, DType dtype, const Shape& shape, const Strides& strides, int device) {
  return TensorView(data, dtype, shape, strides, Device::cuda(device), MemorySpace::device);
}
inline TensorView dense_view(void* data, DType dtype, const Shape& shape, int device) {
  return device_view(data, dtype, shape, row_major_strides(shape), device);
}

inline std::size_t bytes_of(const Shape& shape, DType dtype) {
  return static_cast<std::size_t>(checked_numel(shape)) * dtype.size();
}

}  // namespace mm

class MatmulImpl : public CachedPlan {
 public:
  MatmulImpl(TensorRef a, TensorRef b, MatmulOptions options, const char* who);
  ~MatmulImpl() override;

  void plan(const MatmulPlanOptions& options);
  std::vector<AlgorithmInfo> algorithms() const;
  void autotune(const AutotuneOptions& options);
  /// Key of a saved autotune choice: the problem and the heuristic's candidates (mm::tuning_context names the
  /// device and the cuBLASLt version).
  std::string tuning_problem() const;
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

  const Shape& result_shape() const noexcept { return problem_.result_shape; }
  DType result_dtype() const noexcept { return problem_.result_dtype; }
  const Strides& result_strides() const noexcept { return problem_.result_strides; }
  std::string describe() const;
  /// The object as a LibraryError's context names it: product size, dtypes, epilog, shape of D, device, backend.
  std::string error_context() const;
  void require_alive(const char* method) const { state_.require_alive(method); }

  const Tensor& aux() const noexcept { return aux_out_; }
  const mm::Problem& problem() const noexcept { return problem_; }
  const Tensor& bias_gradient() const noexcept { return bias_gradient_out_; }

 private:
  struct Operand {
    std::optional<TensorRef> ref;
    std::optional<OperandSignature> planned;  ///< what a new operand must match (unset: not part of the product)
  };
  enum Slot { slot_a, slot_b, slot_c, slot_bias, slot_aux, slot_count };

  /// reset_operand(s): checks every given operand against its planned signature before replacing any.
  void replace_operands(const MatmulOperands& operands, std::optional<StreamRef> stream, const char* method);
  void validate_and_plan_problem();
  /// Builds lt_ and asks for candidates. bgrada / bgradb products cuBLASLt has no fused algorithm for fall back to
  /// the plain product plus a separate bias-gradient reduction (bias_gradient_kernel_).
  void plan_cuda_product(const MatmulPreferences& preferences, const mm::LtPointers& pointers);
  /// The separate bias-gradient reduction of the fallback, on `stream` after the product.
  void launch_bias_gradient(const mm::LtPointers& p, StreamRef stream) const;
  /// What one cuBLASLt run depends on besides the plan's descriptors: the graph replay key.
  ReplayKey replay_key(const mm::LtPointers& p, const void* workspace, std::size_t workspace_bytes) const;
  /// Operand uses are recorded once per stream (and again after the operands change).
  void record_operand_uses(StreamRef stream);
  /// Device pointers for one product on `stream`: staging copies of host or uncopyable operands, C copied into
  /// `d` when it cannot be read directly. `d`, `aux` and `bias_gradient` are the outputs.
  mm::LtPointers stage(StreamRef stream, void* d, void* aux, void* bias_gradient);
  Tensor execute_cpu(const MatmulExecuteOptions& options);
  Tensor execute_cuda(const MatmulExecuteOptions& options);
  /// What an `out` must match: D's dtype, shape and planned strides where D would live, 16-byte aligned on devices.
  void plan_output_signature();
  void require_ready(const char* method) const;
  /// The phases with an NVTX range of their own, and the range's name for this object (cached: see NvtxNames).
  enum NvtxPhase { nvtx_plan, nvtx_autotune, nvtx_execute, nvtx_reset, nvtx_release, nvtx_free, nvtx_phases };
  const char* nvtx_name(NvtxPhase phase, const char* range) noexcept;

  const char* who_;
  NvtxNames<nvtx_phases> nvtx_;
  MatmulOptions options_;
  std::array<Operand, slot_count> operands_;
  std::array<TensorView, slot_count> planned_views_;
  ExecutionTarget target_;
  mm::Problem problem_;
  ObjectState state_;
  PhaseOrder order_;
  PhaseStreams streams_;  ///< phases without a stream run on MatmulOptions::stream, else the current stream
  std::unique_ptr<mm::LtPlan> lt_;
  bool bias_gradient_kernel_ = false;  ///< bgrada / bgradb computed by launch_bias_gradient, not the epilog
  RecordedStream recorded_stream_;     ///< operands' uses already recorded on this stream
  OperandSignature out_signature_;
  std::string out_strides_note_;         ///< why D has its planned orientation, for a strides mismatch of `out`
  bool construct_after_pending_ = true;  ///< MatmulOptions::after not yet waited for (the first plan does)
  bool c_in_d_ = false;
  std::array<DeviceBuffer, slot_count> staging_;
  DeviceBuffer workspace_, result_staging_, aux_staging_, bias_gradient_staging_, scales_, flush_;
  Tensor aux_out_, bias_gradient_out_;
  GraphReplay replay_;                    ///< repeated identical executes replayed as one graph launch
  std::unique_ptr<StagedMatmul> staged_;  ///< host operands through the staging engine (made at the first execute)
  Tensor execute_staged(const MatmulExecuteOptions& options, const StagedOperands& operands);
  StagedOperands staged_operands() const;
  /// Host operands that cannot be split (`reason`) run unsplit: NotSupported naming the reason and the minimum
  /// limit when that needs more than an explicit device_memory_limit.
  void require_unsplit_fits(const char* reason) const;
};

}  // namespace cuplan::detail
