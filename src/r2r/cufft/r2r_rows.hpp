// SPDX-License-Identifier: Apache-2.0
#pragma once
// The rows of one axis of a real-to-real transform: every index of the other axes, as a mixed-radix number, with the
// offsets of a row in the axis's source and destination. Shared by the pass kernels and the fused kernels.

#include <cstdint>

#include "r2r/algorithms.hpp"
#include "runtime/row_walk.hpp"

#if defined(__CUDA_ARCH__)
#define CUPLAN_R2R_UNROLL_4 _Pragma("unroll 4")
#else
#define CUPLAN_R2R_UNROLL_4
#endif

namespace cuplan::detail {

/// The rows of one axis pass: every index of the other axes, as a mixed-radix number (outermost first), with the
/// element strides of the pass's source and destination.
struct R2RRows {
  /// One digit of the row number: an axis's extent and its strides in the source and the destination.
  struct Digit {
    std::int64_t extent = 1;
    std::int64_t src_stride = 0;
    std::int64_t dst_stride = 0;
  };
  static constexpr int max_dims = 8;
  int dims = 0;
  Digit digit[max_dims] = {};
  std::int64_t rows = 0;
};

/// The element offsets of row `row` in the source and the destination. The outermost digit takes what the inner
/// ones leave, without a division; the others divide in 32 bits where row and extent fit (a 64-bit division is a
/// long instruction sequence on a GPU, and a pass thread works out one row's offsets for a few elements).
CUPLAN_R2R_HD void r2r_row_offsets(const R2RRows& r, std::int64_t row, std::int64_t& src, std::int64_t& dst) {
  src = 0;
  dst = 0;
  for (int d = r.dims - 1; d > 0; --d) {
    const R2RRows::Digit& digit = r.digit[d];
    std::int64_t quotient;
    if (((static_cast<std::uint64_t>(row) | static_cast<std::uint64_t>(digit.extent)) >> 32) == 0)
      quotient = static_cast<std::uint32_t>(row) / static_cast<std::uint32_t>(digit.extent);
    else
      quotient = row / digit.extent;
    const std::int64_t i = row - quotient * digit.extent;
    row = quotient;
    src += i * digit.src_stride;
    dst += i * digit.dst_stride;
  }
  if (r.dims > 0) {
    src += row * r.digit[0].src_stride;
    dst += row * r.digit[0].dst_stride;
  }
}

/// The bridge of one axis's post-pass into the next axis's FFT input (r2r_kernels.hpp, R2RBridge): the rows of
/// `axis` (the other axes of extent > 1, outermost first, as each pass numbers them) with, per digit, source stride 1
/// on the next axis's digit and 0 elsewhere (a row's source offset is then its index along the next axis, which the
/// next axis's reordering maps to its FFT input index) and destination strides into the next axis's FFT input
/// buffer for every other digit; and the buffer strides of one step along `axis` and of one FFT input index. The
/// next axis's rows are numbered the same way (its other axes, outermost first), each of `next_scalars` real
/// scalars, one after another or interleaved (row index fastest).
struct R2RBridgeLayout {
  R2RRows rows;
  std::int64_t axis_stride = 0;
  std::int64_t column_stride = 0;
};
inline R2RBridgeLayout r2r_bridge_layout(const std::int64_t* shape, int ndim, int axis, int next, bool next_interleaved,
                                         std::int64_t next_scalars) {
  // The next axis's row number as a sum of index times stride over its other axes (the last fastest).
  std::int64_t row_stride[R2RRows::max_dims] = {};
  std::int64_t next_rows = 1;
  for (int a = ndim - 1; a >= 0; --a) {
    if (a == next || shape[a] == 1) continue;
    row_stride[a] = next_rows;
    next_rows *= shape[a];
  }
  const std::int64_t row_scale = next_interleaved ? 1 : next_scalars;
  R2RBridgeLayout layout;
  layout.rows.rows = 1;
  for (int a = 0; a < ndim; ++a) {
    if (a == axis || shape[a] == 1) continue;
    layout.rows.digit[layout.rows.dims++] = {shape[a], a == next ? 1 : 0, a == next ? 0 : row_stride[a] * row_scale};
    layout.rows.rows *= shape[a];
  }
  layout.axis_stride = row_stride[axis] * row_scale;
  layout.column_stride = next_interleaved ? next_rows : 1;
  return layout;
}

/// A thread's place in a pass's grid, and a grid's blocks (runtime/row_walk.hpp).
using R2RGridPlace = RowGridPlace;
using R2RGridDims = RowWalkGrid;

/// The row-wise walk of a pass over rows lying one after another (walk_rows()): a row's offsets once per row and
/// thread. `body(row, item, src_offset, dst_offset)`.
template <class Body>
CUPLAN_R2R_HD void r2r_walk_rows(const R2RRows& r, std::int64_t items, const R2RGridPlace& p, Body&& body) {
  walk_rows(r.rows, items, p, [&r, &body](std::int64_t row) {
    std::int64_t src_offset, dst_offset;
    r2r_row_offsets(r, row, src_offset, dst_offset);
    return [&body, row, src_offset, dst_offset](std::int64_t item) { body(row, item, src_offset, dst_offset); };
  });
}

/// The walk of a pass over interleaved rows (an axis other than the innermost, element j of row r at j * rows + r in
/// the FFT's buffer): grid x walks the rows, so that neighbouring threads take neighbouring rows and every access
/// stays coalesced, and grid y a row's items. A thread works out its row's offsets once for every item it takes.
template <class Body>
CUPLAN_R2R_HD void r2r_walk_interleaved(const R2RRows& r, std::int64_t items, const R2RGridPlace& p, Body&& body) {
  for (std::int64_t row = p.block_x * p.block_dim + p.thread_x; row < r.rows; row += p.grid_x * p.block_dim) {
    std::int64_t src_offset, dst_offset;
    r2r_row_offsets(r, row, src_offset, dst_offset);
    // Unrolled on the device: a thread's items are independent, so their loads can be in flight together.
    CUPLAN_R2R_UNROLL_4
    for (std::int64_t item = p.block_y; item < items; item += p.grid_y) body(row, item, src_offset, dst_offset);
  }
}

/// How a pass walks its rows. Row-wise (r2r_walk_rows) for rows one after another of 128 items or more, interleaved
/// (r2r_walk_interleaved) for interleaved rows when there are 128 or more of them: either keeps a block's threads
/// busy. Otherwise one thread per item over the whole pass, its row's offsets worked out per item.
enum class R2RWalk : std::uint8_t { per_item, row_wise, interleaved };
CUPLAN_R2R_HD R2RWalk r2r_walk(bool interleaved, std::int64_t rows, std::int64_t items) {
  if (interleaved) return rows >= 128 ? R2RWalk::interleaved : R2RWalk::per_item;
  return items >= 128 ? R2RWalk::row_wise : R2RWalk::per_item;
}

/// The grid of a row-wise or interleaved walk with blocks of `block_dim` threads. Row-wise: row_walk_grid().
/// Interleaved: x covers the rows (at most 2^20 blocks), y the items, about 8192 blocks in all, so that each thread
/// takes several items of its row.
CUPLAN_R2R_HD R2RGridDims r2r_walk_grid(R2RWalk walk, std::int64_t rows, std::int64_t items, std::int64_t block_dim) {
  if (walk == R2RWalk::interleaved) {
    const std::int64_t x = row_walk_clamp((rows + block_dim - 1) / block_dim, 1, std::int64_t{1} << 20);
    const std::int64_t y_limit = items < 65535 ? items : 65535;
    return {x, row_walk_clamp((8192 + x - 1) / x, 1, y_limit < 1 ? 1 : y_limit)};
  }
  return row_walk_grid(rows, items, block_dim);
}

}  // namespace cuplan::detail
