// SPDX-License-Identifier: Apache-2.0
#pragma once
// DistributedMatmul (docs/distributed.md, "Distributed matrix products"): D = epilog(alpha op(A) op(B) + beta C)
// over a Communicator, each matrix held by the ranks in 1D row or column blocks, a 2D block grid or ScaLAPACK's 2D
// block-cyclic layout. The algorithm (all-gather + GEMM, GEMM + reduce-scatter, SUMMA) is chosen from the layouts
// and the shape, or asked for; local products are cuplan Matmul objects. Same phases and stream contract as
// Matmul. Part of the optional component cuplan::distributed.

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuplan/distributed.hpp"
#include "cuplan/enum_name.hpp"
#include "cuplan/matmul.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// How the ranks hold one matrix (as stored: a transposed A is stored K x M). `row_blocks`: consecutive blocks of
/// rows, rank r the r-th; `column_blocks`: of columns; `grid`: a rows x cols process grid (rank = row * cols + col)
/// cuts rows and columns into consecutive blocks; `block_cyclic`: ScaLAPACK's 2D block-cyclic rule on such a grid,
/// blocks of `block` extents dealt round-robin, source process 0. Blocks split as DistributedFFT's slabs do (the
/// first extent % parts blocks one longer). Local arrays are row-major; a block-cyclic local array is ScaLAPACK's
/// local matrix (NUMROC rows x NUMROC columns, block (I, J) at local block (I div rows, J div cols)) in row-major
/// order.
enum class MatrixDistribution : std::uint8_t { row_blocks, column_blocks, grid, block_cyclic };

/// A matrix's distribution with its grid and blocks.
struct MatrixLayout {
  MatrixDistribution distribution = MatrixDistribution::row_blocks;  ///< how the matrix is cut (see above)
  std::array<int, 2> process_grid{0, 0};    ///< grid, block_cyclic: rows x cols; {0, 0}: most square, rows <= cols
  std::array<std::int64_t, 2> block{0, 0};  ///< block_cyclic: MB x NB; {0, 0}: 256 x 256
};

/// The algorithms (docs/distributed.md, "Algorithms"). `local`: one rank (one rank always runs it, whatever is asked).
/// `allgather_gemm`: op(A) in row blocks, op(B) and D in column blocks; each rank passes its block of A around a ring,
/// the GEMM of block k overlapping the transfer of block k+1. `gemm_reduce_scatter`: op(A) in column blocks and op(B)
/// in row blocks (K split), D in row blocks; each rank's partial product of D's row block j is reduced onto rank j
/// while the next one is computed. `summa`: all three on one 2D grid; the K panels are broadcast along grid rows (A)
/// and columns (B), the transfer of panel p+1 overlapping the GEMM of panel p. Operands in other layouts are
/// redistributed first (D after).
enum class DistributedMatmulAlgorithm : std::uint8_t { automatic, local, allgather_gemm, gemm_reduce_scatter, summa };

/// Options of a DistributedMatmul: the leading fields of MatmulOptions, then the distribution; every rank passes the
/// same (its own local c and bias).
struct DistributedMatmulOptions {
  std::optional<TensorRef> c{};          ///< this rank's local array of C (laid out as D), used with beta
  std::complex<double> alpha{1.0};       ///< scale of the product (real for real products)
  std::complex<double> beta{0.0};        ///< scale of C
  Epilog epilog = Epilog::none;          ///< none, relu, gelu, bias, relu_bias or gelu_bias, on D's local blocks
  std::optional<TensorRef> bias{};       ///< one value per local row of D (its rows in local order), dtype of D
  Compute compute = Compute::automatic;  ///< compute precision of the local products
  std::optional<StreamRef> stream{};     ///< stream of every phase that names none (current stream if empty)
  EventList after{};                     ///< events the first phase waits for
  bool transpose_a = false;              ///< A is stored K x M and op(A) = A^T
  bool transpose_b = false;              ///< B is stored N x K and op(B) = B^T
  MatrixLayout layout_a{};               ///< how the ranks hold A (as stored)
  MatrixLayout layout_b{};               ///< how the ranks hold B (as stored)
  MatrixLayout layout_d{};               ///< how the ranks hold D (and C)
  /// The algorithm; `automatic`: the one that moves the fewest elements per rank for these layouts and extents.
  DistributedMatmulAlgorithm algorithm = DistributedMatmulAlgorithm::automatic;
  /// How redistributions and the all-gather move data: automatic takes the copy engines where every rank
  /// addresses every other's memory (one node), else NCCL.
  ExchangeMethod exchange = ExchangeMethod::automatic;
  std::optional<DType> result_dtype{};  ///< default: A's dtype
  /// SUMMA: the K panels are cut so that there are at least this many (more, shorter transfers to overlap). 0: 8.
  int min_panels = 0;
};

