#pragma once
// Matmul over host operands with CUDA execution, through the staging engine (docs/staging.md): B is uploaded once
// (through the pipeline, in chunks of its rows, when there are several chunks), the rows of A and D are split into
// chunks within MatmulOptions::device_memory_limit, and each chunk is a device product run by an inner Matmul
// planned for the chunk's shape (a second one for a shorter last chunk).

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "cuplan/matmul.hpp"
#include "matmul/planner.hpp"
#include "plan/staging/chunking.hpp"
#include "plan/staging/pipeline.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {

class MatmulImpl;

class StagedMatmul {
 public:
  /// The products this path takes: 2-D A and B, no C, no bias, no epilog, no fp8 scaling, no conjugation (an
  /// inner product would copy a conjugated operand outside the limit). Others keep the
  /// whole-operand staging of MatmulImpl::stage.
  static bool eligible(const mm::Problem& problem, const TensorView& a, const TensorView& b) noexcept;
  /// `options`: the outer object's options (their operands are not used). NotSupported when B alone does not fit
  /// the limit (this path splits M only); InvalidArgument when the limit cannot hold one row of A and D
  /// next to B and the workspace (both name the minimum).
  StagedMatmul(const MatmulOptions& options, const mm::Problem& problem, int device, const char* who);
  ~StagedMatmul();
  StagedMatmul(const StagedMatmul&) = delete;
  StagedMatmul& operator=(const StagedMatmul&) = delete;

  /// D = alpha A B (+ nothing) for host A, B and host D (the planned result layout); returns when D is on the host.
  void execute(const TensorView& a, const TensorView& b, const TensorView& d, std::complex<double> alpha,
               std::complex<double> beta, StreamRef s);
  void release() noexcept;
  std::int64_t chunk_count() const noexcept { return chunks_.count; }

 private:
  /// The inner device product for chunks of `rows` rows, planned on `s` at first use.
  void plan_inner(std::unique_ptr<MatmulImpl>& inner, std::int64_t rows, StreamRef s);

  MatmulOptions options_;
  mm::Problem problem_;
  int device_ = 0;
  const char* who_;
  std::size_t limit_ = 0;
  std::size_t b_bytes_ = 0, a_row_bytes_ = 0, d_row_bytes_ = 0, workspace_bytes_ = 0;
  staging::ChunkPlan chunks_;
  std::unique_ptr<MatmulImpl> full_, last_;  // planned at the first execute; operands are the slots' memory
  DeviceBuffer b_device_;
  staging::StagingPipeline pipeline_;
};

}  // namespace cuplan::detail
