// SPDX-License-Identifier: Apache-2.0
#pragma once
// The row-wise walk of a pass kernel over rows of items (the convolution's separate passes, the real-to-real passes):
// grid y walks the rows (a grid-stride loop) and grid x the items of a row, so that a row's position is worked out
// once per row and thread, not per element. Those are 64-bit divisions, a long instruction sequence on a GPU, and per
// element they made memory-bound passes compute-bound. A thread's place is plain numbers, so that the host can walk a
// grid as the device does (tests).

#include <cstdint>

#if defined(__CUDACC__)
#define CUPLAN_ROW_WALK_HD __host__ __device__ inline
#else
#define CUPLAN_ROW_WALK_HD inline
#endif

namespace cuplan::detail {

/// One thread's place in a grid (blockIdx.x/y, threadIdx.x, blockDim.x, gridDim.x/y).
struct RowGridPlace {
  std::int64_t block_x = 0, block_y = 0, thread_x = 0, block_dim = 1, grid_x = 1, grid_y = 1;
};

/// A grid's blocks along x and y.
struct RowWalkGrid {
  std::int64_t x = 1, y = 1;
};

CUPLAN_ROW_WALK_HD std::int64_t row_walk_clamp(std::int64_t v, std::int64_t lo, std::int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

/// Items of a row each thread of walk_rows() takes (at least, where the row is long enough): with one item per thread,
/// every thread would work out a row's position for a single element, the per-element cost the walk is for avoiding.
inline constexpr std::int64_t row_walk_items_per_thread = 8;

/// The grid of walk_rows() over `rows` rows of `items` items with blocks of `block_dim` threads: x covers a row's items
/// at row_walk_items_per_thread per thread (at most 1024 blocks, the rest by the stride loop), y the rows (at most
/// 65535, CUDA's limit for grid y).
CUPLAN_ROW_WALK_HD RowWalkGrid row_walk_grid(std::int64_t rows, std::int64_t items, std::int64_t block_dim) {
  const std::int64_t per_block = block_dim * row_walk_items_per_thread;
  return {row_walk_clamp((items + per_block - 1) / per_block, 1, 1024), row_walk_clamp(rows, 1, 65535)};
}

/// Walks this thread's share of `rows` rows of `items` items: `row_body(row)` once per row the thread takes, returning
/// the row's `item_body(item)`, called for each of the row's items the thread takes.
template <class RowBody>
CUPLAN_ROW_WALK_HD void walk_rows(std::int64_t rows, std::int64_t items, const RowGridPlace& p, RowBody&& row_body) {
  for (std::int64_t row = p.block_y; row < rows; row += p.grid_y) {
    auto item_body = row_body(row);
    for (std::int64_t item = p.block_x * p.block_dim + p.thread_x; item < items; item += p.grid_x * p.block_dim)
      item_body(item);
  }
}

#if defined(__CUDACC__)
/// The calling thread's place in its grid.
__device__ inline RowGridPlace this_row_grid_place() {
  return {blockIdx.x, blockIdx.y, threadIdx.x, blockDim.x, gridDim.x, gridDim.y};
}
#endif

}  // namespace cuplan::detail
