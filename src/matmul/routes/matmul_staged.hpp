// SPDX-License-Identifier: Apache-2.0
#pragma once
// Matmul over host operands with CUDA execution, through the staging engine (docs/staging.md): the product is cut
// by mm::plan_staging into tiles within MatmulOptions::device_memory_limit (whole batch entries, rows of A and D,
// and blocks of N when B does not fit), with the block that later tiles share (B, a block of B's columns, or a
// block of A's rows) kept on the device between them. Each tile is a device product with C, bias and the
// element-wise epilog, run by an inner Matmul planned for the tile's shape.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "cuplan/matmul.hpp"
#include "matmul/planner.hpp"
#include "matmul/routes/staging_plan.hpp"
#include "plan/staging/pipeline.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {

class MatmulImpl;

/// The host operands of one execute, as the planned views (C and bias absent when the product has none).
struct StagedOperands {
  TensorView a, b;
  std::optional<TensorView> c, bias;
};

class StagedMatmul {
 public:
  /// Why this path cannot split the product (nullptr when it can; then the unsplit staging of MatmulImpl runs).
  static const char* unsplittable(const mm::Problem& problem, const StagedOperands& operands) noexcept;
  /// `options`: the outer object's options (their operands are not used). InvalidArgument naming the smallest
  /// limit that works when the limit cannot hold one row of A, one column of B and one element of D (and C).
  /// `operands`: the planned host views (their batch strides decide whether B is shared by every batch entry).
  StagedMatmul(const MatmulOptions& options, const mm::Problem& problem, const StagedOperands& operands, int device,
               const char* who);
  ~StagedMatmul();
  StagedMatmul(const StagedMatmul&) = delete;
  StagedMatmul& operator=(const StagedMatmul&) = delete;

  /// D = epilog(alpha A B + beta C (+ bias)) for host operands and host D (the planned result layout); returns
  /// when D is on the host.
  void execute(const StagedOperands& operands, const TensorView& d, std::complex<double> alpha,
               std::complex<double> beta, StreamRef s);
  void release() noexcept;
  /// Bytes held between calls: the resident block, the device and pinned slots, the tile products' own memory.
  std::size_t held_bytes() const noexcept;
  /// Releases what held_bytes() counts; the tile products stay planned (their memory is allocated again at need).
  void release_idle_memory() noexcept;
  const mm::StagingPlan& plan() const noexcept { return plan_; }

 private:
  using TileShape = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // batches, rows, cols
  /// The inner device product for tiles of this shape, planned on `s` at first use.
  MatmulImpl& inner(const TileShape& shape, StreamRef s);

  MatmulOptions options_;
  mm::Problem problem_;
  int device_ = 0;
  const char* who_;
  std::size_t limit_ = 0;
  mm::StagingPlan plan_;
  std::map<TileShape, std::unique_ptr<MatmulImpl>> inner_;  // operands are the slots' memory
  DeviceBuffer resident_;
  staging::StagingPipeline pipeline_;
};

}  // namespace cuplan::detail