/// One block of the global matrix that a rank's local array holds, and where.
struct DistributedMatrixBlock {
  DistributedBox global{};                     ///< the block in the global matrix (2 axes)
  std::array<std::int64_t, 2> local_offset{};  ///< its first element's row and column in the local array
};
/// A rank's local array of one matrix: its shape and the global blocks it holds.
struct DistributedMatrix {
  Shape local_shape{};                           ///< rows x columns of the local array
  std::vector<DistributedMatrixBlock> blocks{};  ///< the global blocks it holds, in local order
};
/// What a rank holds, before any operand exists (to allocate its local arrays).
struct DistributedMatmulBlocks {
  DistributedMatrix a{};                                                     ///< local array of A (as stored)
  DistributedMatrix b{};                                                     ///< local array of B (as stored)
  DistributedMatrix c{};                                                     ///< local array of C (laid out as D)
  DistributedMatrix d{};                                                     ///< local array of D
  std::int64_t bias_length = 0;                                              ///< rows of D's local array
  DistributedMatmulAlgorithm algorithm = DistributedMatmulAlgorithm::local;  ///< as chosen
  std::array<int, 2> process_grid{1, 1};  ///< the algorithm's grid (SUMMA: rows x cols; 1D: ranks x 1)
};

/// Options of one DistributedMatmul::execute, as MatmulExecuteOptions.
struct DistributedMatmulExecuteOptions {
  std::optional<StreamRef> stream{};  ///< stream of this call; empty: the options' stream, else the current one
  EventList after{};                  ///< events this call's work waits for
  bool release_workspace = false;     ///< release the local products' workspaces after this call
  /// Write this rank's D here: contiguous, row-major, D's dtype and local shape, device memory of the device,
  /// 16-byte aligned (as Matmul's out).
  std::optional<TensorView> out{};
};

/// "automatic", "local", "allgather_gemm", "gemm_reduce_scatter" or "summa".
constexpr std::string_view to_string(DistributedMatmulAlgorithm a) noexcept {
  return detail::enum_name<DistributedMatmulAlgorithm::summa>(
      a, {"automatic", "local", "allgather_gemm", "gemm_reduce_scatter", "summa"});
}
/// "row_blocks", "column_blocks", "grid" or "block_cyclic".
constexpr std::string_view to_string(MatrixDistribution d) noexcept {
  return detail::enum_name<MatrixDistribution::block_cyclic>(d,
                                                             {"row_blocks", "column_blocks", "grid", "block_cyclic"});
}

}  // namespace CUPLAN_ABI_NAMESPACE
namespace detail {
class DistributedMatmulImpl;
}
inline namespace CUPLAN_ABI_NAMESPACE {

/// One rank's part of a distributed product. Move-only. Every rank constructs one with the same extents and
/// options (its own local arrays) and calls the phases in the same order. plan() checks agreement collectively:
/// differing extents, dtypes, layouts or options raise InvalidArgument on every rank.
class CUPLAN_API DistributedMatmul {
 public:
  /// op(A) is m x k, op(B) k x n, D m x n. `local_a` and `local_b` are this rank's local arrays (blocks(...).a and
  /// .b): contiguous row-major, in device memory of the communicator's device, one dtype. Validates; no GPU work
  /// and no communication.
  DistributedMatmul(Communicator comm, std::int64_t m, std::int64_t n, std::int64_t k, TensorRef local_a,
                    TensorRef local_b, DistributedMatmulOptions options = {});
  /// Takes over the plan; the moved-from object's calls throw StateError.
  DistributedMatmul(DistributedMatmul&&) noexcept;
  /// Releases this object's plan and takes over the other's.
  DistributedMatmul& operator=(DistributedMatmul&&) noexcept;
  DistributedMatmul(const DistributedMatmul&) = delete;
  DistributedMatmul& operator=(const DistributedMatmul&) = delete;
  ~DistributedMatmul();

  /// This rank's local arrays and the algorithm, before any operand exists. Same checks as the constructor.
  static DistributedMatmulBlocks blocks(const Communicator& comm, std::int64_t m, std::int64_t n, std::int64_t k,
                                        const DistributedMatmulOptions& options = {});

  /// Collective, blocking: agreement, redistribution plans and buffers, the local products' plans.
  void plan(std::optional<StreamRef> stream = {});
  /// Times the candidate algorithms of every local product on this rank's operands and keeps the fastest of each
  /// (Matmul::autotune); plans first (collectively) when plan() was not called. Local: no communication.
  void autotune(AutotuneOptions options = {});
  /// Collective: enqueues the product on the stream and returns this rank's D (or `out`). Never blocks the host;
  /// StateError before plan() (an execute never plans: planning is collective and may block).
  Tensor execute(DistributedMatmulExecuteOptions options = {});
  /// Replaces one operand (a, b, c or bias) by one of the same shape, dtype and device, ordered after the last phase.
  void reset_operand(MatmulOperand which, TensorRef operand, std::optional<StreamRef> stream = {});
  /// Forgets the operands (execute needs reset_operand first).
  void release_operand();
  /// Releases plans, buffers and streams; every later call throws StateError. Never throws.
  void free() noexcept;

  DistributedMatmulBlocks local_blocks() const;  ///< as blocks()
  DistributedMatmulAlgorithm algorithm() const;  ///< as chosen
  DType result_dtype() const;                    ///< element type of D
  Shape result_shape() const;                    ///< this rank's local D
  /// How the all-gather (all-gather + GEMM on several ranks) or else the redistributions move data once planned
  /// (copy_engine or nccl); automatic before plan() or without any.
  ExchangeMethod exchange_method() const;
  /// Device memory held between executes (exchange and panel buffers, redistributed operands), in bytes.
  std::size_t device_memory_bytes() const;
  /// One line: extents, dtypes, layouts, algorithm, grid, redistributions, epilog, rank.
  std::string describe() const;

 private:
  std::unique_ptr<detail::DistributedMatmulImpl> impl_;
};

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
