// SPDX-License-Identifier: Apache-2.0
// The pre-pass and post-pass kernels of a real-to-real axis: one thread per work item of a row, rows over the grid;
// and the post-pass bridged into the next axis's FFT input where the next axis's pre-pass is a permutation.
// Each kernel is compiled for one algorithm, with the twiddles and their arithmetic in the transform's precision:
// with every algorithm's branch read at run time and a sincospi in double per element, the kernels held 112 (pre)
// registers and were compute-bound (post), and ran at 27-45 % of the memory bandwidth of an H100 (ncu, 512^3 f32).

#include <algorithm>
#include <cstddef>
#include <utility>

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

// The launch's algorithm with its `algorithm` made a constant, so that the algebra's switch folds away.
template <R2RAlgorithm Algorithm>
__device__ AxisAlgorithm compiled_algorithm(const R2RPassArgs& args) {
  AxisAlgorithm al = args.algorithm;
  al.algorithm = Algorithm;
  return al;
}

// The passes never run in place (a pass permutes a row across threads), so the source and the destination of a
// pass do not overlap: __restrict__ lets the compiler issue a thread's loads of several items ahead of its stores.
template <class T, R2RAlgorithm Algorithm>
__launch_bounds__(256) __global__ void pre_pass(R2RPassArgs args) {
  const AxisAlgorithm al = compiled_algorithm<Algorithm>(args);
  const std::int64_t n = al.n;
  const bool complex = al.fft != R2RFftType::r2c;
  const T first = static_cast<T>(args.first), last = static_cast<T>(args.last);
  for_each_item(
      args, al.pre_items, [&](std::int64_t row, std::int64_t j, std::int64_t src_offset, std::int64_t /*dst_offset*/) {
        const T* __restrict__ src = static_cast<const T*>(args.src) + src_offset;
        const std::int64_t stride = args.src_axis_stride;
        const auto load = [&](std::int64_t i) {
          T v = __ldg(src + i * stride);
          if (i == 0) v *= first;
          if (i == n - 1) v *= last;
          return v;
        };
        r2r_pre_item<T, T>(al, j, load, row_view(args, static_cast<T*>(args.fft_in), row, al.a_scalars, complex));
      });
}

template <class T, R2RAlgorithm Algorithm>
__launch_bounds__(256) __global__ void post_pass(R2RPassArgs args) {
  const AxisAlgorithm al = compiled_algorithm<Algorithm>(args);
  const std::int64_t n = al.n;
  const bool complex = al.fft != R2RFftType::c2r;
  const T scale = static_cast<T>(args.scale), first = static_cast<T>(args.first), last = static_cast<T>(args.last);
  for_each_item(
      args, al.post_items, [&](std::int64_t row, std::int64_t k, std::int64_t /*src_offset*/, std::int64_t dst_offset) {
        T* __restrict__ dst = static_cast<T*>(args.dst) + dst_offset;
        const std::int64_t stride = args.dst_axis_stride;
        const auto store = [&](std::int64_t i, T v) {
          T f = scale;  // 1 but on the last axis of a scaling norm; a product by 1 is exact
          if (i == 0) f *= first;
          if (i == n - 1) f *= last;
          dst[i * stride] = v * f;
        };
        const R2RRowView<const T> b = row_view(args, static_cast<const T*>(args.fft_out), row, al.b_scalars, complex);
        r2r_post_item<T, T>(al, k, b, store);
      });
}

