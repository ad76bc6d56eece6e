// SPDX-License-Identifier: Apache-2.0
#pragma once
// The device route of a Matmul: CUDA execution through one cuBLASLt plan (LtPlan), with the bias-gradient kernel
// where cuBLASLt has no fused algorithm, autotuning, and graph replay of repeated executes. The device execute path
// is kept to one cublasLtMatmul call (or one graph launch replaying it) plus integer compares when nothing changed.
// It also runs host operands unsplit (dense device copies in, D copied back), for the staged route's products that
// cannot be split.

#include <array>
#include <memory>
#include <string>

#include "matmul/cublaslt/cublaslt_backend.hpp"
#include "matmul/matmul_route.hpp"
#include "plan/graph_replay.hpp"
#include "runtime/recorded_stream.hpp"

namespace cuplan::detail {

class DeviceMatmulRoute : public MatmulRoute {
 public:
  explicit DeviceMatmulRoute(const MatmulRouteContext& context);
  ~DeviceMatmulRoute() override;

  void check_supported(const mm::Problem& problem) const override;
  void adapt_problem(mm::Problem& problem) override;
  MatmulResultPlacement result_placement(DType dtype) const noexcept override;
  void plan(const MatmulPlanOptions& options, bool& construct_after_pending) override;
  std::vector<AlgorithmInfo> algorithms() const override;
  void autotune(const AutotuneOptions& options) override;
  Tensor execute(const MatmulExecuteOptions& options) override;
  void scalars_changed(std::complex<double> alpha, std::complex<double> beta) override;
  void order_new_operands(const std::optional<StreamRef>& stream, const char* method) override;
  void operands_changed() noexcept override;
  void free() noexcept override;
  std::string epilog_note() const override;
  std::string execution() const override;
  std::string algorithm() const override;
  std::string location() const override;

 protected:
  /// Device bytes of operands, result and workspace that one unsplit product of host operands holds.
  std::size_t unsplit_bytes() const;

  bool c_in_d_ = false;  ///< C is copied into D, which cuBLASLt then reads as C

 private:
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
  /// Key of a saved autotune choice: the problem and the heuristic's candidates (mm::tuning_context names the
  /// device and the cuBLASLt version).
  std::string tuning_problem() const;

  std::unique_ptr<mm::LtPlan> lt_;
  bool bias_gradient_kernel_ = false;  ///< bgrada / bgradb computed by launch_bias_gradient, not the epilog
  RecordedStream recorded_stream_;     ///< operands' uses already recorded on this stream
  std::array<DeviceBuffer, mm::slot_count> staging_;
  DeviceBuffer workspace_, result_staging_, aux_staging_, bias_gradient_staging_, scales_, flush_;
  GraphReplay replay_;  ///< repeated identical executes replayed as one graph launch
};

}  // namespace cuplan::detail
