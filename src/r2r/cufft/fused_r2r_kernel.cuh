// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fused real-to-real kernels: each FFT of a block loads one row of the axis with the kind's reordering or
// pre-twiddle, runs the FFT of related length in registers and shared memory (cuFFTDx), and stores the row with the
// twiddle, orthogonalize's edge factors and the norm's scale. The axis is read once and written once, against three
// reads and three writes for pre-pass + cuFFT + post-pass. The algebra is that of r2r_pre_item / r2r_post_item
// (algorithms.hpp), rearranged per register: one R2C spectrum value k gives the outputs k and n-k, which share one
// twiddle. Twiddle angles are p / 2^m for the power-of-two lengths compiled, exact in either precision, so f32
// kernels take sincospif (1 ulp) and f64 kernels sincospi. Built on cuFFTDx (MathDx); only compiled when it is found.

#include <cstdint>
#include <cufftdx.hpp>

#include "r2r/cufft/fused_r2r_launch.hpp"

namespace cuplan::detail::fused_r2r {

__device__ __forceinline__ void sin_cos_pi(float x, float& s, float& c) {
  sincospif(x, &s, &c);
}
__device__ __forceinline__ void sin_cos_pi(double x, double& s, double& c) {
  sincospi(x, &s, &c);
}

/// One row's loads and stores: element i of the row in the source (with the input edge factors) and the
/// destination (with the output edge factors and the scale).
template <class T>
struct RowAccess {
  const T* src;
  T* dst;
  std::int64_t n;
  T pre_first, pre_last, post_first, post_last, scale;

