// SPDX-License-Identifier: Apache-2.0
// The one description of a chunk's place in its operand (CPU only): every element of the operand in exactly one
// chunk, offsets against a brute-force walk for strided and negative-stride operands, sizes that do not divide by
// the chunk, one chunk, fixed-size chunks, and the typed errors for what cannot be a grid.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cuplan/errors.hpp"
#include "plan/staging/chunk_grid.hpp"
#include "support/misuse_table.hpp"

namespace cuplan::detail::staging {
namespace {

// `units` in chunks of `chunk` units, every chunk but the last full.
ChunkPlan split_of(std::int64_t units, std::int64_t chunk) {
  return fixed_chunks(units, chunk, "test");
}

// Element offsets of every index of `shape` under `strides`, each index visited once (row-major).
void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& visit) {
  Shape index = Shape::filled(shape.size(), 0);
  for (;;) {
    visit(index);
    int a = shape.size() - 1;
    while (a >= 0 && ++index[a] == shape[a]) index[a--] = 0;
    if (a < 0) return;
  }
}

std::int64_t offset_of(const Shape& index, const Strides& strides) {
  std::int64_t at = 0;
  for (int a = 0; a < index.size(); ++a) at += index[a] * strides[a];
  return at;
}

// Every index of the grid's shape lies in exactly one chunk's block; offset(c) is the block's first element under
// the given strides; the blocks walk the outer axes row-major and the split axis in the split's ranges.
void expect_partition(const ChunkGrid& grid, const Shape& shape, const Strides& strides) {
  std::vector<int> hits(static_cast<std::size_t>(checked_numel(shape)), 0);
  Strides row_major = Strides::filled(shape.size(), 1);
  for (int a = shape.size() - 2; a >= 0; --a) row_major[a] = row_major[a + 1] * shape[a + 1];
  for (std::int64_t c = 0; c < grid.count(); ++c) {
    const ChunkBlock block = grid.block(c);
    EXPECT_EQ(grid.offset(c, strides), block.offset(strides)) << "chunk " << c;
    if (grid.split_axis() >= 0) {
      EXPECT_EQ(block.begin[grid.split_axis()], grid.range(c).begin) << "chunk " << c;
      EXPECT_EQ(block.extent[grid.split_axis()], grid.range(c).size) << "chunk " << c;
    }
    for_each_index(block.extent, [&](const Shape& within) {
      Shape index = within;
      for (int a = 0; a < shape.size(); ++a) index[a] += block.begin[a];
      for (int a = 0; a < shape.size(); ++a) ASSERT_LT(index[a], shape[a]) << "chunk " << c << " axis " << a;
      ++hits[static_cast<std::size_t>(offset_of(index, row_major))];
      // The element's offset in the operand is the block's offset plus its offset within the block.
      EXPECT_EQ(offset_of(index, strides), grid.offset(c, strides) + offset_of(within, strides));
    });
  }
  for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "element " << i;
}

TEST(StagingChunkGrid, SplitThatDoesNotDivideLeavesAShortLastChunk) {
  const Shape shape{3, 10, 4};
  const int outer[] = {0};
  const ChunkGrid grid(shape, outer, 1, split_of(10, 4), "FFT");
  EXPECT_EQ(grid.count(), 9);  // 3 outer positions x (4, 4, 2)
  EXPECT_EQ(grid.outer_count(), 3);
  EXPECT_EQ(grid.range(2).begin, 8);
  EXPECT_EQ(grid.range(2).size, 2);
  EXPECT_EQ(grid.range(3).begin, 0);  // the next outer position starts the split axis again
  EXPECT_EQ(grid.block(5).begin[0], 1);
  expect_partition(grid, shape, Strides{40, 4, 1});
}

TEST(StagingChunkGrid, StridedAndNegativeStridesOffsetEveryChunk) {
  const Shape shape{2, 3, 7, 5};
  const int outer[] = {2, 0};  // outermost in memory first, not in axis order
  const ChunkGrid grid(shape, outer, 3, split_of(5, 2), "FFT");
  EXPECT_EQ(grid.count(), 2 * 7 * 3);
  expect_partition(grid, shape, Strides{1000, -7, 60, 3});
  // The first outer axis (2) is outermost, axis 0 next, the split axis innermost.
  const ChunkBlock b = grid.block(1 * 3 + 2);  // outer position 1 -> axis 2 at 0, axis 0 at 1; split range 2
  EXPECT_EQ(b.begin[2], 0);
  EXPECT_EQ(b.begin[0], 1);
  EXPECT_EQ(b.begin[3], 4);
  EXPECT_EQ(b.extent[3], 1);
}

TEST(StagingChunkGrid, RandomGridsPartitionTheirOperand) {
  std::mt19937 rng(27);
  for (int trial = 0; trial < 50; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 4);
    Shape shape;
    Strides strides;
    for (int a = 0; a < rank; ++a) {
      shape.push_back(1 + static_cast<std::int64_t>(rng() % 6));
      strides.push_back(static_cast<std::int64_t>(rng() % 50) - 25);
    }
    std::vector<int> axes(static_cast<std::size_t>(rank));
    for (int a = 0; a < rank; ++a) axes[static_cast<std::size_t>(a)] = a;
    std::shuffle(axes.begin(), axes.end(), rng);
    const int split_axis = rng() % 3 == 0 ? -1 : axes.back();
    const std::size_t outer = rng() % static_cast<std::size_t>(split_axis < 0 ? rank + 1 : rank);
    const std::vector<int> outer_axes(axes.begin(), axes.begin() + static_cast<std::ptrdiff_t>(outer));
    const std::int64_t units = split_axis < 0 ? 1 : shape[split_axis];
    const ChunkGrid grid(shape, outer_axes, split_axis, split_of(units, 1 + static_cast<std::int64_t>(rng() % 4)),
                         "test");
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_partition(grid, shape, strides);
  }
}

