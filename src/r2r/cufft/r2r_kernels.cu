// SPDX-License-Identifier: Apache-2.0
// The pre-pass and post-pass kernels of a real-to-real axis: one thread per work item of a row, rows over the grid.

#include <algorithm>

#include "r2r/cufft/r2r_kernels.hpp"

namespace cuplan::detail {
namespace {

// Item `idx` of a pass as (row, item): items fastest for rows one after another, rows fastest when interleaved.
__device__ inline void split(const R2RPassArgs& args, std::int64_t idx, std::int64_t items, std::int64_t& row,
                             std::int64_t& item) {
  if (args.interleaved) {
    item = idx / args.rows.rows;
    row = idx - item * args.rows.rows;
  } else {
    row = idx / items;
    item = idx - row * items;
  }
}

// The FFT's row `row` of `scalars` scalars per row, complex or real, in the pass's layout.
template <class T>
__device__ inline R2RRowView<T> row_view(const R2RPassArgs& args, T* base, std::int64_t row, std::int64_t scalars,
                                         bool complex) {
  if (!args.interleaved) return {base + row * scalars, complex ? 2 : 1, complex};
  return {base + (complex ? 2 : 1) * row, (complex ? 2 : 1) * args.rows.rows, complex};
}

// Every work item of a pass, `items` per row: `body(row, item, src_offset, dst_offset)` with the row's offsets in the
// pass's source and destination, walked as r2r_walk() says: row-wise or interleaved on a 2D grid, with a row's
// offsets (64-bit divisions) worked out once per row and thread, else one grid-stride loop over every item.
template <class Body>
__device__ inline void for_each_item(const R2RPassArgs& args, std::int64_t items, Body&& body) {
  const R2RGridPlace place = this_row_grid_place();
  switch (r2r_walk(args.interleaved, args.rows.rows, items)) {
    case R2RWalk::row_wise:
      r2r_walk_rows(args.rows, items, place, body);
      return;
    case R2RWalk::interleaved:
      r2r_walk_interleaved(args.rows, items, place, body);
      return;
    case R2RWalk::per_item:
      break;
  }
  const std::int64_t total = items * args.rows.rows;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t row, item;
    split(args, idx, items, row, item);
    std::int64_t src_offset, dst_offset;
    r2r_row_offsets(args.rows, row, src_offset, dst_offset);
    body(row, item, src_offset, dst_offset);
  }
}

template <class T>
__global__ void pre_pass(R2RPassArgs args) {
  const std::int64_t n = args.algorithm.n;
  const bool complex = args.algorithm.fft != R2RFftType::r2c;
  const T first = static_cast<T>(args.first), last = static_cast<T>(args.last);
  for_each_item(args, args.algorithm.pre_items,
                [&](std::int64_t row, std::int64_t j, std::int64_t src_offset, std::int64_t /*dst_offset*/) {
                  const T* src = static_cast<const T*>(args.src) + src_offset;
                  const std::int64_t stride = args.src_axis_stride;
                  const auto load = [&](std::int64_t i) {
                    T v = src[i * stride];
                    if (i == 0) v *= first;
                    if (i == n - 1) v *= last;
                    return v;
                  };
                  r2r_pre_item<T>(args.algorithm, j, load,
                                  row_view(args, static_cast<T*>(args.fft_in), row, args.algorithm.a_scalars, complex));
                });
}

template <class T>
__global__ void post_pass(R2RPassArgs args) {
  const std::int64_t n = args.algorithm.n;
  const bool complex = args.algorithm.fft != R2RFftType::c2r;
  const double scale = args.scale, first = args.first, last = args.last;
  for_each_item(args, args.algorithm.post_items,
                [&](std::int64_t row, std::int64_t k, std::int64_t /*src_offset*/, std::int64_t dst_offset) {
                  T* dst = static_cast<T*>(args.dst) + dst_offset;
                  const std::int64_t stride = args.dst_axis_stride;
                  const auto store = [&](std::int64_t i, T v) {
                    double f = scale;
                    if (i == 0) f *= first;
                    if (i == n - 1) f *= last;
                    dst[i * stride] = f == 1.0 ? v : static_cast<T>(v * static_cast<T>(f));
                  };
                  r2r_post_item<T>(args.algorithm, k,
                                   row_view(args, const_cast<T*>(static_cast<const T*>(args.fft_out)), row,
                                            args.algorithm.b_scalars, complex),
                                   store);
                });
}

// Launches one pass of `items` work items per row: `kernel_f32` or `kernel_f64` by the pass's precision, on the
// grid for_each_item walks.
cudaError_t launch_pass(const R2RPassArgs& args, std::int64_t items, void (*kernel_f32)(R2RPassArgs),
                        void (*kernel_f64)(R2RPassArgs), cudaStream_t stream) noexcept {
  constexpr std::int64_t block = 256;
  const std::int64_t total = items * args.rows.rows;
  if (total == 0) return cudaSuccess;
  dim3 grid;
  if (const R2RWalk walk = r2r_walk(args.interleaved, args.rows.rows, items); walk != R2RWalk::per_item) {
    const R2RGridDims dims = r2r_walk_grid(walk, args.rows.rows, items, block);
    grid = dim3(static_cast<unsigned>(dims.x), static_cast<unsigned>(dims.y));
  } else {
    grid = dim3(static_cast<unsigned>(std::min<std::int64_t>((total + block - 1) / block, std::int64_t{1} << 20)));
  }
  (args.double_precision ? kernel_f64 : kernel_f32)<<<grid, static_cast<unsigned>(block), 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_r2r_pre_pass(const R2RPassArgs& args, cudaStream_t stream) noexcept {
  return launch_pass(args, args.algorithm.pre_items, pre_pass<float>, pre_pass<double>, stream);
}

cudaError_t launch_r2r_post_pass(const R2RPassArgs& args, cudaStream_t stream) noexcept {
  return launch_pass(args, args.algorithm.post_items, post_pass<float>, post_pass<double>, stream);
}

}  // namespace cuplan::detail
