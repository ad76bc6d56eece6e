// SPDX-License-Identifier: Apache-2.0
// The real-to-real passes' 2D walks (src/r2r/cufft/r2r_rows.hpp), row-wise and interleaved, checked on the CPU by
// walking every thread of the grid the launcher picks, and of grids too small for the work (so that both stride
// loops turn): every item of every row is visited exactly once, with the row's offsets as r2r_row_offsets gives them.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "r2r/cufft/r2r_rows.hpp"

namespace {

using cuplan::detail::R2RGridDims;
using cuplan::detail::R2RGridPlace;
using cuplan::detail::R2RRows;
using cuplan::detail::R2RWalk;

// Rows over the axes `extents` (outermost first) with the given source and destination strides.
R2RRows rows_of(const std::vector<std::int64_t>& extents, const std::vector<std::int64_t>& src_strides,
                const std::vector<std::int64_t>& dst_strides) {
  R2RRows r;
  r.dims = static_cast<int>(extents.size());
  r.rows = 1;
  for (int d = 0; d < r.dims; ++d) {
    const auto i = static_cast<std::size_t>(d);
    r.digit[d] = {extents[i], src_strides[i], dst_strides[i]};
    r.rows *= extents[i];
  }
  return r;
}

void expect_each_item_once(R2RWalk walk, const R2RRows& r, std::int64_t items, R2RGridDims grid,
                           std::int64_t block_dim) {
  SCOPED_TRACE(::testing::Message() << (walk == R2RWalk::interleaved ? "interleaved" : "row-wise") << " rows " << r.rows
                                    << " items " << items << " grid " << grid.x << " x " << grid.y << " block "
                                    << block_dim);
  std::vector<int> visits(static_cast<std::size_t>(r.rows * items), 0);
  int wrong_offsets = 0;
  for (std::int64_t by = 0; by < grid.y; ++by)
    for (std::int64_t bx = 0; bx < grid.x; ++bx)
      for (std::int64_t t = 0; t < block_dim; ++t) {
        const R2RGridPlace place{bx, by, t, block_dim, grid.x, grid.y};
        const auto body = [&](std::int64_t row, std::int64_t item, std::int64_t src, std::int64_t dst) {
          ASSERT_GE(row, 0);
          ASSERT_LT(row, r.rows);
          ASSERT_GE(item, 0);
          ASSERT_LT(item, items);
          ++visits[static_cast<std::size_t>(row * items + item)];
          std::int64_t want_src = 0, want_dst = 0;
          cuplan::detail::r2r_row_offsets(r, row, want_src, want_dst);
          wrong_offsets += (src != want_src) + (dst != want_dst);
        };
        if (walk == R2RWalk::interleaved)
          cuplan::detail::r2r_walk_interleaved(r, items, place, body);
        else
          cuplan::detail::r2r_walk_rows(r, items, place, body);
      }
  for (std::size_t i = 0; i < visits.size(); ++i)
    ASSERT_EQ(visits[i], 1) << "row " << i / items << " item " << i % items;
  EXPECT_EQ(wrong_offsets, 0);
}

TEST(R2RRows, EveryItemOfEveryRowOnceOnTheLaunchersGridAndOnSmallerGrids) {
  const std::vector<R2RRows> cases{
      rows_of({7}, {1000}, {1200}),           // one batch axis
      rows_of({3, 5}, {9000, 1000}, {1, 3}),  // two, strides in any order
      rows_of({2, 3, 4}, {5000, 7, 1700}, {24, 8, 2}),
      rows_of({1}, {0}, {0}),
      rows_of({130}, {1}, {1}),  // interleaved: rows next to each other
      rows_of({3, 97}, {97, 1}, {97, 1}),
  };
  for (const R2RRows& r : cases)
    for (std::int64_t items : {1, 3, 128, 129, 300, 1000, 2049}) {
      for (R2RWalk walk : {R2RWalk::row_wise, R2RWalk::interleaved}) {
        expect_each_item_once(walk, r, items, cuplan::detail::r2r_walk_grid(walk, r.rows, items, 64), 64);
        expect_each_item_once(walk, r, items, R2RGridDims{1, 1}, 32);  // both stride loops turn
        expect_each_item_once(walk, r, items, R2RGridDims{3, 2}, 32);
      }
    }
}

// The row offsets against the mixed-radix digits worked out directly, for extents and row numbers on both sides of
// 2^32 (where the digits divide in 32 or 64 bits) and one digit alone (no division at all).
TEST(R2RRows, RowOffsetsAreTheDigitsTimesTheirStrides) {
  const std::int64_t big = (std::int64_t{1} << 33) + 7;
  const std::vector<R2RRows> cases{
      rows_of({7}, {1000}, {1200}),
      rows_of({3, 5}, {9000, 1000}, {1, 3}),
      rows_of({2, 3, 4}, {5000, 7, 1700}, {24, 8, 2}),
      rows_of({5, big}, {3, 11}, {13, 17}),
      rows_of({big, 3}, {2, 5}, {7, 1}),
      rows_of({3, 4, 5, 6, 7}, {1, 3, 12, 60, 360}, {2520, 630, 126, 21, 3}),
  };
  for (const R2RRows& r : cases) {
    const std::int64_t step = r.rows > 5000 ? r.rows / 4999 : 1;
    for (std::int64_t row = 0; row < r.rows; row += step) {
      std::int64_t want_src = 0, want_dst = 0, rest = row;
      for (int d = r.dims - 1; d >= 0; --d) {
        want_src += (rest % r.digit[d].extent) * r.digit[d].src_stride;
        want_dst += (rest % r.digit[d].extent) * r.digit[d].dst_stride;
        rest /= r.digit[d].extent;
      }
      std::int64_t src = -1, dst = -1;
      cuplan::detail::r2r_row_offsets(r, row, src, dst);
      ASSERT_EQ(src, want_src) << "row " << row << " of " << r.rows;
      ASSERT_EQ(dst, want_dst) << "row " << row << " of " << r.rows;
    }
  }
}

TEST(R2RRows, TheWalkAndItsGridStayWithinCudasLimits) {
  using cuplan::detail::r2r_walk;
  using cuplan::detail::r2r_walk_grid;
  constexpr std::int64_t huge = std::int64_t{1} << 40;
  const R2RGridDims rows_big = r2r_walk_grid(R2RWalk::row_wise, huge, huge, 256);
  EXPECT_EQ(rows_big.x, 1024);
  EXPECT_EQ(rows_big.y, 65535);
  const R2RGridDims interleaved_big = r2r_walk_grid(R2RWalk::interleaved, huge, huge, 256);
  EXPECT_EQ(interleaved_big.x, std::int64_t{1} << 20);
  EXPECT_EQ(interleaved_big.y, 1);
  EXPECT_EQ(r2r_walk_grid(R2RWalk::interleaved, 128, huge, 256).y, 8192);
  EXPECT_EQ(r2r_walk_grid(R2RWalk::interleaved, 128, 5, 256).y, 5);
  // [4096, 16384] along the last axis: 8 blocks of 256 threads per row, 8 items per thread.
  EXPECT_EQ(r2r_walk_grid(R2RWalk::row_wise, 4096, 16384, 256).x, 8);
  EXPECT_EQ(r2r_walk_grid(R2RWalk::row_wise, 4096, 16384, 256).y, 4096);
  // 512^3 along axis 0: 2^18 interleaved rows of 512 take 1024 x 8 blocks, 64 items per thread.
  EXPECT_EQ(r2r_walk_grid(R2RWalk::interleaved, 512 * 512, 512, 256).x, 1024);
  EXPECT_EQ(r2r_walk_grid(R2RWalk::interleaved, 512 * 512, 512, 256).y, 8);
  EXPECT_EQ(r2r_walk(false, 1, 128), R2RWalk::row_wise);
  EXPECT_EQ(r2r_walk(false, 1 << 20, 127), R2RWalk::per_item);
  EXPECT_EQ(r2r_walk(true, 128, 2), R2RWalk::interleaved);
  EXPECT_EQ(r2r_walk(true, 127, 4096), R2RWalk::per_item);
}

}  // namespace
