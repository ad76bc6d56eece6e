// SPDX-License-Identifier: Apache-2.0
// The exchange layer's pure parts, on the CPU: a piece as one strided copy (checked element by element against the
// global index on random boxes), the packed layouts that only repeat a local array, the pieces of each chunk, and
// the check that every rank planned the same thing.
#include <gtest/gtest.h>

#include <random>
#include <string_view>
#include <vector>

#include "distributed/decomposition.hpp"
#include "distributed/exchange/agreement.hpp"
#include "distributed/exchange/box_transfer.hpp"
#include "distributed/host_transfer.hpp"

namespace {

using namespace cuplan::detail::dist;

using Shape3 = std::array<std::int64_t, 3>;

using cuplan::testing::apply;

// A local array over `owner` whose elements hold their global flat index in `shape`.
std::vector<std::int64_t> global_indices(const Box& owner, const Shape3& shape) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(owner.numel()));
  for (std::int64_t i = 0; i < owner.n[0]; ++i)
    for (std::int64_t j = 0; j < owner.n[1]; ++j)
      for (std::int64_t k = 0; k < owner.n[2]; ++k)
        v[static_cast<std::size_t>((i * owner.n[1] + j) * owner.n[2] + k)] =
            ((owner.lo[0] + i) * shape[1] + owner.lo[1] + j) * shape[2] + owner.lo[2] + k;
  return v;
}

Box box(Shape3 lo, Shape3 n) {
  Box b;
  b.lo = lo;
  b.n = n;
  return b;
}

TEST(BoxTransfer, SlabPieceIsOneCopyOfLongRows) {
  // 1024^3 over 4 ranks, rank 0 sends rows x in [0, 256), y in [256, 512) to rank 1.
  const Box src = box({0, 0, 0}, {256, 1024, 1024});
  const Box dst = box({0, 256, 0}, {1024, 256, 1024});
  const BoxTransfer t = box_transfer(1, box({0, 256, 0}, {256, 256, 1024}), src, dst);
  EXPECT_EQ(t.dims(), 2);
  EXPECT_EQ(t.n, (Shape3{1, 256, 256 * 1024}));
  EXPECT_EQ(t.src_stride[1], 1024 * 1024);
  EXPECT_EQ(t.dst_stride[1], 256 * 1024);
  EXPECT_EQ(t.src_offset, 256 * 1024);
  EXPECT_EQ(t.dst_offset, 0);
}

TEST(BoxTransfer, PieceSpanningBothOwnersIsOneRun) {
  const Box owner = box({4, 0, 0}, {4, 6, 5});
  const BoxTransfer t = box_transfer(0, box({5, 0, 0}, {2, 6, 5}), owner, owner);
  EXPECT_EQ(t.dims(), 1);
  EXPECT_EQ(t.n[2], 60);
  EXPECT_TRUE(contiguous_in(box({5, 0, 0}, {2, 6, 5}), owner));
  EXPECT_FALSE(contiguous_in(box({5, 1, 0}, {2, 5, 5}), owner));
}

TEST(BoxTransfer, RandomPiecesCopyEveryElementToItsGlobalPlace) {
  std::mt19937 rng(12345);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 2000; ++trial) {
    const Shape3 shape{pick(1, 9), pick(1, 9), pick(1, 9)};
    auto random_box = [&] {
      Box b;
      for (std::size_t a = 0; a < 3; ++a) {
        b.lo[a] = pick(0, shape[a] - 1);
        b.n[a] = pick(1, shape[a] - b.lo[a]);
      }
      return b;
    };
    const Box src = random_box();
    const Box dst = random_box();
    const Box piece = intersect(src, dst);
    if (piece.numel() == 0) continue;
    const BoxTransfer t = box_transfer(3, piece, src, dst);
    EXPECT_EQ(t.numel(), piece.numel());
    EXPECT_EQ(t.peer, 3);
    std::vector<std::int64_t> out(static_cast<std::size_t>(dst.numel()), -1);
    apply(t, global_indices(src, shape), out);
    const std::vector<std::int64_t> want = global_indices(dst, shape);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const std::int64_t g = want[i];
      const Shape3 index{g / (shape[1] * shape[2]), (g / shape[2]) % shape[1], g % shape[2]};
      ASSERT_EQ(out[i], piece.contains(index) ? g : -1) << "trial " << trial << " element " << i;
    }
    if (t.dims() == 3) {  // 3D pitched copies: the plane stride is the row stride times the rows per plane
      EXPECT_EQ(t.src_stride[0], t.src_stride[1] * t.src_rows);
      EXPECT_EQ(t.dst_stride[0], t.dst_stride[1] * t.dst_rows);
    }
  }
}