// The post-pass bridged into the next axis's FFT input (R2RBridge): a row's source offset is its index along the next
// axis, which the next axis's type-II reordering sends to FFT input index `to.j` (negated for DST-II's odd ones), with
// the next axis's input factors; the rest is the post-pass's own store, into the next axis's buffer.
template <class T, R2RAlgorithm Algorithm>
__launch_bounds__(256) __global__ void post_bridge_pass(R2RPassArgs args, R2RBridge bridge) {
  const AxisAlgorithm al = compiled_algorithm<Algorithm>(args);
  const std::int64_t n = al.n;
  const bool complex = al.fft != R2RFftType::c2r;
  const T scale = static_cast<T>(args.scale), first = static_cast<T>(args.first), last = static_cast<T>(args.last);
  const T next_first = static_cast<T>(bridge.next_first), next_last = static_cast<T>(bridge.next_last);
  for_each_item(
      args, al.post_items, [&](std::int64_t row, std::int64_t k, std::int64_t next_index, std::int64_t dst_offset) {
        const R2RScatter to = r2r_type2_scatter(bridge.next_n, bridge.next_sine, next_index);
        T row_factor = scale;  // products by 1 are exact
        if (to.negate) row_factor = -row_factor;
        if (next_index == 0) row_factor *= next_first;
        if (next_index == bridge.next_n - 1) row_factor *= next_last;
        T* __restrict__ dst = static_cast<T*>(args.dst) + dst_offset + to.j * bridge.column_stride;
        const std::int64_t stride = args.dst_axis_stride;
        const auto store = [&](std::int64_t i, T v) {
          T f = row_factor;
          if (i == 0) f *= first;
          if (i == n - 1) f *= last;
          dst[i * stride] = v * f;
        };
        const R2RRowView<const T> b = row_view(args, static_cast<const T*>(args.fft_out), row, al.b_scalars, complex);
        r2r_post_item<T, T>(al, k, b, store);
      });
}

// Launches one pass of `items` work items per row: `kernel` (the algorithm's and precision's) on the grid
// for_each_item walks, with `extra` after the pass's arguments (the bridge's).
template <class... Extra>
cudaError_t launch_pass(const R2RPassArgs& args, std::int64_t items, void (*kernel)(R2RPassArgs, Extra...),
                        cudaStream_t stream, const Extra&... extra) noexcept {
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
  kernel<<<grid, static_cast<unsigned>(block), 0, stream>>>(args, extra...);
  return cudaGetLastError();
}

using PassKernel = void (*)(R2RPassArgs);

// The pre-pass (Pre) or post-pass kernel of `algorithm` in precision T, from a table over the algorithms; null for a
// value outside the enum.
template <bool Pre, class T, std::size_t... A>
PassKernel pass_kernel(R2RAlgorithm algorithm, std::index_sequence<A...>) noexcept {
  static constexpr PassKernel kernels[] = {
      (Pre ? &pre_pass<T, static_cast<R2RAlgorithm>(A)> : &post_pass<T, static_cast<R2RAlgorithm>(A)>)...};
  const auto i = static_cast<std::size_t>(algorithm);
  return i < sizeof...(A) ? kernels[i] : nullptr;
}

template <bool Pre>
cudaError_t launch_kernel_of(const R2RPassArgs& args, std::int64_t items, cudaStream_t stream) noexcept {
  constexpr auto algorithms =
      std::make_index_sequence<static_cast<std::size_t>(R2RAlgorithm::type4_odd_permuted) + 1>{};
  const PassKernel kernel = args.double_precision ? pass_kernel<Pre, double>(args.algorithm.algorithm, algorithms)
                                                  : pass_kernel<Pre, float>(args.algorithm.algorithm, algorithms);
  if (kernel == nullptr) return cudaErrorInvalidValue;  // an algorithm outside the enum
  return launch_pass(args, items, kernel, stream);
}

}  // namespace

cudaError_t launch_r2r_post_bridge_pass(const R2RPassArgs& args, const R2RBridge& bridge,
                                        cudaStream_t stream) noexcept {
  // Compiled for a type-II axis before the next type-II one only (dctn and dstn of type 2: every pair of their axes
  // on the passes), which keeps r2r_kernels.cu's compile time about where it was; the algebra holds for any first
  // kind (tests/r2r/r2r_bridge_test.cpp).
  if (args.algorithm.algorithm != R2RAlgorithm::type2_reorder) return cudaErrorInvalidValue;
  return args.double_precision ? launch_pass(args, args.algorithm.post_items,
                                             &post_bridge_pass<double, R2RAlgorithm::type2_reorder>, stream, bridge)
                               : launch_pass(args, args.algorithm.post_items,
                                             &post_bridge_pass<float, R2RAlgorithm::type2_reorder>, stream, bridge);
}

cudaError_t launch_r2r_pre_pass(const R2RPassArgs& args, cudaStream_t stream) noexcept {
  return launch_kernel_of<true>(args, args.algorithm.pre_items, stream);
}

cudaError_t launch_r2r_post_pass(const R2RPassArgs& args, cudaStream_t stream) noexcept {
  return launch_kernel_of<false>(args, args.algorithm.post_items, stream);
}

}  // namespace cuplan::detail
