// SPDX-License-Identifier: Apache-2.0
// Layout arithmetic and algorithm choice of DistributedMatmul, on the CPU: every distribution tiles its matrix on 1
// to 6 ranks with extents that do not divide (block-cyclic local extents as ScaLAPACK's NUMROC gives them), the
// native layouts of every algorithm tile op(A), op(B) and D with and without transposes, the choice follows the
// layouts and the shape, a requested algorithm that cannot run is InvalidArgument, and SUMMA's panels follow both
// K splits.
#include <gtest/gtest.h>

#include "cuplan/errors.hpp"
#include "distributed/matmul_layout.hpp"

namespace {

using namespace cuplan::detail::dist;

std::int64_t numroc(std::int64_t n, std::int64_t nb, int iproc, int nprocs) {
  // ScaLAPACK's NUMROC with source process 0.
  const std::int64_t nblocks = n / nb;
  std::int64_t num = (nblocks / nprocs) * nb;
  const std::int64_t extra = nblocks % nprocs;
  if (iproc < extra)
    num += nb;
  else if (iproc == extra)
    num += n % nb;
  return num;
}

std::vector<LocalArray> all_ranks(const MatrixSpec& s, std::int64_t rows, std::int64_t cols, int ranks) {
  std::vector<LocalArray> v;
  for (int r = 0; r < ranks; ++r) v.push_back(matrix_array(s, rows, cols, r));
  return v;
}

TEST(MatmulLayout, EveryDistributionTilesItsMatrix) {
  for (int ranks = 1; ranks <= 6; ++ranks)
    for (Dist dist : {Dist::row_blocks, Dist::column_blocks, Dist::grid, Dist::block_cyclic})
      for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{13, 7}, {6, 6}, {100, 33}}) {
        const MatrixSpec s = resolve_spec(dist, {0, 0}, {4, 3}, ranks, "layout_a");
        SCOPED_TRACE(testing::Message() << ranks << " ranks, dist " << static_cast<int>(dist) << ", " << rows << "x"
                                        << cols);
        const auto arrays = all_ranks(s, rows, cols, ranks);
        EXPECT_EQ(tiling_problem(arrays, {rows, cols, 1}, 2, "A"), "");
        if (dist == Dist::block_cyclic)
          for (int r = 0; r < ranks; ++r) {
            EXPECT_EQ(arrays[static_cast<std::size_t>(r)].shape[0], numroc(rows, 4, r / s.cols, s.rows));
            EXPECT_EQ(arrays[static_cast<std::size_t>(r)].shape[1], numroc(cols, 3, r % s.cols, s.cols));
          }
      }
}

TEST(MatmulLayout, GridsAndBlocksAreResolvedAndChecked) {
  EXPECT_EQ(square_grid(4), (std::array<int, 2>{2, 2}));
  EXPECT_EQ(square_grid(8), (std::array<int, 2>{2, 4}));
  EXPECT_EQ(square_grid(7), (std::array<int, 2>{1, 7}));
  const MatrixSpec bc = resolve_spec(Dist::block_cyclic, {0, 0}, {0, 0}, 4, "layout_d");
  EXPECT_EQ(bc.mb, 256);
  EXPECT_EQ(bc.rows, 2);
  EXPECT_THROW(resolve_spec(Dist::grid, {3, 2}, {0, 0}, 4, "layout_d"), cuplan::InvalidArgument);
  EXPECT_THROW(resolve_spec(Dist::block_cyclic, {2, 2}, {-1, 4}, 4, "layout_d"), cuplan::InvalidArgument);
  EXPECT_THROW(resolve_spec(static_cast<Dist>(9), {0, 0}, {0, 0}, 4, "layout_d"), cuplan::InvalidArgument);
}

TEST(MatmulLayout, NativeLayoutsTileWithAndWithoutTransposes) {
  for (int ranks : {1, 2, 3, 4})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        Problem p;
        p.m = 11;
        p.n = 9;
        p.k = 7;
        p.ta = ta;
        p.tb = tb;
        p.ranks = ranks;
        const auto g = square_grid(ranks);
        for (Algo algo : {Algo::allgather, Algo::reduce_scatter, Algo::summa}) {
          const NativeArrays n = native_arrays(p, algo, g[0], g[1]);
          EXPECT_EQ(tiling_problem(n.a, {ta ? p.k : p.m, ta ? p.m : p.k, 1}, 2, "A"), "");
          EXPECT_EQ(tiling_problem(n.b, {tb ? p.n : p.k, tb ? p.k : p.n, 1}, 2, "B"), "");
          EXPECT_EQ(tiling_problem(n.d, {p.m, p.n, 1}, 2, "D"), "");
        }
      }
}

Problem problem(std::int64_t m, std::int64_t n, std::int64_t k, int ranks, Dist a, Dist b, Dist d) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.ranks = ranks;
  p.a = resolve_spec(a, {0, 0}, {8, 8}, ranks, "layout_a");
  p.b = resolve_spec(b, {0, 0}, {8, 8}, ranks, "layout_b");
  p.d = resolve_spec(d, {0, 0}, {8, 8}, ranks, "layout_d");
  return p;
}

