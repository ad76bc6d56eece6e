// SPDX-License-Identifier: Apache-2.0
// The exchange layer's planning of box moves, on the CPU: for slab to pencil, pencil to slab, gather to one rank and
// block-cyclic to blocks, on 1 to 6 ranks with extents that do not divide, every rank's plan is run over host arrays
// both ways the GPU runs it (direct copies into the peers' arrays; pack, send, unpack) and every destination element
// must hold its global index. Also the ring order and the tiling check.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "distributed/exchange/box_plan.hpp"
#include "distributed/host_transfer.hpp"

namespace {

using namespace cuplan::detail::dist;
using Shape3 = std::array<std::int64_t, 3>;
using Arrays = std::vector<LocalArray>;

using cuplan::testing::apply;

std::int64_t flat(const Shape3& shape, std::int64_t i, std::int64_t j, std::int64_t k) {
  return (i * shape[1] + j) * shape[2] + k;
}

// A local array whose elements hold their global flat index; -1 where no part lies.
std::vector<std::int64_t> fill(const LocalArray& a, const Shape3& shape) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(a.numel()), -1);
  for (const Placement& p : a.parts)
    for (std::int64_t i = 0; i < p.global.n[0]; ++i)
      for (std::int64_t j = 0; j < p.global.n[1]; ++j)
        for (std::int64_t k = 0; k < p.global.n[2]; ++k)
          v[static_cast<std::size_t>(flat(a.shape, p.local_lo[0] + i, p.local_lo[1] + j, p.local_lo[2] + k))] =
              flat(shape, p.global.lo[0] + i, p.global.lo[1] + j, p.global.lo[2] + k);
  return v;
}

Box box3(Shape3 lo, Shape3 n, int ndim = 3) {
  Box b;
  b.ndim = ndim;
  b.lo = lo;
  b.n = n;
  return b;
}

// Axis `axis` of `shape` cut into `parts` blocks; rank r holds block r.
Arrays slabs(const Shape3& shape, int ndim, int axis, int parts) {
  Arrays out;
  for (int r = 0; r < parts; ++r) {
    Box b = box3({0, 0, 0}, shape, ndim);
    const Block blk = split(shape[static_cast<std::size_t>(axis)], parts, r);
    b.lo[static_cast<std::size_t>(axis)] = blk.offset;
    b.n[static_cast<std::size_t>(axis)] = blk.size;
    out.push_back(single_box(b));
  }
  return out;
}

Arrays pencils(const Shape3& shape, int a0, int a1, int rows, int cols) {
  Arrays out;
  for (int r = 0; r < rows * cols; ++r) {
    Box b = box3({0, 0, 0}, shape);
    const Block x = split(shape[static_cast<std::size_t>(a0)], rows, r / cols);
    const Block y = split(shape[static_cast<std::size_t>(a1)], cols, r % cols);
    b.lo[static_cast<std::size_t>(a0)] = x.offset;
    b.n[static_cast<std::size_t>(a0)] = x.size;
    b.lo[static_cast<std::size_t>(a1)] = y.offset;
    b.n[static_cast<std::size_t>(a1)] = y.size;
    out.push_back(single_box(b));
  }
  return out;
}

// A 2D matrix in mb x nb blocks dealt over a rows x cols grid (ScaLAPACK's block-cyclic rule), row-major locally.
Arrays block_cyclic(std::int64_t m, std::int64_t n, std::int64_t mb, std::int64_t nb, int rows, int cols) {
  Arrays out(static_cast<std::size_t>(rows * cols));
  for (int r = 0; r < rows * cols; ++r) {
    LocalArray& a = out[static_cast<std::size_t>(r)];
    a.ndim = 2;
    a.shape = {0, 0, 1};
    const int pr = r / cols, pc = r % cols;
    for (std::int64_t bi = pr, li = 0; bi * mb < m; bi += rows, li += mb) {
      std::int64_t lj = 0;
      for (std::int64_t bj = pc; bj * nb < n; bj += cols, lj += nb) {
        Box b = box3({bi * mb, bj * nb, 0}, {std::min(mb, m - bi * mb), std::min(nb, n - bj * nb), 1}, 2);
        a.parts.push_back({b, {li, lj, 0}});
        a.shape[1] = std::max(a.shape[1], lj + b.n[1]);
      }
      a.shape[0] = li + std::min(mb, m - bi * mb);
    }
    if (a.parts.empty()) a.shape = {0, 0, 1};
  }
  return out;
}

