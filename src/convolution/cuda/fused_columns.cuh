// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fused column kernel of 2D and 3D convolutions: the first convolved axis of the work buffer, strided by the
// product of the inner FFT lengths, after cuFFT has transformed those inner axes. A block takes `Columns`
// neighbouring columns: it loads them as a tile through shared memory (each warp reads whole segments of neighbouring
// columns, where loading a column per FFT would read one element of each of 32 rows a warp), runs their forward FFTs,
// multiplies by the kernel's spectrum, runs the inverse FFTs and stores the tile back the same way. Each element is
// read and written once for the axis's forward transform, the product and its inverse. Built on cuFFTDx (MathDx).

#include <cstdint>
#include <cufftdx.hpp>

#include "convolution/cuda/fused_launch.hpp"

namespace cuplan::detail::fused {

/// Elements between neighbouring rows of the shared tile of `columns` columns: one more than the columns from four
/// columns up, so that the FFTs' reads of one column (a warp along it) fall in different banks; fewer columns keep
/// the tile dense (its size is what limits them).
constexpr unsigned column_tile_pitch(unsigned columns) {
  return columns >= 4 ? columns + 1 : columns;
}

template <class FFTF, class FFTI, unsigned Columns>
__launch_bounds__(FFTF::max_threads_per_block) __global__ void fused_convolve_columns(FusedColumns cols) {
  using complex_type = typename FFTF::value_type;
  constexpr unsigned n = cufftdx::size_of<FFTF>::value;
  constexpr unsigned pitch = column_tile_pitch(Columns);
  constexpr unsigned threads = FFTF::block_dim.x * FFTF::block_dim.y;
  static_assert(FFTF::ffts_per_block == Columns && FFTF::block_dim.y == Columns, "one FFT per column of the tile");
  extern __shared__ __align__(alignof(float4)) unsigned char column_shared[];
  auto* tile = reinterpret_cast<complex_type*>(column_shared);
  const std::int64_t groups = (cols.columns + Columns - 1) / Columns;
  const std::int64_t entry = blockIdx.x / groups;
  const std::int64_t group = blockIdx.x % groups;
  const std::int64_t first = group * Columns;
  const auto width = static_cast<unsigned>(cols.columns - first < Columns ? cols.columns - first : Columns);
  auto* data = static_cast<complex_type*>(cols.data) + entry * n * cols.columns + first;
  const unsigned thread = threadIdx.y * FFTF::block_dim.x + threadIdx.x;

  // The tile: consecutive threads take consecutive columns of a row, then the next row.
  for (unsigned e = thread; e < n * Columns; e += threads) {
    const unsigned k = e / Columns, w = e % Columns;
    tile[k * pitch + w] = w < width ? data[k * cols.columns + w] : complex_type{0, 0};
  }
  __syncthreads();
  complex_type thread_data[FFTF::storage_size];
#pragma unroll
  for (unsigned i = 0; i < FFTF::elements_per_thread; ++i)
    thread_data[i] = tile[(i * FFTF::stride + threadIdx.x) * pitch + threadIdx.y];
  __syncthreads();  // the FFT's exchanges reuse the tile's shared memory
  FFTF().execute(thread_data, tile);

  // The spectrum is tiled as the block reads it: column w's frequencies contiguous.
  const std::int64_t spectrum_entry = cols.spectrum_per_entry ? entry : 0;
  const auto* spectrum =
      static_cast<const complex_type*>(cols.spectrum) + ((spectrum_entry * groups + group) * Columns + threadIdx.y) * n;
#pragma unroll
  for (unsigned i = 0; i < FFTF::elements_per_thread; ++i) {
    const complex_type h = spectrum[i * FFTF::stride + threadIdx.x];
    const complex_type x = thread_data[i];
    thread_data[i] = complex_type{x.x * h.x - x.y * h.y, x.x * h.y + x.y * h.x};
  }
  __syncthreads();  // every thread is done with the forward FFT's shared memory before the inverse writes it
  FFTI().execute(thread_data, tile);
  __syncthreads();  // and with the inverse's before the tile is written
#pragma unroll
  for (unsigned i = 0; i < FFTI::elements_per_thread; ++i)
    tile[(i * FFTI::stride + threadIdx.x) * pitch + threadIdx.y] = thread_data[i];
  __syncthreads();
  for (unsigned e = thread; e < n * Columns; e += threads) {
    const unsigned k = e / Columns, w = e % Columns;
    if (w < width) data[k * cols.columns + w] = tile[k * pitch + w];
  }
}

}  // namespace cuplan::detail::fused