TEST(MatmulLayout, ChoiceFollowsTheLayoutsAndMovesNothingWhenTheyAreNative) {
  const AlgoPlan ag = choose(problem(64, 64, 64, 4, Dist::row_blocks, Dist::column_blocks, Dist::column_blocks));
  EXPECT_EQ(ag.algo, Algo::allgather);
  EXPECT_FALSE(ag.move_a || ag.move_b || ag.move_d);
  const AlgoPlan rs = choose(problem(64, 64, 64, 4, Dist::column_blocks, Dist::row_blocks, Dist::row_blocks));
  EXPECT_EQ(rs.algo, Algo::reduce_scatter);
  EXPECT_FALSE(rs.move_a || rs.move_b || rs.move_d);
  const AlgoPlan summa = choose(problem(64, 64, 64, 4, Dist::grid, Dist::grid, Dist::grid));
  EXPECT_EQ(summa.algo, Algo::summa);
  EXPECT_EQ(summa.grid_rows, 2);
  EXPECT_FALSE(summa.move_a || summa.move_b || summa.move_d);
  // Block-cyclic D: SUMMA on D's grid, every operand redistributed to blocks.
  const AlgoPlan bc = choose(problem(64, 64, 64, 4, Dist::block_cyclic, Dist::block_cyclic, Dist::block_cyclic));
  EXPECT_EQ(bc.algo, Algo::summa);
  EXPECT_TRUE(bc.move_a && bc.move_b && bc.move_d);
  // A stored transposed (K x M) in column blocks is op(A) in row blocks: all-gather with nothing to move.
  Problem t = problem(64, 64, 64, 2, Dist::column_blocks, Dist::column_blocks, Dist::column_blocks);
  t.ta = true;
  const AlgoPlan at = choose(t);
  EXPECT_EQ(at.algo, Algo::allgather);
  EXPECT_FALSE(at.move_a);
  // The shape counts: with D in row blocks and a short K, reducing the M x N partials costs more than gathering A.
  const AlgoPlan short_k = choose(problem(4096, 4096, 64, 4, Dist::row_blocks, Dist::column_blocks, Dist::row_blocks));
  EXPECT_EQ(short_k.algo, Algo::allgather);
  EXPECT_TRUE(short_k.move_d);
  const AlgoPlan long_k = choose(problem(64, 64, 4096, 4, Dist::column_blocks, Dist::row_blocks, Dist::row_blocks));
  EXPECT_EQ(long_k.algo, Algo::reduce_scatter);
}

TEST(MatmulLayout, OneRankIsLocalEvenForBlockCyclic) {
  const AlgoPlan p = choose(problem(20, 30, 10, 1, Dist::block_cyclic, Dist::grid, Dist::block_cyclic));
  EXPECT_EQ(p.algo, Algo::local);
  EXPECT_FALSE(p.move_a || p.move_b || p.move_d);
  Problem asked = problem(20, 30, 10, 1, Dist::row_blocks, Dist::row_blocks, Dist::row_blocks);
  asked.requested = Algo::summa;
  EXPECT_EQ(choose(asked).algo, Algo::local);
}

TEST(MatmulLayout, RequestedAlgorithmThatCannotRunIsInvalidArgument) {
  Problem p = problem(3, 64, 64, 4, Dist::row_blocks, Dist::column_blocks, Dist::column_blocks);
  p.requested = Algo::allgather;
  try {
    (void)choose(p);
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const cuplan::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("m = 3 is less than the 4 ranks"), std::string::npos) << e.what();
  }
  p.requested = Algo::reduce_scatter;
  EXPECT_THROW((void)choose(p), cuplan::InvalidArgument);  // m = 3 < 4 row blocks of D
  p.m = 64;
  p.k = 2;
  p.requested.reset();
  EXPECT_EQ(choose(p).algo, Algo::allgather);  // k = 2 rules out the K splits
  p.m = 2;
  EXPECT_EQ(choose(p).algo, Algo::summa);  // 2x2 grid: m = 2 rows suffice
  p.m = 1;
  EXPECT_THROW((void)choose(p), cuplan::InvalidArgument);
}

TEST(MatmulLayout, SummaPanelsFollowBothKSplits) {
  // A's K over 3 grid columns: 0, 4, 7; B's K over 2 grid rows: 0, 5.
  const std::vector<Panel> base = summa_panels(10, 2, 3, 1);
  const std::vector<Panel> want{{0, 4, 0, 0}, {4, 1, 1, 0}, {5, 2, 1, 1}, {7, 3, 2, 1}};
  EXPECT_EQ(base, want);
  const std::vector<Panel> fine = summa_panels(10, 2, 3, 8);
  std::int64_t next = 0;
  for (const Panel& p : fine) {
    EXPECT_EQ(p.k0, next);
    EXPECT_GE(p.width, 1);
    next += p.width;
  }
  EXPECT_EQ(next, 10);
  EXPECT_EQ(fine.size(), 7u);  // 2 + 1 (one column) + 2 + 2
  EXPECT_EQ(summa_panels(1000, 2, 2, 8).size(), 8u);
}

}  // namespace
