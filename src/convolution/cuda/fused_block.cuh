// SPDX-License-Identifier: Apache-2.0
#pragma once
// The whole-transform convolution kernel of small 2D and 3D shapes: one block takes one batch entry whole. It loads
// the entry from the operand into a shared-memory tile (zero beyond its extents), runs the forward FFTs along the
// inner axes in place, then along the first axis the forward FFT, the product with the kernel's spectrum and the
// inverse FFT in registers, then the inner axes' inverse FFTs, and stores the cropped result. The operand is read
// once and the result written once, against the separate route's pad pass, cuFFT's forward and inverse transforms,
// the product and the crop pass (at these lengths the column route does not apply). Built on cuFFTDx (MathDx); only
// compiled when it is found.

#include <cstdint>
#include <cufftdx.hpp>

#include "convolution/cuda/fused_block_tile.hpp"
#include "convolution/cuda/fused_launch.hpp"

namespace cuplan::detail::fused {

/// The FFTs along tile axis `Axis` (0, 1 or 2), `FFT::ffts_per_block` at a time: thread (x, y) takes FFT
/// group * ffts_per_block + y, whose elements lie the axis's distance apart in the tile. `transform(values, fft)`
/// runs the FFT (and, along the first axis, the product and the inverse FFT) on a thread's values in registers.
/// `FFT` fixes the length and the block shape only.
template <class FFT, class Tile, unsigned Axis, class Complex, class Transform>
__device__ __forceinline__ void block_axis_pass(Complex* tile, Transform&& transform) {
  constexpr unsigned length = cufftdx::size_of<FFT>::value;
  constexpr unsigned ffts = Tile::size / length;  // FFTs along the axis
  constexpr unsigned per_block = FFT::ffts_per_block;
  static_assert(ffts % per_block == 0, "the FFTs along an axis fill whole groups");
  static_assert(length == Tile::template length<Axis>, "the FFT's length is the axis's");
  constexpr unsigned step = Tile::template step<Axis>;
#pragma unroll 1
  for (unsigned group = 0; group < ffts / per_block; ++group) {
    const unsigned fft = group * per_block + threadIdx.y;
    const unsigned first = Tile::template first<Axis>(fft);
    Complex values[FFT::storage_size];
#pragma unroll
    for (unsigned i = 0; i < FFT::elements_per_thread; ++i)
      values[i] = tile[first + (i * FFT::stride + threadIdx.x) * step];
    transform(values, fft);
    __syncthreads();  // every thread is done with the FFT's scratch before the next group's FFT writes it
#pragma unroll
    for (unsigned i = 0; i < FFT::elements_per_thread; ++i)
      tile[first + (i * FFT::stride + threadIdx.x) * step] = values[i];
  }
  __syncthreads();  // the whole axis is in the tile before the next one reads it
}

/// A pass's transform that is the FFT alone.
template <class FFT, class Complex>
struct BlockFFT {
  Complex* scratch;
  __device__ void operator()(Complex* values, unsigned) const { FFT().execute(values, scratch); }
};

/// The kernel. `Axes` (fused_block_shape.cu.in) holds the tile and the FFT descriptions, all of one block shape:
/// Forward2/Inverse2 along tile axis 2, Forward1/Inverse1 along axis 1, FirstForward/FirstInverse along the first
/// axis (0 in 3D, 1 in 2D), whose pass runs the forward FFT, the product and the inverse FFT.
template <class Axes>
__launch_bounds__(Axes::threads) __global__ void fused_convolve_block(FusedBlock b) {
  using Tile = typename Axes::Tile;
  using complex_type = typename Axes::complex_type;
  using real_type = typename complex_type::value_type;
  constexpr unsigned threads = Axes::threads;
  constexpr unsigned first_axis = Tile::first_axis;
  extern __shared__ __align__(alignof(float4)) unsigned char block_shared[];
  auto* tile = reinterpret_cast<complex_type*>(block_shared);
  auto* scratch = reinterpret_cast<complex_type*>(block_shared + Axes::scratch_offset);
  const unsigned thread = threadIdx.y * blockDim.x + threadIdx.x;

  // The entry (paired: entries 2p and 2p + 1 as the real and imaginary parts; a missing second one is zero).
  const std::int64_t entry = b.paired ? 2 * static_cast<std::int64_t>(blockIdx.x) : blockIdx.x;
  const bool second = b.paired && entry + 1 < b.entries;
  const std::int64_t in_first = b.in_walk.batch_offset(entry);
  const std::int64_t in_second = second ? b.in_walk.batch_offset(entry + 1) : 0;
  const CanonicalWalk& w = b.in_walk;
  for (unsigned t = thread; t < Tile::size; t += threads) {
    unsigned i0 = 0, i1 = 0, i2 = 0;
    Tile::coordinates(t, i0, i1, i2);
    complex_type v{0, 0};
    if (i0 < w.extent[0] && i1 < w.extent[1] && i2 < w.extent[2]) {
      const std::int64_t at = i0 * w.stride[0] + i1 * w.stride[1] + i2 * w.stride[2];
      if (!b.real_in) {
        v = static_cast<const complex_type*>(b.in)[in_first + at];
      } else {
        const auto* in = static_cast<const real_type*>(b.in);
        v.x = in[in_first + at];
        if (second) v.y = in[in_second + at];
      }
    }
    tile[Tile::offset(i0, i1, i2)] = v;
  }
  __syncthreads();

  // Forward along the inner axes.
  block_axis_pass<typename Axes::Forward2, Tile, 2>(tile, BlockFFT<typename Axes::Forward2, complex_type>{scratch});
  if constexpr (first_axis == 0)
    block_axis_pass<typename Axes::Forward1, Tile, 1>(tile, BlockFFT<typename Axes::Forward1, complex_type>{scratch});
  // The first axis: forward, the product with the kernel's spectrum (natural layout: frequency k of FFT `fft` at
  // k * (size / length) + fft), inverse.
  using FirstForward = typename Axes::FirstForward;
  using FirstInverse = typename Axes::FirstInverse;
  const std::int64_t kernel_entry = b.kernel_entries.batch_offset(entry);
  const auto* spectrum = static_cast<const complex_type*>(b.spectrum) + kernel_entry * Tile::size;
  block_axis_pass<FirstForward, Tile, first_axis>(tile, [&](complex_type* values, unsigned fft) {
    FirstForward().execute(values, scratch);
#pragma unroll
    for (unsigned i = 0; i < FirstForward::elements_per_thread; ++i) {
      const unsigned k = i * FirstForward::stride + threadIdx.x;
      const complex_type h = spectrum[Tile::spectrum_index(k, fft)];
      const complex_type x = values[i];
      values[i] = complex_type{x.x * h.x - x.y * h.y, x.x * h.y + x.y * h.x};
    }
    __syncthreads();  // every thread is done with the forward FFT's scratch before the inverse writes it
    FirstInverse().execute(values, scratch);
  });
  // Inverse along the inner axes.
  if constexpr (first_axis == 0)
    block_axis_pass<typename Axes::Inverse1, Tile, 1>(tile, BlockFFT<typename Axes::Inverse1, complex_type>{scratch});
  block_axis_pass<typename Axes::Inverse2, Tile, 2>(tile, BlockFFT<typename Axes::Inverse2, complex_type>{scratch});

  // The cropped result: rows of the result along its last axis, one warp a row at a time (coalesced where that axis
  // is dense).
  const CanonicalWalk& o = b.out_walk;
  const std::int64_t out_first = o.batch_offset(entry);
  const std::int64_t out_second = second ? o.batch_offset(entry + 1) : 0;
  const auto rows = static_cast<unsigned>(o.extent[0] * o.extent[1]);
  const auto columns = static_cast<unsigned>(o.extent[2]);
  const auto rows_1 = static_cast<unsigned>(o.extent[1]);
  constexpr unsigned warps = threads / 32;
  for (unsigned r = thread / 32; r < rows; r += warps) {
    const unsigned j0 = r / rows_1, j1 = r % rows_1;
    const unsigned tile_row = Tile::offset(j0 + b.out_offset[0], j1 + b.out_offset[1], b.out_offset[2]);
    const std::int64_t at_row = j0 * o.stride[0] + j1 * o.stride[1];
    for (unsigned j2 = thread % 32; j2 < columns; j2 += 32) {
      const complex_type v = tile[tile_row + j2];
      const std::int64_t at = at_row + j2 * o.stride[2];
      if (!b.real_out) {
        static_cast<complex_type*>(b.out)[out_first + at] = v;
      } else {
        auto* out = static_cast<real_type*>(b.out);
        out[out_first + at] = v.x;
        if (second) out[out_second + at] = v.y;
      }
    }
  }
}

}  // namespace cuplan::detail::fused
