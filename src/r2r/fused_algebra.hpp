// SPDX-License-Identifier: Apache-2.0
#pragma once
// The per-element algebra of the fused real-to-real kernels (src/r2r/cufft/fused_r2r_kernel.cuh), written once for
// host and device: what element j of the FFT's input is (load side) and which outputs element k of the FFT's output
// gives (store side). The same algebra as r2r_pre_item / r2r_post_item (algorithms.hpp), rearranged per register:
// the kernels hold the FFT's data in registers, so the store side of a type-2 axis turns one spectrum value k into
// the outputs k and n-k with one twiddle. A CPU test runs these functions around FFTW's DFTs against the direct sums.
//
// `load(i)`: element i of the row (edge factors applied); `store(i, v)`: writes element i (factors applied);
// `Twiddle::sin_cos_pi(x, s, c)`: sin(pi x) and cos(pi x) in T. Every angle is p / 2^m for the power-of-two FFT
// lengths compiled, exact in T.

#include <cstdint>

#include "r2r/algorithms.hpp"

namespace cuplan::detail {

template <class T>
struct FusedComplex {
  T re, im;
};

/// The axis length whose `algorithm` runs an FFT of `fft_length` (choose_algorithm's length the other way round):
/// the fused kernels are compiled per algorithm and FFT length, so the row length is a constant of the kernel. 0 for
/// an algorithm the fused kernels do not run (type 4 of odd length).
constexpr std::int64_t fused_row_length(R2RAlgorithm algorithm, std::int64_t fft_length) {
  switch (algorithm) {
    case R2RAlgorithm::dct1_even_extension:
      return fft_length / 2 + 1;
    case R2RAlgorithm::dst1_odd_extension:
      return fft_length / 2 - 1;
    case R2RAlgorithm::type2_reorder:
    case R2RAlgorithm::type3_reorder:
      return fft_length;
    case R2RAlgorithm::type4_half_complex:
      return 2 * fft_length;
    default:
      return 0;
  }
}

/// Types 1 and 2 (R2C of al.fft_length): the real input element j.
template <class T, class Load>
CUPLAN_R2R_HD T fused_r2c_load(const AxisAlgorithm& al, std::int64_t j, Load&& load) {
  const std::int64_t n = al.n, l = al.fft_length;
  if (al.algorithm == R2RAlgorithm::dct1_even_extension) return load(j <= n - 1 ? j : l - j);
  if (al.algorithm == R2RAlgorithm::dst1_odd_extension)
    return (j == 0 || j == n + 1) ? T(0) : (j <= n ? load(j - 1) : -load(l - 1 - j));
  const std::int64_t i = j < (n + 1) / 2 ? 2 * j : 2 * (n - 1 - j) + 1;
  const T v = load(i);
  return (al.sine && (i & 1)) ? -v : v;  // DST-II: the DCT-II of (-1)^i x[i], reversed on store
}

/// Types 1 and 2: the spectrum value k (0 <= k <= fft_length / 2) stored as its outputs.
template <class T, class Twiddle, class Store>
CUPLAN_R2R_HD void fused_r2c_store(const AxisAlgorithm& al, std::int64_t k, FusedComplex<T> y, Store&& store) {
  const std::int64_t n = al.n;
  if (al.algorithm == R2RAlgorithm::dct1_even_extension) {
    store(k, y.re);
  } else if (al.algorithm == R2RAlgorithm::dst1_odd_extension) {
    if (k >= 1 && k <= n) store(k - 1, -y.im);
  } else {
    // w V[k] with w = e^{-i pi k / 2n}: y[k] = 2 Re(w V[k]), y[n-k] = -2 Im(w V[k]) (V[n-k] = conj V[k]).
    T s, c;
    Twiddle::sin_cos_pi(static_cast<T>(k) * (T(1) / static_cast<T>(2 * n)), s, c);
    const T re = c * y.re + s * y.im;
    const T im = c * y.im - s * y.re;
    store(al.sine ? n - 1 - k : k, T(2) * re);
    if (k != 0 && 2 * k != n) store(al.sine ? k - 1 : n - k, T(-2) * im);
  }
}

/// Type 3 (C2R of n): the Hermitian half spectrum's element j (0 <= j <= n / 2).
template <class T, class Twiddle, class Load>
CUPLAN_R2R_HD FusedComplex<T> fused_c2r_load(const AxisAlgorithm& al, std::int64_t j, Load&& load) {
  const std::int64_t n = al.n;
  // DST-III runs the DCT-III route on the reversed sequence.
  const auto rev = [&](std::int64_t i) { return load(al.sine ? n - 1 - i : i); };
  const T xa = rev(j);
  const T xb = j == 0 ? T(0) : rev(n - j);
  T s, c;
  Twiddle::sin_cos_pi(static_cast<T>(j) * (T(1) / static_cast<T>(2 * n)), s, c);
  return {xa * c + xb * s, xa * s - xb * c};
}

/// Type 3: the C2R's output m (0 <= m < n) stored unreordered.
template <class T, class Store>
CUPLAN_R2R_HD void fused_c2r_store(const AxisAlgorithm& al, std::int64_t m, T v, Store&& store) {
  const std::int64_t n = al.n;
  const std::int64_t k = m < (n + 1) / 2 ? 2 * m : 2 * (n - 1 - m) + 1;
  store(k, (al.sine && (k & 1)) ? -v : v);  // DST-III: (-1)^k times the DCT-III of the reversed input
}

/// Type 4 of even n (C2C of n/2): t[j] = (x[2j] + i x[n-1-2j]) e^{-i pi j / n}.
template <class T, class Twiddle, class Load>
CUPLAN_R2R_HD FusedComplex<T> fused_c2c_load(const AxisAlgorithm& al, std::int64_t j, Load&& load) {
  const std::int64_t n = al.n;
  const auto rev = [&](std::int64_t i) { return load(al.sine ? n - 1 - i : i); };
  const T xa = rev(2 * j);
  const T xb = rev(n - 1 - 2 * j);
  T s, c;
  Twiddle::sin_cos_pi(static_cast<T>(j) * (T(1) / static_cast<T>(n)), s, c);
  return {xa * c + xb * s, xb * c - xa * s};
}

/// Type 4: z = e^{-i pi (4k+1) / 4n} T[k]; y[2k] = 2 Re z, y[n-1-2k] = -2 Im z (DST-IV: +2 Im z).
template <class T, class Twiddle, class Store>
CUPLAN_R2R_HD void fused_c2c_store(const AxisAlgorithm& al, std::int64_t k, FusedComplex<T> t, Store&& store) {
  const std::int64_t n = al.n;
  T s, c;
  Twiddle::sin_cos_pi(static_cast<T>(4 * k + 1) * (T(1) / static_cast<T>(4 * n)), s, c);
  const T zr = t.re * c + t.im * s;
  const T zi = t.im * c - t.re * s;
  store(2 * k, T(2) * zr);
  store(n - 1 - 2 * k, al.sine ? T(2) * zi : T(-2) * zi);
}

}  // namespace cuplan::detail