// Runs every rank's plan both ways and checks every destination element.
void check_move(const Arrays& from, const Arrays& to, const Shape3& shape) {
  ASSERT_EQ(tiling_problem(from, shape, from[0].ndim, "from"), "");
  ASSERT_EQ(tiling_problem(to, shape, to[0].ndim, "to"), "");
  const int ranks = static_cast<int>(from.size());
  std::vector<std::vector<std::int64_t>> src, direct, via_nccl, send(static_cast<std::size_t>(ranks)),
      recv(static_cast<std::size_t>(ranks));
  std::vector<BoxPlan> plans;
  for (int r = 0; r < ranks; ++r) {
    src.push_back(fill(from[static_cast<std::size_t>(r)], shape));
    direct.emplace_back(static_cast<std::size_t>(to[static_cast<std::size_t>(r)].numel()), -1);
    via_nccl.emplace_back(static_cast<std::size_t>(to[static_cast<std::size_t>(r)].numel()), -1);
    plans.push_back(plan_boxes(from, to, r));
  }
  for (int r = 0; r < ranks; ++r) {
    const BoxPlan& p = plans[static_cast<std::size_t>(r)];
    send[static_cast<std::size_t>(r)].assign(static_cast<std::size_t>(p.send_total), -1);
    recv[static_cast<std::size_t>(r)].assign(static_cast<std::size_t>(p.recv_total), -1);
    for (const PeerSegment& s : p.sends) {
      for (const BoxTransfer& t : s.direct)
        apply(t, src[static_cast<std::size_t>(r)], direct[static_cast<std::size_t>(s.peer)]);
      for (const BoxTransfer& t : s.packed)
        apply(t, src[static_cast<std::size_t>(r)], send[static_cast<std::size_t>(r)]);
    }
  }
  // The wire: rank r's segment for q lands at q's receive segment for r; both must agree on its length.
  for (int q = 0; q < ranks; ++q)
    for (const PeerSegment& v : plans[static_cast<std::size_t>(q)].recvs) {
      const auto& sends = plans[static_cast<std::size_t>(v.peer)].sends;
      auto it = std::find_if(sends.begin(), sends.end(), [&](const PeerSegment& s) { return s.peer == q; });
      ASSERT_NE(it, sends.end()) << "rank " << q << " expects data from " << v.peer << " that it does not send";
      ASSERT_EQ(it->count, v.count);
      std::copy_n(send[static_cast<std::size_t>(v.peer)].begin() + it->offset, v.count,
                  recv[static_cast<std::size_t>(q)].begin() + v.offset);
    }
  for (int r = 0; r < ranks; ++r)
    for (const PeerSegment& v : plans[static_cast<std::size_t>(r)].recvs)
      for (const BoxTransfer& t : v.packed)
        apply(t, recv[static_cast<std::size_t>(r)], via_nccl[static_cast<std::size_t>(r)]);
  for (int r = 0; r < ranks; ++r) {
    const std::vector<std::int64_t> expected = fill(to[static_cast<std::size_t>(r)], shape);
    EXPECT_EQ(direct[static_cast<std::size_t>(r)], expected) << "direct copies, rank " << r;
    EXPECT_EQ(via_nccl[static_cast<std::size_t>(r)], expected) << "packed copies, rank " << r;
  }
}

TEST(BoxPlan, SlabToPencilAndBackOnUnevenExtents) {
  const Shape3 shape{7, 10, 5};
  for (auto [rows, cols] : {std::pair{1, 1}, {1, 2}, {2, 2}, {2, 3}}) {
    SCOPED_TRACE(testing::Message() << rows << "x" << cols);
    check_move(slabs(shape, 3, 0, rows * cols), pencils(shape, 1, 2, rows, cols), shape);
    check_move(pencils(shape, 1, 2, rows, cols), slabs(shape, 3, 0, rows * cols), shape);
    check_move(slabs(shape, 3, 0, rows * cols), slabs(shape, 3, 1, rows * cols), shape);
  }
}

TEST(BoxPlan, GatherToOneRankAndScatterBack) {
  const Shape3 shape{9, 4, 1};
  for (int ranks : {1, 2, 4}) {
    Arrays gathered;
    for (int r = 0; r < ranks; ++r)
      gathered.push_back(single_box(r == ranks - 1 ? box3({0, 0, 0}, shape, 2) : box3({0, 0, 0}, {0, 4, 1}, 2)));
    check_move(slabs(shape, 2, 0, ranks), gathered, shape);
    check_move(gathered, slabs(shape, 2, 1, ranks), shape);
  }
}

