// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cuBLASLt product of a Matmul on one device (LtProduct): the LtPlan, its workspace, graph replay of repeated
// executes, the bias-gradient kernel where cuBLASLt has no fused algorithm, and autotuning. The device route holds
// one for device operands; the staged route holds one for host operands it cannot split, which it is made for
// (`host_operands`): every operand then goes to a dense device copy and D and the epilog outputs come back to host
// memory. The device execute path is kept to one cublasLtMatmul call (or one graph launch replaying it) plus integer
// compares when nothing changed.

#include <array>
#include <complex>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "matmul/cublaslt/cublaslt_backend.hpp"
#include "matmul/matmul_route.hpp"
#include "plan/graph_replay.hpp"
#include "plan/work_area.hpp"
#include "runtime/device_buffer.hpp"
#include "runtime/recorded_stream.hpp"

namespace cuplan::detail {

class LtProduct {
 public:
  LtProduct(const MatmulRouteContext& context, bool host_operands);
  ~LtProduct();
  LtProduct(const LtProduct&) = delete;
  LtProduct& operator=(const LtProduct&) = delete;

  /// The plan phase (the route's plan, after `after`).
  void plan(const MatmulPlanOptions& options, const EventList& after);
  std::vector<AlgorithmInfo> algorithms() const;
  void autotune(const AutotuneOptions& options);
  MatmulResult execute(const MatmulExecuteOptions& options);
  void scalars_changed(std::complex<double> alpha, std::complex<double> beta);
  void operands_changed() noexcept;
  void free() noexcept;
  /// The planned algorithm's workspace bytes (0 before plan()).
  std::size_t workspace_size() const noexcept;
  /// Memory held between calls by the product itself (an owned work area, staging buffers).
  std::size_t held_bytes() const noexcept;
  /// Releases what held_bytes() counts (stream-ordered); the next execute allocates again.
  void release_idle_memory() noexcept;
  /// How a CUDA route names itself: "CUDA execution on cuda:0", "cuBLASLt <algorithm>", "cuda:0 (cuBLASLt)", and
  /// " (bias gradient by a separate kernel)" for the fallback.
  MatmulRouteDescription description() const;
  /// Device bytes of operands, result and workspace that one product of host operands holds (planned first).
  std::size_t host_operands_bytes() const;

 private:
  /// C is copied into D, which cuBLASLt then reads as C: host operands, or C that cuBLASLt cannot read directly.
  bool c_in_d() const noexcept;
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

  MatmulRouteContext context_;
  bool host_operands_;  ///< operands in host memory: staged to the device, outputs copied back
  std::unique_ptr<mm::LtPlan> lt_;
  bool bias_gradient_kernel_ = false;  ///< bgrada / bgradb computed by launch_bias_gradient, not the epilog
  RecordedStream recorded_stream_;     ///< operands' uses already recorded on this stream
  std::array<DeviceBuffer, mm::slot_count> staging_;
  WorkArea work_area_;  ///< owned, the stream's shared area, or the caller's (MatmulOptions::work_area)
  DeviceBuffer result_staging_, aux_staging_, bias_gradient_staging_, scales_, flush_;
  GraphReplay replay_;  ///< repeated identical executes replayed as one graph launch
};

}  // namespace cuplan::detail
