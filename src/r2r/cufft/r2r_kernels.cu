// SPDX-License-Identifier: Apache-2.0
// The pre-pass and post-pass kernels of a real-to-real axis: one thread per work item of a row, rows over the grid.

#include <algorithm>

#include "r2r/cufft/r2r_kernels.hpp"

namespace cuplan::detail {
namespace {

__device__ inline void row_offsets(const R2RRows& r, std::int64_t row, std::int64_t& src, std::int64_t& dst) {
  src = 0;
  dst = 0;
  for (int d = r.dims - 1; d >= 0; --d) {
    const std::int64_t i = row % r.extent[d];
    row /= r.extent[d];
    src += i * r.src_stride[d];
    dst += i * r.dst_stride[d];
  }
}

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

template <class T>
__global__ void pre_pass(R2RPassArgs args) {
  const std::int64_t items = args.algorithm.pre_items;
  const std::int64_t total = items * args.rows.rows;
  const std::int64_t n = args.algorithm.n;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t row, j;
    split(args, idx, items, row, j);
    std::int64_t src_offset, dst_offset;
    row_offsets(args.rows, row, src_offset, dst_offset);
    const T* src = static_cast<const T*>(args.src) + src_offset;
    const std::int64_t stride = args.src_axis_stride;
    const T first = static_cast<T>(args.first), last = static_cast<T>(args.last);
    const auto load = [&](std::int64_t i) {
      T v = src[i * stride];
      if (i == 0) v *= first;
      if (i == n - 1) v *= last;
      return v;
    };
    const bool complex = args.algorithm.fft != R2RFftType::r2c;
    r2r_pre_item<T>(args.algorithm, j, load,
                    row_view(args, static_cast<T*>(args.fft_in), row, args.algorithm.a_scalars, complex));
  }
}

template <class T>
__global__ void post_pass(R2RPassArgs args) {
  const std::int64_t items = args.algorithm.post_items;
  const std::int64_t total = items * args.rows.rows;
  const std::int64_t n = args.algorithm.n;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t row, k;
    split(args, idx, items, row, k);
    std::int64_t src_offset, dst_offset;
    row_offsets(args.rows, row, src_offset, dst_offset);
    T* dst = static_cast<T*>(args.dst) + dst_offset;
    const std::int64_t stride = args.dst_axis_stride;
    const double scale = args.scale, first = args.first, last = args.last;
    const auto store = [&](std::int64_t i, T v) {
      double f = scale;
      if (i == 0) f *= first;
      if (i == n - 1) f *= last;
      dst[i * stride] = f == 1.0 ? v : static_cast<T>(v * static_cast<T>(f));
    };
    const bool complex = args.algorithm.fft != R2RFftType::c2r;
    r2r_post_item<T>(
        args.algorithm, k,
        row_view(args, const_cast<T*>(static_cast<const T*>(args.fft_out)), row, args.algorithm.b_scalars, complex),
        store);
  }
}

unsigned grid_for(std::int64_t total) {
  constexpr std::int64_t block = 256;
  return static_cast<unsigned>(std::min<std::int64_t>((total + block - 1) / block, std::int64_t{1} << 20));
}

}  // namespace

cudaError_t launch_r2r_pre_pass(const R2RPassArgs& args, cudaStream_t stream) noexcept {
  const std::int64_t total = args.algorithm.pre_items * args.rows.rows;
  if (total == 0) return cudaSuccess;
  if (args.double_precision)
    pre_pass<double><<<grid_for(total), 256, 0, stream>>>(args);
  else
    pre_pass<float><<<grid_for(total), 256, 0, stream>>>(args);
  return cudaGetLastError();
}

cudaError_t launch_r2r_post_pass(const R2RPassArgs& args, cudaStream_t stream) noexcept {
  const std::int64_t total = args.algorithm.post_items * args.rows.rows;
  if (total == 0) return cudaSuccess;
  if (args.double_precision)
    post_pass<double><<<grid_for(total), 256, 0, stream>>>(args);
  else
    post_pass<float><<<grid_for(total), 256, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace cuplan::detail