TEST(StagingChunkGrid, NoSplitAxisIsOneChunkPerOuterPosition) {
  const Shape shape{4, 6};
  const int outer[] = {0};
  const ChunkGrid grid(shape, outer, -1, split_of(1, 1), "FFT");
  EXPECT_EQ(grid.count(), 4);
  expect_partition(grid, shape, Strides{6, 1});
  const ChunkGrid whole(shape, {}, -1, split_of(1, 1), "FFT");
  EXPECT_EQ(whole.count(), 1);
  EXPECT_EQ(whole.offset(0, Strides{6, 1}), 0);
  EXPECT_EQ(whole.block(0).extent, shape);
}

TEST(StagingChunkGrid, OneChunkCoversTheWholeSplitAxis) {
  const Shape shape{9};
  const ChunkGrid grid(shape, {}, 0, split_of(9, 100), "cuplan::copy");
  EXPECT_EQ(grid.count(), 1);
  EXPECT_EQ(grid.range(0).begin, 0);
  EXPECT_EQ(grid.range(0).size, 9);
  expect_partition(grid, shape, Strides{1});
}

TEST(StagingChunkGrid, FixedChunksAreFullButTheLast) {
  const ChunkPlan plan = fixed_chunks(50, 16, "cuplan::copy");
  EXPECT_EQ(plan.count, 4);
  EXPECT_EQ(plan.chunk, 16);
  EXPECT_EQ(plan.last, 2);
  EXPECT_EQ(plan.slots, max_slots);
  EXPECT_EQ(plan.range(3).begin, 48);
  EXPECT_EQ(plan.range(3).size, 2);
  const ChunkPlan even = fixed_chunks(48, 16, "cuplan::copy");
  EXPECT_EQ(even.count, 3);
  EXPECT_EQ(even.last, 16);
  const ChunkPlan one = fixed_chunks(5, 16, "cuplan::copy");  // smaller than a chunk: one chunk of it all
  EXPECT_EQ(one.count, 1);
  EXPECT_EQ(one.chunk, 5);
  EXPECT_EQ(one.last, 5);
  EXPECT_EQ(one.slots, 1);
  EXPECT_EQ(fixed_chunks(0, 16, "cuplan::copy").count, 0);
}

TEST(StagingChunkGrid, WhatCannotBeAGridIsATypedError) {
  static const int outer0[] = {0}, outer_twice[] = {0, 0}, outer_out_of_range[] = {2};
  constexpr auto invalid = cuplan::testing::Expect::invalid_argument;
  const std::vector<cuplan::testing::MisuseRow> rows = {
      {"zero_extent",
       [] {
         (void)ChunkGrid(Shape{4, 0}, {}, 0, split_of(4, 2), "FFT");
       },
       invalid,
       {"FFT", "got 0 along axis 1"}},
      {"rank_0", [] { (void)ChunkGrid(Shape{}, {}, -1, split_of(1, 1), "FFT"); }, invalid, {"rank 0"}},
      {"outer_axis_twice",
       [] {
         (void)ChunkGrid(Shape{4, 5}, outer_twice, 1, split_of(5, 2), "FFT");
       },
       invalid,
       {"axis 0 is already an outer axis"}},
      {"split_axis_also_outer",
       [] {
         (void)ChunkGrid(Shape{4, 5}, outer0, 0, split_of(4, 2), "FFT");
       },
       invalid,
       {"split axis", "already an outer axis"}},
      {"outer_axis_out_of_range",
       [] {
         (void)ChunkGrid(Shape{4, 5}, outer_out_of_range, 1, split_of(5, 2), "FFT");
       },
       invalid,
       {"expected an axis in [0, 2), got 2"}},
      {"split_short_of_its_axis",
       [] {
         (void)ChunkGrid(Shape{4, 5}, {}, 1, split_of(4, 2), "Matmul");
       },
       invalid,
       {"Matmul", "covering the 5 units", "covering 4"}},
      {"no_split",
       [] {
         (void)ChunkGrid(Shape{4, 5}, {}, 1, ChunkPlan{}, "Matmul");
       },
       invalid,
       {"0 chunks"}},
      {"zero_chunk",
       [] { (void)fixed_chunks(10, 0, "cuplan::copy"); },
       invalid,
       {"cuplan::copy", "chunk: expected >= 1 units, got 0"}},
      {"negative_units", [] { (void)fixed_chunks(-1, 4, "cuplan::copy"); }, invalid, {"expected a count >= 0, got -1"}},
  };
  for (const cuplan::testing::MisuseRow& row : rows) cuplan::testing::check_row(row);
}

}  // namespace
}  // namespace cuplan::detail::staging
