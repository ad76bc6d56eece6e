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

/// Complex rows (c2c forward, product, c2c inverse). FFTF/FFTI are the forward and inverse cuFFTDx descriptions.
template <class FFTF, class FFTI>
__launch_bounds__(FFTF::max_threads_per_block) __global__ void fused_convolve_c2c(FusedRows rows) {
  using complex_type = typename FFTF::value_type;
  constexpr unsigned n = cufftdx::size_of<FFTF>::value;
  extern __shared__ __align__(alignof(float4)) unsigned char fused_shared[];
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * FFTF::ffts_per_block + threadIdx.y;
  // Every thread of the block takes part in the FFTs' shared-memory exchanges, also on a missing last row.
  const bool active = row < rows.rows;
  complex_type thread_data[FFTF::storage_size];
  const auto* in = static_cast<const complex_type*>(rows.in) + (active ? row * rows.in_row_stride : 0);
#pragma unroll
  for (unsigned i = 0; i < FFTF::elements_per_thread; ++i) {
    const unsigned index = i * FFTF::stride + threadIdx.x;
    thread_data[i] = (active && index < static_cast<unsigned>(rows.in_length)) ? in[index] : complex_type{0, 0};
  }
  auto* shared = reinterpret_cast<complex_type*>(fused_shared);
  FFTF().execute(thread_data, shared);
  const std::int64_t spectrum_row = !active ? 0 : rows.spectrum_per_row ? row : row % rows.spectrum_period;
  const auto* spectrum = static_cast<const complex_type*>(rows.spectrum) + spectrum_row * rows.spectrum_length;
#pragma unroll
  for (unsigned i = 0; i < FFTF::elements_per_thread; ++i) {
    const unsigned index = i * FFTF::stride + threadIdx.x;
    if (index < n) {
      const complex_type h = spectrum[index];
      const complex_type x = thread_data[i];
      thread_data[i] = complex_type{x.x * h.x - x.y * h.y, x.x * h.y + x.y * h.x};
    }
  }
  __syncthreads();  // every thread is done with the forward FFT's shared memory before the inverse writes it
  FFTI().execute(thread_data, shared);
  if (!active) return;
  auto* out = static_cast<complex_type*>(rows.out) + row * rows.out_row_stride;
#pragma unroll
  for (unsigned i = 0; i < FFTI::elements_per_thread; ++i) {
    const unsigned index = i * FFTI::stride + threadIdx.x;
    const int k = static_cast<int>(index) - rows.out_offset;
    if (index < n && k >= 0 && k < rows.out_length) out[k] = thread_data[i];
  }
}

/// Real rows (r2c forward, product on the n/2+1 spectrum values, c2r inverse), natural complex layout.
template <class FFTF, class FFTI>
__launch_bounds__(FFTF::max_threads_per_block) __global__ void fused_convolve_r2c(FusedRows rows) {
  using complex_type = typename FFTF::value_type;
  using real_type = typename complex_type::value_type;
  constexpr unsigned n = cufftdx::size_of<FFTF>::value;
  extern __shared__ __align__(alignof(float4)) unsigned char fused_shared[];
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * FFTF::ffts_per_block + threadIdx.y;
  const bool active = row < rows.rows;
  complex_type thread_data[FFTF::storage_size > FFTI::storage_size ? FFTF::storage_size : FFTI::storage_size];
  const auto* in = static_cast<const real_type*>(rows.in) + (active ? row * rows.in_row_stride : 0);
  auto* real_data = reinterpret_cast<real_type*>(thread_data);
#pragma unroll
  for (unsigned i = 0; i < FFTF::input_ept; ++i) {
    const unsigned index = i * FFTF::stride + threadIdx.x;
    real_data[i] = (active && index < static_cast<unsigned>(rows.in_length)) ? in[index] : real_type(0);
  }
  auto* shared = reinterpret_cast<complex_type*>(fused_shared);
  FFTF().execute(thread_data, shared);
  const std::int64_t spectrum_row = !active ? 0 : rows.spectrum_per_row ? row : row % rows.spectrum_period;
  const auto* spectrum = static_cast<const complex_type*>(rows.spectrum) + spectrum_row * rows.spectrum_length;
#pragma unroll
  for (unsigned i = 0; i < FFTF::output_ept; ++i) {
    const unsigned index = i * FFTF::stride + threadIdx.x;
    if (index < FFTF::output_length) {
      const complex_type h = spectrum[index];
      const complex_type x = thread_data[i];
      thread_data[i] = complex_type{x.x * h.x - x.y * h.y, x.x * h.y + x.y * h.x};
    }
  }
  __syncthreads();  // every thread is done with the forward FFT's shared memory before the inverse writes it
  FFTI().execute(thread_data, shared);
  if (!active) return;
  auto* out = static_cast<real_type*>(rows.out) + row * rows.out_row_stride;
#pragma unroll
  for (unsigned i = 0; i < FFTI::output_ept; ++i) {
    const unsigned index = i * FFTI::stride + threadIdx.x;
    const int k = static_cast<int>(index) - rows.out_offset;
    if (index < n && k >= 0 && k < rows.out_length) out[k] = real_data[i];
  }
}

}  // namespace cuplan::detail::fused
