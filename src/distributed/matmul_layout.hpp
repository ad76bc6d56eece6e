// SPDX-License-Identifier: Apache-2.0
#pragma once
// Layout arithmetic and algorithm choice of the distributed matrix product (docs/distributed.md, "Distributed
// matrix products"), as pure functions: each rank's local array of a matrix under 1D row or column blocks, a 2D
// block grid or ScaLAPACK's 2D block-cyclic rule; the layouts each algorithm computes in (its native layouts); the
// bytes each algorithm moves per rank, with the redistributions it needs; the choice; and the K panels of SUMMA.
// Matrices are described as stored (op(A) = A^T stores K x M); native layouts are built on op() and transposed.
// Nothing here touches a GPU.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "distributed/exchange/box_plan.hpp"

namespace cuplan::detail::dist {

enum class Dist { row_blocks, column_blocks, grid, block_cyclic };

/// A resolved distribution: the process grid (row_blocks: ranks x 1, column_blocks: 1 x ranks) and, for
/// block_cyclic, the block extents.
struct MatrixSpec {
  Dist dist = Dist::row_blocks;
  int rows = 1;
  int cols = 1;
  std::int64_t mb = 0;
  std::int64_t nb = 0;
  friend bool operator==(const MatrixSpec&, const MatrixSpec&) = default;
};

/// The most square rows x cols grid of `ranks` with rows <= cols.
std::array<int, 2> square_grid(int ranks);

/// Resolves a requested distribution (grid {0, 0}: square_grid; blocks {0, 0}: 256 x 256) and checks it: the grid
/// must have `ranks` ranks, blocks must be positive. InvalidArgument names `what`.
MatrixSpec resolve_spec(Dist dist, std::array<int, 2> grid, std::array<std::int64_t, 2> block, int ranks,
                        const char* what);

/// The most blocks a block_cyclic matrix may have: its local arrays list every block, and an exchange moves each
/// as a copy of its own.
inline constexpr std::int64_t max_block_cyclic_blocks = std::int64_t{1} << 20;

/// For a block_cyclic `spec` of a stored rows x cols matrix: InvalidArgument naming `what` (its ".block") when the
/// blocks number more than max_block_cyclic_blocks. Other distributions pass.
void check_block_count(const MatrixSpec& spec, std::int64_t rows, std::int64_t cols, const char* what);

/// Rank `rank`'s local array of a rows x cols matrix under `spec`: row-major; for block_cyclic, block (I, J) lies on
/// grid position (I mod rows, J mod cols) at local block (I div rows, J div cols), as in ScaLAPACK (source process
/// 0, rank = grid row * cols + grid col).
LocalArray matrix_array(const MatrixSpec& spec, std::int64_t rows, std::int64_t cols, int rank);

/// Axes 0 and 1 swapped: the array of the transposed matrix (its local array is the transpose too).
LocalArray transposed(const LocalArray& array);

enum class Algo { local, allgather, reduce_scatter, summa };
const char* algo_name(Algo algo);

/// A product as every rank describes it: global extents of op(A) (m x k), op(B) (k x n), D (m x n), whether A and
/// B are stored transposed, each stored matrix's distribution (C follows D), the rank count and the requested
/// algorithm (nullopt: chosen).
struct Problem {
  std::int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  MatrixSpec a, b, d;
  int ranks = 1;
  std::optional<Algo> requested;
};

/// How the product runs: the algorithm, its grid (summa: rows x cols; allgather, reduce_scatter: ranks x 1), and
/// for A, B and D whether the user's layout differs from the algorithm's (a redistribution before, or after for D).
struct AlgoPlan {
  Algo algo = Algo::local;
  int grid_rows = 1, grid_cols = 1;
  bool move_a = false, move_b = false, move_d = false;
  double moved_elements = 0;  ///< per rank, estimated, redistributions included
};

/// The local arrays of stored A, B and D (all ranks) that `algo` computes in on `grid_rows x grid_cols`.
struct NativeArrays {
  std::vector<LocalArray> a, b, d;
};
NativeArrays native_arrays(const Problem& p, Algo algo, int grid_rows, int grid_cols);
/// The user's local arrays of stored A, B and D (all ranks).
NativeArrays user_arrays(const Problem& p);

/// Why `algo` cannot run `p` (a split extent smaller than its parts: every rank needs a non-empty block), or empty.
std::string infeasible(const Problem& p, Algo algo, int grid_rows, int grid_cols);

/// The plan of `p`: the requested algorithm (InvalidArgument when it cannot run), or the feasible one that moves the
/// fewest elements per rank (redistributions included; ties: allgather, reduce_scatter, summa). One rank: local,
/// whatever was asked.
AlgoPlan choose(const Problem& p);

/// One K panel of SUMMA: columns [k0, k0 + width) of op(A), owned by grid column a_owner; rows of op(B), owned by
/// grid row b_owner.
struct Panel {
  std::int64_t k0 = 0, width = 0;
  int a_owner = 0, b_owner = 0;
  friend bool operator==(const Panel&, const Panel&) = default;
};
/// K cut where either A's split over `cols` or B's split over `rows` cuts it, each piece then cut into equal parts
/// so that there are at least `min_panels` panels (while panels keep at least one column).
std::vector<Panel> summa_panels(std::int64_t k, int rows, int cols, int min_panels);

}  // namespace cuplan::detail::dist