TEST(BoxPlan, BlockCyclicToBlocksAndBack) {
  const std::int64_t m = 23, n = 17;
  const Shape3 shape{m, n, 1};
  for (auto [rows, cols] : {std::pair{1, 1}, {2, 1}, {2, 2}, {1, 4}}) {
    for (auto [mb, nb] : {std::pair<std::int64_t, std::int64_t>{4, 3}, {1, 1}, {32, 32}}) {
      SCOPED_TRACE(testing::Message() << rows << "x" << cols << " blocks " << mb << "x" << nb);
      const Arrays cyclic = block_cyclic(m, n, mb, nb, rows, cols);
      Arrays grid;
      for (int r = 0; r < rows * cols; ++r) {
        const Block x = split(m, rows, r / cols), y = split(n, cols, r % cols);
        grid.push_back(single_box(box3({x.offset, y.offset, 0}, {x.size, y.size, 1}, 2)));
      }
      check_move(cyclic, grid, shape);
      check_move(grid, cyclic, shape);
      check_move(cyclic, block_cyclic(m, n, 5, 2, rows, cols), shape);
    }
  }
}

TEST(BoxPlan, SendsInShiftedRingOrderOwnPieceLast) {
  const Shape3 shape{8, 8, 8};
  const Arrays from = slabs(shape, 3, 0, 4), to = slabs(shape, 3, 1, 4);
  const BoxPlan p = plan_boxes(from, to, 2);
  ASSERT_EQ(p.sends.size(), 4u);
  EXPECT_EQ(p.sends[0].peer, 3);
  EXPECT_EQ(p.sends[1].peer, 0);
  EXPECT_EQ(p.sends[2].peer, 1);
  EXPECT_EQ(p.sends[3].peer, 2);
  ASSERT_EQ(p.recvs.size(), 4u);
  EXPECT_EQ(p.recvs[0].peer, 1);
  EXPECT_EQ(p.recvs[3].peer, 2);
  EXPECT_EQ(p.moved_to_peers(), 3 * 2 * 2 * 8);
  // Packed segments in ascending rank order.
  EXPECT_EQ(p.sends[1].offset, 0);
  EXPECT_EQ(p.sends[2].offset, 2 * 2 * 8);
}

TEST(BoxPlan, TilingProblemsAreNamed) {
  const Shape3 shape{6, 4, 1};
  Arrays overlap{single_box(box3({0, 0, 0}, {4, 4, 1}, 2)), single_box(box3({3, 0, 0}, {3, 4, 1}, 2))};
  EXPECT_NE(
      tiling_problem(overlap, shape, 2, "input_box").find("rank 0's box offset (0, 0) extent 4x4 overlaps rank 1"),
      std::string::npos)
      << tiling_problem(overlap, shape, 2, "input_box");
  Arrays gap{single_box(box3({0, 0, 0}, {2, 4, 1}, 2)), single_box(box3({3, 0, 0}, {3, 4, 1}, 2))};
  EXPECT_NE(tiling_problem(gap, shape, 2, "input_box").find("hold 20 of the global array's 24 elements"),
            std::string::npos);
  Arrays outside{single_box(box3({0, 0, 0}, {3, 4, 1}, 2)), single_box(box3({3, 0, 0}, {4, 4, 1}, 2))};
  EXPECT_NE(tiling_problem(outside, shape, 2, "output_box")
                .find("output_box: rank 1's box offset (3, 0) extent 4x4 "
                      "lies outside the global array (axis 0 has 6"),
            std::string::npos);
  EXPECT_EQ(tiling_problem(slabs(shape, 2, 1, 3), shape, 2, "input_box"), "");
  // Offsets at the top of the range lie outside too, without overflowing offset + extent (UBSan).
  constexpr std::int64_t top = std::numeric_limits<std::int64_t>::max();
  Arrays far{single_box(box3({0, 0, 0}, {6, 4, 1}, 2)), single_box(box3({top, 0, 0}, {1, 4, 1}, 2))};
  EXPECT_NE(tiling_problem(far, shape, 2, "input_box").find("input_box: rank 1's box offset (" + std::to_string(top)),
            std::string::npos)
      << tiling_problem(far, shape, 2, "input_box");
}

TEST(BoxPlan, RandomBoxesMoveExactly) {
  std::mt19937 rng(26);
  for (int trial = 0; trial < 30; ++trial) {
    const Shape3 shape{1 + static_cast<std::int64_t>(rng() % 9), 1 + static_cast<std::int64_t>(rng() % 9),
                       1 + static_cast<std::int64_t>(rng() % 9)};
    const int ranks = 1 + static_cast<int>(rng() % 6);
    const int a = static_cast<int>(rng() % 3), b = static_cast<int>(rng() % 3);
    check_move(slabs(shape, 3, a, ranks), slabs(shape, 3, b, ranks), shape);
  }
}

}  // namespace
