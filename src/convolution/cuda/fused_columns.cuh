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

/// `SpectrumPeriod` > 1: the middle pass of the split column route (below), whose entries are the original entries'
/// blocks of rows, `SpectrumPeriod` of them an entry, each with its own spectrum.
template <class FFTF, class FFTI, unsigned Columns, unsigned SpectrumPeriod = 1>
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
  const std::int64_t spectrum_entry = cols.spectrum_per_entry ? entry : entry % SpectrumPeriod;
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

/// exp(sign * 2 pi i * j / n) for 0 <= j < n, n a power of two (j / n exact in either precision).
template <class Complex>
__device__ Complex unit_root(unsigned j, unsigned n, bool inverse) {
  if constexpr (sizeof(Complex) == 2 * sizeof(float)) {
    float s = 0, c = 0;
    sincospif((inverse ? 2.0f : -2.0f) * static_cast<float>(j) / static_cast<float>(n), &s, &c);
    return Complex{c, s};
  } else {
    double s = 0, c = 0;
    sincospi((inverse ? 2.0 : -2.0) * static_cast<double>(j) / static_cast<double>(n), &s, &c);
    return Complex{c, s};
  }
}

/// An outer pass of the split column route. A column of length N = Inner * Outer is transformed in three passes
/// (the four-step FFT): element n = n1 + Inner * n2 of a column is row n. The forward outer pass takes, for one n1, the
/// Outer rows n1 + Inner * n2 (a stride of Inner rows), transforms them along n2 and multiplies frequency k2 by
/// exp(-2 pi i n1 k2 / N), writing it to row n1 + Inner * k2; the middle pass (fused_convolve_columns over blocks of
/// Inner consecutive rows) then transforms each block along n1, whose frequency k1 is the column's frequency
/// Outer * k1 + k2, multiplies by the spectrum and transforms back; the inverse outer pass undoes the first with the
/// conjugate factors. Each pass reads and writes the column once, in tiles of `Columns` neighbouring columns whose
/// rows are whole memory segments; cuFFT's own plans take long strided axes in such passes too.
///
/// A block's row segments start on a 128-byte boundary (`Columns` elements make 128 bytes): the rows it reads are Inner
/// rows apart, a multiple of 128 bytes, so one shift of its column group aligns them all; with a column count that is
/// not a multiple of `Columns` (the half spectrum of a real convolution: 4097 columns) unaligned segments measured 30 %
/// slower. `groups`: column groups launched per n1, one more than the columns need where a shift can occur.
template <class FFT, unsigned Columns, unsigned Inner, bool Inverse>
__launch_bounds__(FFT::max_threads_per_block) __global__
    void split_columns_outer_pass(FusedColumns cols, std::int64_t groups) {
  using complex_type = typename FFT::value_type;
  constexpr unsigned outer = cufftdx::size_of<FFT>::value;
  constexpr unsigned n = outer * Inner;
  constexpr unsigned pitch = column_tile_pitch(Columns);
  constexpr unsigned threads = FFT::block_dim.x * FFT::block_dim.y;
  static_assert(FFT::ffts_per_block == Columns && FFT::block_dim.y == Columns, "one FFT per column of the tile");
  extern __shared__ __align__(alignof(float4)) unsigned char column_shared[];
  auto* tile = reinterpret_cast<complex_type*>(column_shared);
  static_assert(Columns * sizeof(complex_type) == 128, "a row segment of 128 bytes");
  // Blocks: entry, then n1, then the column group (neighbouring blocks read neighbouring segments of the same rows).
  const std::int64_t group = blockIdx.x % groups;
  const auto n1 = static_cast<unsigned>((blockIdx.x / groups) % Inner);
  const std::int64_t entry = blockIdx.x / (groups * Inner);
  auto* row = static_cast<complex_type*>(cols.data) + (entry * n + n1) * cols.columns;  // row n1 of the entry
  const auto shift = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(row) / sizeof(complex_type) % Columns);
  const std::int64_t first = group * Columns - shift;  // the group's first column, possibly before column 0
  const auto low = static_cast<unsigned>(first < 0 ? -first : 0);
  const auto high = static_cast<unsigned>(cols.columns - first < Columns ? cols.columns - first : Columns);
  if (first >= cols.columns) return;  // the spare group of an unshifted n1: the whole block leaves
  const std::int64_t row_stride = static_cast<std::int64_t>(Inner) * cols.columns;
  const unsigned thread = threadIdx.y * FFT::block_dim.x + threadIdx.x;

  for (unsigned e = thread; e < outer * Columns; e += threads) {
    const unsigned k = e / Columns, w = e % Columns;
    tile[k * pitch + w] = w >= low && w < high ? row[k * row_stride + first + w] : complex_type{0, 0};
  }
  __syncthreads();
  complex_type thread_data[FFT::storage_size];
#pragma unroll
  for (unsigned i = 0; i < FFT::elements_per_thread; ++i) {
    const unsigned k = i * FFT::stride + threadIdx.x;
    thread_data[i] = tile[k * pitch + threadIdx.y];
    if constexpr (Inverse) {
      const complex_type t = unit_root<complex_type>((n1 * k) % n, n, true), x = thread_data[i];
      thread_data[i] = complex_type{x.x * t.x - x.y * t.y, x.x * t.y + x.y * t.x};
    }
  }
  __syncthreads();  // the FFT's exchanges reuse the tile's shared memory
  FFT().execute(thread_data, tile);
  __syncthreads();
#pragma unroll
  for (unsigned i = 0; i < FFT::elements_per_thread; ++i) {
    const unsigned k = i * FFT::stride + threadIdx.x;
    complex_type x = thread_data[i];
    if constexpr (!Inverse) {
      const complex_type t = unit_root<complex_type>((n1 * k) % n, n, false);
      x = complex_type{x.x * t.x - x.y * t.y, x.x * t.y + x.y * t.x};
    }
    tile[k * pitch + threadIdx.y] = x;
  }
  __syncthreads();
  for (unsigned e = thread; e < outer * Columns; e += threads) {
    const unsigned k = e / Columns, w = e % Columns;
    if (w >= low && w < high) row[k * row_stride + first + w] = tile[k * pitch + w];
  }
}

}  // namespace cuplan::detail::fused