TEST(BoxTransfer, APieceOutsideAnOwnerIsALogicError) {
  EXPECT_THROW(box_transfer(0, box({0, 0, 0}, {2, 2, 2}), box({1, 0, 0}, {2, 2, 2}), box({0, 0, 0}, {4, 4, 4})),
               std::logic_error);
}

TEST(PackedLayout, SlabForwardReceivesInPlaceAndTheReturnSendsInPlace) {
  for (int ranks : {2, 3, 4}) {
    Layout slab{Kind::slab, 3, ranks, 1};
    const Shape3 shape{12, 10, 8};
    for (int r = 0; r < ranks; ++r) {
      const Exchange there = plan_exchange(slab, shape, 0, 1, r);
      const Exchange back = plan_exchange(slab, shape, 1, 0, r);
      // Pieces from each peer span the whole of axes 1 and 2 of the stage-1 box, in peer order: identity receive.
      EXPECT_TRUE(packed_is_local_layout(there.recvs, stage_box(slab, shape, 1, r))) << ranks << " " << r;
      EXPECT_FALSE(packed_is_local_layout(there.sends, stage_box(slab, shape, 0, r))) << ranks << " " << r;
      EXPECT_TRUE(packed_is_local_layout(back.sends, stage_box(slab, shape, 1, r))) << ranks << " " << r;
      EXPECT_FALSE(packed_is_local_layout(back.recvs, stage_box(slab, shape, 0, r))) << ranks << " " << r;
    }
  }
}

TEST(ChunkTransfers, ChunksCoverEveryPieceOnceInShiftedRingOrder) {
  for (Layout layout : {Layout{Kind::slab, 3, 4, 1}, Layout{Kind::pencil, 3, 2, 2}}) {
    const Shape3 shape{11, 9, 7};
    for (int r = 0; r < layout.ranks(); ++r) {
      const Box src = stage_box(layout, shape, 0, r);
      const Exchange ex = plan_exchange(layout, shape, 0, 1, r);
      std::vector<Box> owners;
      for (int q = 0; q < layout.ranks(); ++q) owners.push_back(stage_box(layout, shape, 1, q));
      std::int64_t sent = 0;
      for (int chunks : {1, 3}) {
        sent = 0;
        for (int c = 0; c < chunks; ++c) {
          const auto ts = chunk_transfers(ex, chunk_box(src, 0, chunks, c), src, owners, r);
          int previous_step = 0;
          for (const BoxTransfer& t : ts) {
            const int step = (t.peer - r + layout.ranks()) % layout.ranks();
            const int ring = step == 0 ? layout.ranks() : step;  // own piece last
            EXPECT_GE(ring, previous_step);
            previous_step = ring;
            sent += t.numel();
          }
        }
        EXPECT_EQ(sent, ex.send_total) << "rank " << r << " chunks " << chunks;
      }
    }
  }
}

TEST(Agreement, NamesTheRankTheFieldAndBothValues) {
  std::vector<AgreementValues> ranks(3);
  for (auto& v : ranks) v[0] = 3, v[1] = 64;
  const std::string_view names[] = {"ndim", "global_shape[0]"};
  EXPECT_FALSE(first_disagreement(ranks, names).has_value());
  ranks[2][1] = 32;
  const auto message = first_disagreement(ranks, names);
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(*message, "rank 2 has global_shape[0] = 32, rank 0 has 64");
}

}  // namespace
