// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fused 1D convolution kernel: each FFT of a block loads one row of the signal (zero beyond its length), runs
// the forward FFT in registers and shared memory, multiplies by the kernel's spectrum, runs the inverse FFT and
// stores the cropped row. The operand is read once and the result written once, against three reads and three
// writes for cuFFT forward + product + cuFFT inverse. Built on cuFFTDx (MathDx); only compiled when it is found.

#include <cstdint>
#include <cufftdx.hpp>

#include "convolution/cuda/fused_launch.hpp"

namespace cuplan::detail::fused {

/// Where one FFT of a block reads and writes (FusedRows): its signal row, and for overlap-save its segment's first
/// signal index and first result value. The pointers are formed where they are used (from the kernel's parameters),
/// so that only these stay live across the FFTs.
struct FusedSegment {
  std::int64_t row;  ///< signal row: the spectrum row's too
  bool active;       ///< false past the last FFT (the block's threads still take part in the exchanges)
  int first;         ///< signal index of the FFT's element 0 (reads outside [0, in_length) are zero)
  int stored;        ///< the result row's index of the segment's first stored value
};

__device__ __forceinline__ FusedSegment fused_segment(const FusedRows& rows, std::int64_t fft) {
  const bool active = fft < rows.rows;
  if (!active) fft = 0;  // a missing last FFT takes row 0's addresses and reads or writes nothing
  FusedSegment f{fft, active, 0, 0};
  if (rows.segments > 1) {  // overlap-save; a division per thread, not per element
    f.row = fft / rows.segments;
    f.stored = static_cast<int>(fft - f.row * rows.segments) * rows.hop;
    f.first = f.stored + rows.in_shift;
  }
  return f;
}

template <class T>
__device__ __forceinline__ const T* segment_in(const FusedRows& rows, const FusedSegment& f) {
  return static_cast<const T*>(rows.in) + f.row * rows.in_row_stride;
}

template <class T>
__device__ __forceinline__ T* segment_out(const FusedRows& rows, const FusedSegment& f) {
  return static_cast<T*>(rows.out) + f.row * rows.out_row_stride + f.stored;
}

/// Whether signal index first + index lies in the row: one unsigned comparison for both ends.
__device__ __forceinline__ bool in_row(int first, unsigned index, int in_length) {
  return static_cast<unsigned>(first + static_cast<int>(index)) < static_cast<unsigned>(in_length);
}

/// The product with the kernel's spectrum in registers: each of a thread's `Values` spectrum values of index below
/// `length` times the row's spectrum (one per row, or periodic over the rows). `FFT`: the forward description.
/// `StraightLine`: registers that lie wholly below `length` load with no test (see the kernels for who asks it).
template <class FFT, unsigned Values, bool StraightLine, class Complex>
__device__ __forceinline__ void multiply_by_spectrum(Complex* thread_data, const FusedRows& rows, std::int64_t row,
                                                     bool active, unsigned length) {
  const std::int64_t spectrum_row = !active ? 0 : rows.spectrum_per_row ? row : row % rows.spectrum_period;
  const auto* spectrum = static_cast<const Complex*>(rows.spectrum) + spectrum_row * rows.spectrum_length;
#pragma unroll
  for (unsigned i = 0; i < Values; ++i) {
    const unsigned index = i * FFT::stride + threadIdx.x;
    // A register every thread of which lies below `length` needs no test (the callers' lengths are constants, so
    // this folds at compile time): its spectrum loads are straight-line code, issued together.
    if ((StraightLine && (i + 1) * FFT::stride <= length) || index < length) {
      const Complex h = spectrum[index];
      const Complex x = thread_data[i];
      thread_data[i] = Complex{x.x * h.x - x.y * h.y, x.x * h.y + x.y * h.x};
    }
  }
}

/// Stores the cropped row: each of a thread's `Values` results of index below `n` goes to out[index - out_offset]
/// when that lies in [0, out_limit). `FFT`: the inverse description. `StraightLine`: a whole row (no crop) is
/// written with no test per element.
template <class FFT, unsigned Values, bool StraightLine, class T>
__device__ __forceinline__ void store_cropped(const T* values, T* out, int out_offset, int out_limit, unsigned n) {
  if (StraightLine && Values * FFT::stride == n && out_offset == 0 && out_limit >= static_cast<int>(n)) {
#pragma unroll
    for (unsigned i = 0; i < Values; ++i) out[i * FFT::stride + threadIdx.x] = values[i];
    return;
  }
#pragma unroll
  for (unsigned i = 0; i < Values; ++i) {
    const unsigned index = i * FFT::stride + threadIdx.x;
    const int k = static_cast<int>(index) - out_offset;
    if (index < n && k >= 0 && k < out_limit) out[k] = values[i];
  }
}

/// Stores the cropped row from pairs of neighbouring results, (2m, 2m+1) in a thread's value m (the folded real
/// mode's C2R output): as store_cropped, per real. `FFT`: the inverse description.
template <class FFT, unsigned Values, class Complex, class T>
__device__ __forceinline__ void store_cropped_pairs(const Complex* values, T* out, int out_offset, int out_limit,
                                                    unsigned pairs) {
  // A whole row (no crop) of an 8-byte (16-byte) aligned start is written as pairs, one access per pair, no test.
  if (Values * FFT::stride == pairs && out_offset == 0 && out_limit >= static_cast<int>(2 * pairs) &&
      reinterpret_cast<std::uintptr_t>(out) % sizeof(Complex) == 0) {
    auto* out_pairs = reinterpret_cast<Complex*>(out);
#pragma unroll
    for (unsigned i = 0; i < Values; ++i) out_pairs[i * FFT::stride + threadIdx.x] = values[i];
    return;
  }
#pragma unroll
  for (unsigned i = 0; i < Values; ++i) {
    const unsigned m = i * FFT::stride + threadIdx.x;
    if (m >= pairs) continue;
    const int k = 2 * static_cast<int>(m) - out_offset;
    if (k >= 0 && k < out_limit) out[k] = values[i].x;
    if (k + 1 >= 0 && k + 1 < out_limit) out[k + 1] = values[i].y;
  }
}

/// Complex rows (c2c forward, product, c2c inverse). FFTF/FFTI are the forward and inverse cuFFTDx descriptions.
/// Its loads and stores keep a test per element: straight-line ones (as in the real kernel below) measured slower
/// here, c64 [4096, 16384] 0.749 -> 0.833 ms and [16384, 4096] 0.446 -> 0.460 ms on an H100, while they made the
/// real f32 kernel 4-9 % faster at every length (docs/convolution.md, "Kernel loads").
template <class FFTF, class FFTI>
__launch_bounds__(FFTF::max_threads_per_block) __global__ void fused_convolve_c2c(FusedRows rows) {
  using complex_type = typename FFTF::value_type;
  constexpr unsigned n = cufftdx::size_of<FFTF>::value;
  extern __shared__ __align__(alignof(float4)) unsigned char fused_shared[];
  // Every thread of the block takes part in the FFTs' shared-memory exchanges, also on a missing last row.
  const FusedSegment f =
      fused_segment(rows, static_cast<std::int64_t>(blockIdx.x) * FFTF::ffts_per_block + threadIdx.y);
  complex_type thread_data[FFTF::storage_size];
  const complex_type* in = segment_in<complex_type>(rows, f);
#pragma unroll
  for (unsigned i = 0; i < FFTF::elements_per_thread; ++i) {
    const unsigned index = i * FFTF::stride + threadIdx.x;
    thread_data[i] = (f.active && in_row(f.first, index, rows.in_length)) ? in[f.first + static_cast<int>(index)]
                                                                          : complex_type{0, 0};
  }
  auto* shared = reinterpret_cast<complex_type*>(fused_shared);
  FFTF().execute(thread_data, shared);
  multiply_by_spectrum<FFTF, FFTF::elements_per_thread, false>(thread_data, rows, f.row, f.active, n);
  __syncthreads();  // every thread is done with the forward FFT's shared memory before the inverse writes it
  FFTI().execute(thread_data, shared);
  if (!f.active) return;
  store_cropped<FFTI, FFTI::elements_per_thread, false>(thread_data, segment_out<complex_type>(rows, f),
                                                        rows.out_offset, rows.out_length - f.stored, n);
}

/// Real rows (r2c forward, product on the n/2+1 spectrum values, c2r inverse), natural complex layout. `Folded`:
/// cuFFTDx's folded real mode, whose input (R2C) and output (C2R) thread elements are pairs of neighbouring reals
/// (2m, 2m+1), transformed as a C2C FFT of n/2 (half the arithmetic of the normal mode, where each element is one
/// real); the spectrum between the two is in the natural layout either way.
template <class FFTF, class FFTI, bool Folded>
__device__ __forceinline__ void fused_convolve_r2c_body(const FusedRows& rows) {
  using complex_type = typename FFTF::value_type;
  using real_type = typename complex_type::value_type;
  constexpr unsigned n = cufftdx::size_of<FFTF>::value;
  static_assert(FFTF::output_ept == FFTI::input_ept && FFTF::stride == FFTI::stride,
                "the inverse reads the spectrum where the forward FFT left it");
  extern __shared__ __align__(alignof(float4)) unsigned char fused_shared[];
  const FusedSegment f =
      fused_segment(rows, static_cast<std::int64_t>(blockIdx.x) * FFTF::ffts_per_block + threadIdx.y);
  const bool active = f.active;
  complex_type thread_data[FFTF::storage_size > FFTI::storage_size ? FFTF::storage_size : FFTI::storage_size];
  const real_type* in = segment_in<real_type>(rows, f);
  const int first = f.first, in_length = rows.in_length;
  auto* real_data = reinterpret_cast<real_type*>(thread_data);
  // n values of the row (no padding) from an 8-byte (16-byte) aligned start are read as pairs of reals, one access
  // per pair and no test per element: straight-line loads the compiler issues together.
  [[maybe_unused]] const bool whole_pairs = active && first >= 0 && first <= in_length - static_cast<int>(n) &&
                                            reinterpret_cast<std::uintptr_t>(in + first) % sizeof(complex_type) == 0;
  if constexpr (Folded && 2 * FFTF::input_ept * FFTF::stride == n) {
    if (whole_pairs) {
      const auto* in_pairs = reinterpret_cast<const complex_type*>(in + first);
#pragma unroll
      for (unsigned i = 0; i < FFTF::input_ept; ++i) thread_data[i] = in_pairs[i * FFTF::stride + threadIdx.x];
    }
  }
  if constexpr (Folded) {
    if (!whole_pairs || 2 * FFTF::input_ept * FFTF::stride != n) {
#pragma unroll
      for (unsigned i = 0; i < FFTF::input_ept; ++i) {
        const unsigned index = 2 * (i * FFTF::stride + threadIdx.x);
        const int p = first + static_cast<int>(index);
        const real_type lo = (active && in_row(first, index, in_length)) ? in[p] : real_type(0);
        const real_type hi = (active && in_row(first, index + 1, in_length)) ? in[p + 1] : real_type(0);
        thread_data[i] = complex_type{lo, hi};
      }
    }
  } else {
#pragma unroll
    for (unsigned i = 0; i < FFTF::input_ept; ++i) {
      const unsigned index = i * FFTF::stride + threadIdx.x;
      real_data[i] = (active && in_row(first, index, in_length)) ? in[first + static_cast<int>(index)] : real_type(0);
    }
  }
  auto* shared = reinterpret_cast<complex_type*>(fused_shared);
  FFTF().execute(thread_data, shared);
  multiply_by_spectrum<FFTF, FFTF::output_ept, true>(thread_data, rows, f.row, active, FFTF::output_length);
  __syncthreads();  // every thread is done with the forward FFT's shared memory before the inverse writes it
  FFTI().execute(thread_data, shared);
  if (!active) return;
  if constexpr (Folded)
    store_cropped_pairs<FFTI, FFTI::output_ept>(thread_data, segment_out<real_type>(rows, f), rows.out_offset,
                                                rows.out_length - f.stored, FFTI::output_length);
  else
    store_cropped<FFTI, FFTI::output_ept, true>(real_data, segment_out<real_type>(rows, f), rows.out_offset,
                                                rows.out_length - f.stored, n);
}

/// The real kernel (fused_convolve_r2c_body) with the register choice left to ptxas.
template <class FFTF, class FFTI, bool Folded>
__launch_bounds__(FFTF::max_threads_per_block) __global__ void fused_convolve_r2c(FusedRows rows) {
  fused_convolve_r2c_body<FFTF, FFTI, Folded>(rows);
}

/// The real kernel within the registers that `MinBlocks` blocks per SM leave. A kernel of its own: naming a minimum
/// of blocks, even 1, changes ptxas's register choice.
template <class FFTF, class FFTI, bool Folded, unsigned MinBlocks>
__launch_bounds__(FFTF::max_threads_per_block, MinBlocks) __global__
    void fused_convolve_r2c_min_blocks(FusedRows rows) {
  fused_convolve_r2c_body<FFTF, FFTI, Folded>(rows);
}

}  // namespace cuplan::detail::fused
