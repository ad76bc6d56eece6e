// SPDX-License-Identifier: Apache-2.0
#pragma once
// cuBLASLt execution of a planned product: descriptors made once at plan time, heuristic candidates, autotuning,
// and an execute path that is one cublasLtMatmul call plus pointer updates when operands changed. The CPU-only build
// (CUPLAN_HAS_CUDA 0) has no cuBLASLt: it keeps this interface without the descriptors, and cublaslt_no_device.cpp
// implements it.

#include <cuda_runtime_api.h>

#include "cuplan/config.hpp"
#if CUPLAN_HAS_CUDA
#include <cublasLt.h>
#endif

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cuplan/matmul.hpp"
#include "matmul/planner.hpp"

namespace cuplan::detail::mm {

#if CUPLAN_HAS_CUDA
/// The cuBLASLt handle of `device`, created once per device (thread-safe) and kept for the process.
cublasLtHandle_t lt_handle(int device);
#endif

/// Device pointers of one product; null where the problem has no such operand.
struct LtPointers {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  void* d = nullptr;
  const void* bias = nullptr;
  void* aux = nullptr;  ///< aux output, or the aux input of drelu/dgelu
  void* bias_gradient = nullptr;
  const void* scale_a = nullptr;  ///< fp8: device f32 scale factors
  const void* scale_b = nullptr;
};

/// Descriptors, scalars and candidate algorithms of one planned product, as cuBLASLt takes them (operands that need
/// a copy are described as their dense staging copies).
class LtPlan {
 public:
  /// Builds the descriptors. With `c_in_d` C was copied into D and the plan reads C from D's layout; otherwise C is
  /// read directly in its own layout. NotSupported for combinations cuBLASLt cannot express (with the reason).
  LtPlan(const Problem& problem, int device, std::complex<double> alpha, std::complex<double> beta, bool c_in_d,
         const char* who);
  ~LtPlan();
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;

  /// alpha and beta of the next runs (host scalars of the scale type; not part of the plan). True when they
  /// changed, so that a run with the same pointers now enqueues different work (graph replay invalidates).
  bool set_scalars(std::complex<double> alpha, std::complex<double> beta) noexcept;
  /// Sets the epilog pointers (bias, aux, bias gradient, fp8 scales) when they differ from the last ones.
  void bind(const LtPointers& p);
  /// Asks the heuristic for candidates; InvalidArgument when memory_limit is too small for every algorithm,
  /// NotSupported when cuBLASLt has none for this problem.
  void find_algorithms(const MatmulPreferences& preferences, std::size_t memory_limit, bool limit_from_user,
                       const LtPointers& pointers);
  std::vector<AlgorithmInfo> algorithms() const;
  std::size_t workspace_bytes() const noexcept;
  std::size_t max_workspace_bytes() const noexcept;
  /// Tells compute-sanitizer's initcheck that the product enqueued on `stream` wrote D at `d` (every byte of its
  /// dense layout): some cuBLASLt kernels store in a way the tool does not follow. Called after each execute, also
  /// a replayed one, since a replay into a newly allocated D must mark it too. Free without a tool attached.
  void mark_result_written(void* d, cudaStream_t stream) const noexcept;

  /// Enqueues the product with candidate `index` (default: the chosen one).
  void run(const LtPointers& p, cudaStream_t stream, void* workspace, std::size_t workspace_size,
           std::size_t index = 0) const;
  /// Times every candidate `iterations` times with CUDA events on `stream` (flushing L2 with `flush` of
  /// `flush_bytes` before each timed run when given, outside the timed region), keeps those that ran and reorders
  /// them by median time (autotune_order: the heuristic's first stays first unless another is measurably faster).
  /// Blocks until timing is done. The chosen algorithm may change: a replayed run must be invalidated. `progress`
  /// (may be empty) is called after each round; an exception from it leaves the candidates as they were.
  void autotune(const LtPointers& p, cudaStream_t stream, void* workspace, std::size_t workspace_size, int iterations,
                void* flush, std::size_t flush_bytes, const AutotuneProgressCallback& progress);
  /// The chosen candidate's configuration, "algo tile stages split-k scheme" (for the tuning store).
  std::string choice() const;
  /// The heuristic's candidate configurations in order: part of a saved choice's key, so a choice is only reused
  /// among the candidates it was made from.
  std::string candidate_signature() const;
  /// Moves the candidate whose configuration is `choice` first; false when none has it.
  bool apply_choice(const std::string& choice);

 private:
#if CUPLAN_HAS_CUDA
  void build(const Problem& problem, std::complex<double> alpha, std::complex<double> beta, bool c_in_d);
  void release() noexcept;

  int device_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;
  std::size_t d_bytes_ = 0;  ///< D as cuBLASLt writes it: dense (ld = rows, batch stride = M N)
  std::array<unsigned char, 16> alpha_{}, beta_{};
  cudaDataType_t scale_type_ = CUDA_R_32F;
  bool swapped_ = false;
  bool has_c_ = false;
  bool binds_bias_ = false;  ///< the epilog reads a bias or writes a bias gradient
  LtPointers bound_{};
  const void* bound_bias_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> candidates_;
  std::vector<float> measured_ms_;
  Epilog epilog_;
  const char* who_;
#endif
};

/// cuBLASLt runs enqueued by LtPlan::autotune() in this process, warm-up and timed (every one goes through the one
/// enqueue helper that counts). A test reads it to see that a loaded tuning skipped the timing.
long autotune_runs() noexcept;

/// The context a saved autotune choice is valid in: device name, compute capability and cuBLASLt version, e.g.
/// "NVIDIA H100 80GB HBM3 sm_90 cuBLASLt 120804".
std::string tuning_context(int device);

}  // namespace cuplan::detail::mm