  __device__ RowAccess(const FusedR2RArgs& args, std::int64_t row, bool active) {
    std::int64_t src_offset = 0, dst_offset = 0;
    if (active) r2r_row_offsets(args.rows, row, src_offset, dst_offset);
    src = static_cast<const T*>(args.src) + src_offset;
    dst = static_cast<T*>(args.dst) + dst_offset;
    n = args.algorithm.n;
    pre_first = static_cast<T>(args.pre_first);
    pre_last = static_cast<T>(args.pre_last);
    post_first = static_cast<T>(args.post_first * args.scale);
    post_last = static_cast<T>(args.post_last * args.scale);
    scale = static_cast<T>(args.scale);
  }
  __device__ T load(std::int64_t i) const {
    T v = src[i];
    if (i == 0) v *= pre_first;
    if (i == n - 1) v *= pre_last;
    return v;
  }
  /// DST-III and DST-IV load the reversed sequence.
  __device__ T load_maybe_reversed(std::int64_t i, bool sine) const { return load(sine ? n - 1 - i : i); }
  __device__ void store(std::int64_t i, T v) const {
    // The fused lengths are at least 128, so element 0 is never element n-1.
    const T f = i == 0 ? post_first : i == n - 1 ? post_last : scale;
    dst[i] = v * f;
  }
};

template <class FFT>
__device__ __forceinline__ std::int64_t block_row() {
  return static_cast<std::int64_t>(blockIdx.x) * FFT::ffts_per_block + threadIdx.y;
}

/// Types 1 and 2 (R2C of length L): DCT-I/DST-I from the even/odd extension (L = 2(n-1) / 2(n+1)), DCT-II/DST-II
/// from the even/odd reordering (L = n).
template <class FFT>
__launch_bounds__(FFT::max_threads_per_block) __global__ void fused_r2r_r2c(FusedR2RArgs args) {
  using complex_type = typename FFT::value_type;
  using T = typename complex_type::value_type;
  constexpr std::int64_t L = cufftdx::size_of<FFT>::value;
  extern __shared__ __align__(alignof(float4)) unsigned char fused_r2r_shared[];
  const std::int64_t row = block_row<FFT>();
  // Every thread of the block takes part in the FFTs' shared-memory exchanges, also on a missing last row.
  const bool active = row < args.rows.rows;
  const RowAccess<T> io(args, row, active);
  const std::int64_t n = args.algorithm.n;
  const R2RAlgorithm algorithm = args.algorithm.algorithm;
  const bool sine = args.algorithm.sine;
  complex_type thread_data[FFT::storage_size];
  auto* real_data = reinterpret_cast<T*>(thread_data);
#pragma unroll
  for (unsigned e = 0; e < FFT::input_ept; ++e) {
    const std::int64_t j = e * FFT::stride + threadIdx.x;
    T v = 0;
    if (active && j < L) {
      if (algorithm == R2RAlgorithm::dct1_even_extension) {
        v = io.load(j <= n - 1 ? j : L - j);
      } else if (algorithm == R2RAlgorithm::dst1_odd_extension) {
        v = (j == 0 || j == n + 1) ? T(0) : (j <= n ? io.load(j - 1) : -io.load(L - 1 - j));
      } else {
        const std::int64_t i = j < (n + 1) / 2 ? 2 * j : 2 * (n - 1 - j) + 1;
        v = io.load(i);
        if (sine && (i & 1)) v = -v;  // DST-II: the DCT-II of (-1)^i x[i], reversed on store
      }
    }
    real_data[e] = v;
  }
  auto* shared = reinterpret_cast<complex_type*>(fused_r2r_shared);
  FFT().execute(thread_data, shared);
  __syncthreads();  // in place: every row is read whole before any of it is written
  if (!active) return;
  const T inv_2n = T(1) / static_cast<T>(2 * n);
#pragma unroll
  for (unsigned e = 0; e < FFT::output_ept; ++e) {
    const std::int64_t k = e * FFT::stride + threadIdx.x;
    if (k > L / 2) continue;
    const complex_type y = thread_data[e];
    if (algorithm == R2RAlgorithm::dct1_even_extension) {
      io.store(k, y.x);
    } else if (algorithm == R2RAlgorithm::dst1_odd_extension) {
      if (k >= 1 && k <= n) io.store(k - 1, -y.y);
    } else {
      // w V[q] with w = e^{-i pi q / 2n}: y[q] = 2 Re(w V[q]), y[n-q] = -2 Im(w V[q]) (V[n-q] = conj V[q]).
      T s, c;
      sin_cos_pi(static_cast<T>(k) * inv_2n, s, c);
      const T re = c * y.x + s * y.y;
      const T im = c * y.y - s * y.x;
      io.store(sine ? n - 1 - k : k, T(2) * re);
      if (k != 0 && 2 * k != n) io.store(sine ? k - 1 : n - k, T(-2) * im);
    }
  }
}

/// Type 3 (C2R of length n): the Hermitian half spectrum H[j] = e^{i pi j / 2n} (X[j] - i X[n-j]) on load, the
/// even/odd unreordering on store.
template <class FFT>
__launch_bounds__(FFT::max_threads_per_block) __global__ void fused_r2r_c2r(FusedR2RArgs args) {
  using complex_type = typename FFT::value_type;
  using T = typename complex_type::value_type;
  extern __shared__ __align__(alignof(float4)) unsigned char fused_r2r_shared[];
  const std::int64_t row = block_row<FFT>();
  const bool active = row < args.rows.rows;
  const RowAccess<T> io(args, row, active);
  const std::int64_t n = args.algorithm.n;
  const bool sine = args.algorithm.sine;
  const T inv_2n = T(1) / static_cast<T>(2 * n);
  complex_type thread_data[FFT::storage_size];
#pragma unroll
  for (unsigned e = 0; e < FFT::input_ept; ++e) {
    const std::int64_t j = e * FFT::stride + threadIdx.x;
    complex_type h{0, 0};
    if (active && j <= n / 2) {
      const T xa = io.load_maybe_reversed(j, sine);
      const T xb = j == 0 ? T(0) : io.load_maybe_reversed(n - j, sine);
      T s, c;
      sin_cos_pi(static_cast<T>(j) * inv_2n, s, c);
      h = complex_type{xa * c + xb * s, xa * s - xb * c};
    }
    thread_data[e] = h;
  }
  auto* shared = reinterpret_cast<complex_type*>(fused_r2r_shared);
  FFT().execute(thread_data, shared);
  __syncthreads();  // in place: every row is read whole before any of it is written
  if (!active) return;
  const auto* real_data = reinterpret_cast<const T*>(thread_data);
#pragma unroll
  for (unsigned e = 0; e < FFT::output_ept; ++e) {
    const std::int64_t m = e * FFT::stride + threadIdx.x;
    if (m >= n) continue;
    const std::int64_t k = m < (n + 1) / 2 ? 2 * m : 2 * (n - 1 - m) + 1;
    const T v = real_data[e];
    io.store(k, (sine && (k & 1)) ? -v : v);  // DST-III: (-1)^k times the DCT-III of the reversed input
  }
}

/// Type 4 of even length n (C2C of length n/2): t[j] = (x[2j] + i x[n-1-2j]) e^{-i pi j / n} on load;
/// z = e^{-i pi (4k+1) / 4n} T[k], y[2k] = 2 Re z, y[n-1-2k] = -2 Im z on store.
template <class FFT>
__launch_bounds__(FFT::max_threads_per_block) __global__ void fused_r2r_c2c(FusedR2RArgs args) {
  using complex_type = typename FFT::value_type;
  using T = typename complex_type::value_type;
  constexpr std::int64_t L = cufftdx::size_of<FFT>::value;
  extern __shared__ __align__(alignof(float4)) unsigned char fused_r2r_shared[];
  const std::int64_t row = block_row<FFT>();
  const bool active = row < args.rows.rows;
  const RowAccess<T> io(args, row, active);
  const std::int64_t n = args.algorithm.n;
  const bool sine = args.algorithm.sine;
  const T inv_n = T(1) / static_cast<T>(n);
  complex_type thread_data[FFT::storage_size];
#pragma unroll
  for (unsigned e = 0; e < FFT::elements_per_thread; ++e) {
    const std::int64_t j = e * FFT::stride + threadIdx.x;
    complex_type t{0, 0};
    if (active && j < L) {
      const T xa = io.load_maybe_reversed(2 * j, sine);
      const T xb = io.load_maybe_reversed(n - 1 - 2 * j, sine);
      T s, c;
      sin_cos_pi(static_cast<T>(j) * inv_n, s, c);
      t = complex_type{xa * c + xb * s, xb * c - xa * s};
    }
    thread_data[e] = t;
  }
  auto* shared = reinterpret_cast<complex_type*>(fused_r2r_shared);
  FFT().execute(thread_data, shared);
  __syncthreads();  // in place: every row is read whole before any of it is written
  if (!active) return;
  const T inv_4n = T(1) / static_cast<T>(4 * n);
#pragma unroll
  for (unsigned e = 0; e < FFT::elements_per_thread; ++e) {
    const std::int64_t k = e * FFT::stride + threadIdx.x;
    if (k >= L) continue;
    const complex_type tk = thread_data[e];
    T s, c;
    sin_cos_pi(static_cast<T>(4 * k + 1) * inv_4n, s, c);
    const T zr = tk.x * c + tk.y * s;
    const T zi = tk.y * c - tk.x * s;
    io.store(2 * k, T(2) * zr);
    io.store(n - 1 - 2 * k, sine ? T(2) * zi : T(-2) * zi);  // DST-IV: (-1)^i
  }
}

}  // namespace cuplan::detail::fused_r2r
