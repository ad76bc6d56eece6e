// SPDX-License-Identifier: Apache-2.0
#pragma once
// The per-element algebra of the fused real-to-real kernels (src/r2r/cufft/fused_r2r_kernel.cuh), written once for
// host and device: what element j of the FFT's input is (load side) and which outputs element k of the FFT's output
// gives (store side). The same algebra as r2r_pre_item / r2r_post_item (algorithms.hpp), rearranged per register:
// the kernels hold the FFT's data in registers, so the store side of a type-2 axis turns one spectrum value k into
// the outputs k and n-k with one twiddle. A CPU test runs these functions around FFTW's DFTs against the direct sums.
//
// Element indices are int: a fused row has at most 2^16 elements (FFT lengths up to 32768), and 32-bit index
// arithmetic took a tenth of the unrolled kernels' instructions away against 64-bit (f32, 16384).
//
// `load(i)`: element i of the row (edge factors applied); `store(i, v)`: writes element i (factors applied); `w`: the
// twiddle cos + i sin of pi times the side's TwiddleAngle at the element, which the caller computes (the kernels as
// one sincospi per thread and a compile-time rotation per register, the CPU test directly).

#include <cstdint>
#include <numbers>

#include "r2r/algorithms.hpp"

namespace cuplan::detail {

template <class T>
struct FusedComplex {
  T re, im;
};

/// A twiddle's angle in units of pi as a function of the element index k: (a k + b) / d. The fused kernels hold
/// elements k = e * stride + t (register e of thread t), so the angle splits into (a t + b) / d, one sincospi per
/// thread, and e a stride / d, a constant of the unrolled register (constant_cos_sin_pi).
struct TwiddleAngle {
  std::int64_t a, b, d;
};
/// The twiddle angle of each side that has one, for an axis of length n: type 2's store (pi k / 2n), type 3's load
/// (pi j / 2n), type 4's load (pi j / n) and store (pi (4k + 1) / 4n).
constexpr TwiddleAngle fused_r2c_store_angle(std::int64_t n) {
  return {1, 0, 2 * n};
}
constexpr TwiddleAngle fused_c2r_load_angle(std::int64_t n) {
  return {1, 0, 2 * n};
}
constexpr TwiddleAngle fused_c2c_load_angle(std::int64_t n) {
  return {1, 0, n};
}
constexpr TwiddleAngle fused_c2c_store_angle(std::int64_t n) {
  return {4, 1, 4 * n};
}

/// cos(pi p / q) + i sin(pi p / q) (q > 0) in double, as a constant expression: the kernels' per-register twiddle
/// rotations are evaluated by the compiler. The angle is reduced exactly in integers to [0, pi/4] (by quarter turns
/// and the complement), where a Taylor series of 13 terms is exact to double's rounding.
CUPLAN_R2R_HD constexpr FusedComplex<double> constant_cos_sin_pi(std::int64_t p, std::int64_t q) {
  // pi p / q = (pi / 2) u / q, u = 2p reduced modulo a full turn (4q): quarter turns plus (pi / 2) r / q.
  std::int64_t u = (2 * p) % (4 * q);
  if (u < 0) u += 4 * q;
  const std::int64_t quarter = u / q, r = u % q;
  const bool complement = 2 * r > q;
  const double y = static_cast<double>(complement ? q - r : r) / static_cast<double>(q) * (std::numbers::pi / 2);
  double s = 0, c = 0, term_s = y, term_c = 1;
  for (int i = 0; i < 13; ++i) {
    s += term_s;
    c += term_c;
    term_s *= -y * y / static_cast<double>((2 * i + 2) * (2 * i + 3));
    term_c *= -y * y / static_cast<double>((2 * i + 1) * (2 * i + 2));
  }
  if (complement) {
    const double t = s;
    s = c;
    c = t;
  }
  switch (quarter) {
    case 0:
      return {c, s};
    case 1:
      return {-s, c};
    case 2:
      return {-c, -s};
    default:
      return {s, -c};
  }
}

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
CUPLAN_R2R_HD T fused_r2c_load(const AxisAlgorithm& al, int j, Load&& load) {
  const int n = static_cast<int>(al.n), l = static_cast<int>(al.fft_length);
  if (al.algorithm == R2RAlgorithm::dct1_even_extension) return load(j <= n - 1 ? j : l - j);
  if (al.algorithm == R2RAlgorithm::dst1_odd_extension)
    return (j == 0 || j == n + 1) ? T(0) : (j <= n ? load(j - 1) : -load(l - 1 - j));
  const int i = j < (n + 1) / 2 ? 2 * j : 2 * (n - 1 - j) + 1;
  const T v = load(i);
  return (al.sine && (i & 1)) ? -v : v;  // DST-II: the DCT-II of (-1)^i x[i], reversed on store
}

/// Type 2 of n divisible by 4 in the folded real mode, whose FFT input elements are pairs (v[2p], v[2p+1]) of the
/// reordered row v: the four neighbouring reals x[4q .. 4q+3] (0 <= q < n/4, edge factors applied by the caller)
/// are pair q = (x[4q], x[4q+2]) and pair n/2-1-q = (x[4q+3], x[4q+1]), the latter negated for DST-II (odd
/// elements). One 16-byte load gives two pairs, where fused_r2c_load reads four scattered reals for them.
template <class T>
CUPLAN_R2R_HD void fused_type2_quad_pairs(const AxisAlgorithm& al, const T (&x)[4], FusedComplex<T>& low,
                                          FusedComplex<T>& high) {
  low = {x[0], x[2]};
  high = al.sine ? FusedComplex<T>{-x[3], -x[1]} : FusedComplex<T>{x[3], x[1]};
}

/// Type 3 of n divisible by 4 in the folded real mode, whose C2R output elements are pairs (v[2p], v[2p+1]): pair q
/// (0 <= q < n/4) and pair n/2-1-q give the four neighbouring outputs y[4q .. 4q+3] = (v[2q], v[n-1-2q], v[2q+1],
/// v[n-2-2q]), the odd ones negated for DST-III (fused_c2r_store's unreordering, four at a time; edge factors and
/// scale applied by the caller).
template <class T>
CUPLAN_R2R_HD void fused_type3_quad_outputs(const AxisAlgorithm& al, FusedComplex<T> low, FusedComplex<T> high,
                                            T (&y)[4]) {
  const T odd = al.sine ? T(-1) : T(1);
  y[0] = low.re;
  y[1] = odd * high.im;
  y[2] = low.im;
  y[3] = odd * high.re;
}

/// Types 1 and 2: the spectrum value k (0 <= k <= fft_length / 2) stored as its outputs. `w`: the twiddle at
/// fused_r2c_store_angle (type 2 only; types 1 ignore it).
template <class T, class Store>
CUPLAN_R2R_HD void fused_r2c_store(const AxisAlgorithm& al, int k, FusedComplex<T> y, FusedComplex<T> w,
                                   Store&& store) {
  const int n = static_cast<int>(al.n);
  if (al.algorithm == R2RAlgorithm::dct1_even_extension) {
    store(k, y.re);
  } else if (al.algorithm == R2RAlgorithm::dst1_odd_extension) {
    if (k >= 1 && k <= n) store(k - 1, -y.im);
  } else {
    // conj(w) V[k] with w = e^{i pi k / 2n}: y[k] = 2 Re(conj(w) V[k]), y[n-k] = -2 Im(conj(w) V[k])
    // (V[n-k] = conj V[k]).
    const T re = w.re * y.re + w.im * y.im;
    const T im = w.re * y.im - w.im * y.re;
    store(al.sine ? n - 1 - k : k, T(2) * re);
    if (k != 0 && 2 * k != n) store(al.sine ? k - 1 : n - k, T(-2) * im);
  }
}

/// Type 3 (C2R of n): the Hermitian half spectrum's element j (0 <= j <= n / 2). `w`: the twiddle at
/// fused_c2r_load_angle. `BranchFree`: j = 0, which has no partner, reads element 0 a second time (a valid address)
/// and drops it, so that no load waits behind a branch of its own; otherwise that load is skipped.
template <class T, bool BranchFree = false, class Load>
CUPLAN_R2R_HD FusedComplex<T> fused_c2r_load(const AxisAlgorithm& al, int j, FusedComplex<T> w, Load&& load) {
  const int n = static_cast<int>(al.n);
  // DST-III runs the DCT-III route on the reversed sequence.
  const auto rev = [&](int i) { return load(al.sine ? n - 1 - i : i); };
  const T xa = rev(j);
  T xb;
  if constexpr (BranchFree) {
    const T xb_loaded = rev(j == 0 ? 0 : n - j);
    xb = j == 0 ? T(0) : xb_loaded;
  } else {
    xb = j == 0 ? T(0) : rev(n - j);
  }
  return {xa * w.re + xb * w.im, xa * w.im - xb * w.re};
}

/// Type 3: the C2R's output m (0 <= m < n) stored unreordered.
template <class T, class Store>
CUPLAN_R2R_HD void fused_c2r_store(const AxisAlgorithm& al, int m, T v, Store&& store) {
  const int n = static_cast<int>(al.n);
  const int k = m < (n + 1) / 2 ? 2 * m : 2 * (n - 1 - m) + 1;
  store(k, (al.sine && (k & 1)) ? -v : v);  // DST-III: (-1)^k times the DCT-III of the reversed input
}

/// Type 4 of even n (C2C of n/2): t[j] = (x[2j] + i x[n-1-2j]) e^{-i pi j / n}. `w`: the twiddle at
/// fused_c2c_load_angle.
template <class T, class Load>
CUPLAN_R2R_HD FusedComplex<T> fused_c2c_load(const AxisAlgorithm& al, int j, FusedComplex<T> w, Load&& load) {
  const int n = static_cast<int>(al.n);
  const auto rev = [&](int i) { return load(al.sine ? n - 1 - i : i); };
  const T xa = rev(2 * j);
  const T xb = rev(n - 1 - 2 * j);
  return {xa * w.re + xb * w.im, xb * w.re - xa * w.im};
}

/// Type 4: z = e^{-i pi (4k+1) / 4n} T[k]; y[2k] = 2 Re z, y[n-1-2k] = -2 Im z (DST-IV: +2 Im z). `w`: the
/// twiddle at fused_c2c_store_angle.
template <class T, class Store>
CUPLAN_R2R_HD void fused_c2c_store(const AxisAlgorithm& al, int k, FusedComplex<T> t, FusedComplex<T> w,
                                   Store&& store) {
  const int n = static_cast<int>(al.n);
  const T zr = t.re * w.re + t.im * w.im;
  const T zi = t.im * w.re - t.re * w.im;
  store(2 * k, T(2) * zr);
  store(n - 1 - 2 * k, al.sine ? T(2) * zi : T(-2) * zi);
}

}  // namespace cuplan::detail
