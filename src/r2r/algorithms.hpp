// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the GPU computes one axis of each kind from one FFT of related length (docs/r2r.md, "Algorithms"): a pass
// that loads the axis and writes the FFT's input (reordering, extension or pre-twiddle), the FFT, and a pass that
// reads the FFT's output and stores the axis (twiddle, unpermute). The per-element functions are written once here
// for host and device: the CUDA kernels call them, and a CPU test runs them around FFTW's DFTs to check the algebra
// without a GPU.

#include <cstdint>

#include "cuplan/r2r.hpp"

#if defined(__CUDACC__)
#define CUPLAN_R2R_HD __host__ __device__ inline
#else
#define CUPLAN_R2R_HD inline
#endif

namespace cuplan::detail {

/// The route of one axis.
enum class R2RAlgorithm : std::uint8_t {
  dct1_even_extension,  ///< DCT-I: real FFT of the even extension, length 2(n-1); y = Re Y
  dst1_odd_extension,   ///< DST-I: real FFT of the odd extension, length 2(n+1); y = -Im Y
  type2_reorder,        ///< DCT-II/DST-II: even/odd reordering, real FFT of length n, quarter-wave twiddle
  type3_reorder,        ///< DCT-III/DST-III: twiddle to a Hermitian half spectrum, C2R of length n, unreorder
  type4_half_complex,   ///< DCT-IV/DST-IV, even n: pre-twiddled complex FFT of length n/2, post-twiddle
  type4_odd_permuted    ///< DCT-IV/DST-IV, odd n: index permutation (CRT), real FFT of length n, signs
};

/// The FFT a route runs over one row.
enum class R2RFftType : std::uint8_t { r2c, c2r, c2c };

/// One axis's route and sizes (per row; scalar counts in the transform's precision).
struct AxisAlgorithm {
  R2RAlgorithm algorithm = R2RAlgorithm::type2_reorder;
  bool sine = false;   ///< DST: the DCT route on the reversed or sign-flipped sequence
  std::int64_t n = 0;  ///< axis length
  R2RFftType fft = R2RFftType::r2c;
  std::int64_t fft_length = 0;  ///< logical length of the FFT
  std::int64_t pre_items = 0;   ///< pre-pass work items per row
  std::int64_t post_items = 0;  ///< post-pass work items per row
  std::int64_t a_scalars = 0;   ///< scalars of the FFT's input row (real count, or twice the complex count)
  std::int64_t b_scalars = 0;   ///< scalars of the FFT's output row
};

/// `algorithm` on an R2C of the axis's own length (types II and odd IV): one pre-pass and one post-pass item per
/// value.
CUPLAN_R2R_HD void use_r2c_of_n(AxisAlgorithm& a, R2RAlgorithm algorithm) {
  a.algorithm = algorithm;
  a.fft = R2RFftType::r2c;
  a.fft_length = a.n;
  a.pre_items = a.post_items = a.n;
  a.a_scalars = a.n;
  a.b_scalars = 2 * (a.n / 2 + 1);
}

CUPLAN_R2R_HD AxisAlgorithm choose_algorithm(R2RKind kind, std::int64_t n) {
  AxisAlgorithm a;
  a.n = n;
  const int k = static_cast<int>(kind);
  a.sine = k >= 4;
  switch (k % 4) {
    case 0:
      a.algorithm = a.sine ? R2RAlgorithm::dst1_odd_extension : R2RAlgorithm::dct1_even_extension;
      a.fft = R2RFftType::r2c;
      a.fft_length = a.sine ? 2 * (n + 1) : 2 * (n - 1);
      a.pre_items = a.fft_length;
      a.post_items = n;
      a.a_scalars = a.fft_length;
      a.b_scalars = 2 * (a.fft_length / 2 + 1);
      break;
    case 1:
      use_r2c_of_n(a, R2RAlgorithm::type2_reorder);
      a.post_items = n / 2 + 1;  // item h gives outputs h and n-h from one spectrum value (r2r_post_item)
      break;
    case 2:
      a.algorithm = R2RAlgorithm::type3_reorder;
      a.fft = R2RFftType::c2r;
      a.fft_length = n;
      a.pre_items = n / 2 + 1;
      a.post_items = n;
      a.a_scalars = 2 * (n / 2 + 1);
      a.b_scalars = n;
      break;
    default:
      a.fft = R2RFftType::c2c;
      if (n % 2 == 0) {
        a.algorithm = R2RAlgorithm::type4_half_complex;
        a.fft_length = n / 2;
        a.pre_items = n / 2;
        a.post_items = n / 2;
        a.a_scalars = a.b_scalars = 2 * a.fft_length;
      } else {
        use_r2c_of_n(a, R2RAlgorithm::type4_odd_permuted);
      }
      break;
  }
  return a;
}

/// cos(pi x) and sin(pi x). The host computes them in double; the device in the precision W its kernel asks for:
/// double (sincospi) for f64 transforms, float (sincospif, 1 ulp) for f32 ones, whose per-element sincospi in double
/// made the post-pass compute-bound (the axis's FFT and the algebra around it are f32 anyway).
template <class W>
struct R2RTwiddleOf {
  W c, s;
};
using R2RTwiddle = R2RTwiddleOf<double>;
#if defined(__CUDA_ARCH__)
__device__ inline R2RTwiddle r2r_twiddle(double x) {
  R2RTwiddle t;
  sincospi(x, &t.s, &t.c);
  return t;
}
__device__ inline R2RTwiddleOf<float> r2r_twiddle(float x) {
  R2RTwiddleOf<float> t;
  sincospif(x, &t.s, &t.c);
  return t;
}
#else
R2RTwiddle r2r_twiddle(double x);  // algorithms.cpp
inline R2RTwiddleOf<float> r2r_twiddle(float x) {
  const R2RTwiddle t = r2r_twiddle(static_cast<double>(x));
  return {static_cast<float>(t.c), static_cast<float>(t.s)};
}
#endif
/// The twiddle at angle pi p / q in precision W (p and q exact below 2^24 in float; the quotient rounded once).
template <class W>
CUPLAN_R2R_HD R2RTwiddleOf<W> r2r_twiddle_at(std::int64_t p, std::int64_t q) {
  return r2r_twiddle(static_cast<W>(p) / static_cast<W>(q));
}

/// One row of the FFT's input or output seen as scalars (complex values as re, im pairs), in either layout the
/// kernels use: rows one after another (`stride` 1 per real value or 2 per complex value) or rows interleaved, the
/// row index fastest (`stride` the row count per real value, or twice it per complex value), which keeps both the
/// passes' loads and stores coalesced along an axis that is not the innermost.
template <class T>
struct R2RRowView {
  T* base;
  std::int64_t stride;
  bool complex;
  CUPLAN_R2R_HD T& operator[](std::int64_t s) const {
    return complex ? base[(s >> 1) * stride + (s & 1)] : base[s * stride];
  }
};

/// Value q (0 <= q < n) of a length-n Hermitian spectrum held as its half, values 0 .. n/2 as (re, im) pairs in `b`
/// (an R2C's output row): conj of value n - q above n/2.
template <class W, class Row>
CUPLAN_R2R_HD void r2r_half_spectrum_at(const Row& b, std::int64_t n, std::int64_t q, W& re, W& im) {
  const bool upper = q > n / 2;
  const std::int64_t h = upper ? n - q : q;
  re = static_cast<W>(b[2 * h]);
  im = upper ? -static_cast<W>(b[2 * h + 1]) : static_cast<W>(b[2 * h + 1]);
}

/// The two real characters of the odd residues mod 8 that give e^{i pi r / 4} = (chi(r) + i psi(r)) / sqrt2 for odd r:
/// chi is +1 at r = 1, 7 and psi at r = 1, 3. Being characters (chi(ab) = chi(a) chi(b)), they split odd-length
/// type IV's kernel into a product of row and column factors.
CUPLAN_R2R_HD int r2r_chi8(int r) {
  return (r == 1 || r == 7) ? 1 : -1;
}
CUPLAN_R2R_HD int r2r_psi8(int r) {
  return (r == 1 || r == 3) ? 1 : -1;
}

/// The pre-pass item `j` of one row: reads the axis through `load(i)` (the operand's element i of the row, already
/// scaled by orthogonalize's input factor) and writes the FFT's input row `a` (T scalars; complex as re, im pairs;
/// a T* or an R2RRowView). W: the precision of the twiddles and of the arithmetic around them (double on the host
/// and for f64 kernels, float for f32 kernels).
template <class T, class W = double, class Load, class Row>
CUPLAN_R2R_HD void r2r_pre_item(const AxisAlgorithm& al, std::int64_t j, Load&& load, Row&& a) {
  const std::int64_t n = al.n;
  // DST-III and DST-IV run the cosine route on the reversed sequence.
  const auto rev = [&](std::int64_t i) { return al.sine ? load(n - 1 - i) : load(i); };
  switch (al.algorithm) {
    case R2RAlgorithm::dct1_even_extension: {
      const std::int64_t l = al.fft_length;
      a[j] = load(j <= n - 1 ? j : l - j);
      break;
    }
    case R2RAlgorithm::dst1_odd_extension: {
      const std::int64_t l = al.fft_length;
      a[j] = (j == 0 || j == n + 1) ? T(0) : (j <= n ? load(j - 1) : -load(l - 1 - j));
      break;
    }
    case R2RAlgorithm::type2_reorder: {
      const std::int64_t i = j < (n + 1) / 2 ? 2 * j : 2 * (n - 1 - j) + 1;
      const T v = load(i);
      a[j] = (al.sine && (i & 1)) ? -v : v;  // DST-II: the DCT-II of (-1)^i x[i], reversed on store
      break;
    }
    case R2RAlgorithm::type3_reorder: {
      // H[k] = e^{i pi k / 2n} (X[k] - i X[n-k]), X[n] = 0: the Hermitian half spectrum whose C2R is the reordered
      // DCT-III.
      const W xa = static_cast<W>(rev(j));
      const W xb = j == 0 ? W(0) : static_cast<W>(rev(n - j));
      const R2RTwiddleOf<W> w = r2r_twiddle_at<W>(j, 2 * n);
      a[2 * j] = static_cast<T>(xa * w.c + xb * w.s);
      a[2 * j + 1] = static_cast<T>(xa * w.s - xb * w.c);
      break;
    }
    case R2RAlgorithm::type4_half_complex: {
      // t[j] = (x[2j] + i x[n-1-2j]) e^{-i pi j / n}
      const W xa = static_cast<W>(rev(2 * j));
      const W xb = static_cast<W>(rev(n - 1 - 2 * j));
      const R2RTwiddleOf<W> w = r2r_twiddle_at<W>(j, n);
      a[2 * j] = static_cast<T>(xa * w.c + xb * w.s);
      a[2 * j + 1] = static_cast<T>(xb * w.c - xa * w.s);
      break;
    }
    case R2RAlgorithm::type4_odd_permuted: {
      // Item p writes r[p] from x[j] and x[n-1-j], where p = (2j+1) mod n (so -p = (2(n-1-j)+1) mod n):
      // r[p] = (c[j] + c[n-1-j]) / 2 + (s[j] - s[n-1-j]) / 2, c[j] = chi(2j+1) x[j], s[j] = psi(2j+1) x[j]: the even
      // part of c plus the odd part of s, so that Re R = sum c cos and Im R = -sum s sin (docs/r2r.md).
      const std::int64_t i = (j & 1) ? (j - 1) / 2 : (j + n - 1) / 2;
      const std::int64_t i2 = n - 1 - i;
      const W xa = static_cast<W>(rev(i)), xb = static_cast<W>(rev(i2));
      const int ra = static_cast<int>((2 * i + 1) & 7), rb = static_cast<int>((2 * i2 + 1) & 7);
      const W c = static_cast<W>(r2r_chi8(ra)) * xa + static_cast<W>(r2r_chi8(rb)) * xb;
      const W sn = static_cast<W>(r2r_psi8(ra)) * xa - static_cast<W>(r2r_psi8(rb)) * xb;
      a[j] = static_cast<T>(W(0.5) * (c + sn));  // p = 0 pairs j with itself: chi x[j]
      break;
    }
  }
}

/// Where the type-II pre-pass (type2_reorder) puts element `i` of a row of length `n`: the FFT input's index `j`
/// (r2r_pre_item's item j loads element i) and whether it goes there negated (DST-II's odd elements). The reordering
/// is a permutation, so a pass that produces the row element by element can store it there directly and the
/// pre-pass need not run (r2r_kernels.cu, the bridge of one axis's post-pass into the next axis's FFT input).
struct R2RScatter {
  std::int64_t j;
  bool negate;
};
CUPLAN_R2R_HD R2RScatter r2r_type2_scatter(std::int64_t n, bool sine, std::int64_t i) {
  return {(i & 1) ? n - 1 - (i - 1) / 2 : i / 2, sine && (i & 1) != 0};
}

/// The post-pass item `k` of one row: reads the FFT's output row `b` and stores the axis through `store(i, value)`
/// (which applies the output factors), one or two elements per item. W as for r2r_pre_item.
template <class T, class W = double, class Store, class Row>
CUPLAN_R2R_HD void r2r_post_item(const AxisAlgorithm& al, std::int64_t k, const Row& b, Store&& store) {
  const std::int64_t n = al.n;
  switch (al.algorithm) {
    case R2RAlgorithm::dct1_even_extension:
      store(k, b[2 * k]);
      break;
    case R2RAlgorithm::dst1_odd_extension:
      store(k, -b[2 * (k + 1) + 1]);
      break;
    case R2RAlgorithm::type2_reorder: {
      // Item h (0 <= h <= n/2) reads the spectrum value V[h] once: y[q] = 2 Re(e^{-i pi q / 2n} V[q]) at q = h, and,
      // as V[n-h] = conj V[h] and e^{-i pi (n-h) / 2n} = -i conj e^{-i pi h / 2n}, y[n-h] = -2 Im(e^{-i pi h / 2n}
      // V[h]) for 0 < h < n - h. DST-II reads y reversed (output k = n-1-q).
      const std::int64_t h = k;
      const W vr = static_cast<W>(b[2 * h]), vi = static_cast<W>(b[2 * h + 1]);
      const R2RTwiddleOf<W> w = r2r_twiddle_at<W>(h, 2 * n);
      const auto at = [&](std::int64_t q) { return al.sine ? n - 1 - q : q; };
      store(at(h), static_cast<T>(W(2) * (w.c * vr + w.s * vi)));
      if (h > 0 && h < n - h) store(at(n - h), static_cast<T>(W(2) * (w.s * vr - w.c * vi)));
      break;
    }
    case R2RAlgorithm::type3_reorder: {
      const std::int64_t m = (k & 1) ? n - 1 - (k - 1) / 2 : k / 2;
      const T v = b[m];
      store(k, (al.sine && (k & 1)) ? -v : v);  // DST-III: (-1)^k times the DCT-III of the reversed input
      break;
    }
    case R2RAlgorithm::type4_half_complex: {
      // z = e^{-i pi (4k+1) / 4n} T[k]; y[2k] = 2 Re z, y[n-1-2k] = -2 Im z (n even: n-1-2k is odd)
      const W tr = static_cast<W>(b[2 * k]);
      const W ti = static_cast<W>(b[2 * k + 1]);
      const R2RTwiddleOf<W> w = r2r_twiddle_at<W>(4 * k + 1, 4 * n);
      const W zr = tr * w.c + ti * w.s;
      const W zi = ti * w.c - tr * w.s;
      store(2 * k, static_cast<T>(W(2) * zr));
      store(n - 1 - 2 * k, static_cast<T>(al.sine ? W(2) * zi : W(-2) * zi));  // DST-IV: (-1)^i
      break;
    }
    case R2RAlgorithm::type4_odd_permuted: {
      // y[k] = sqrt2 (chi(b) A - psi(b) B) with A = Re R[q], B = -Im R[q], q = (2k+1)/8 mod n and b = (2k+1) n mod 8
      // (n^-1 = n mod 8 for odd n). q = (t + m n) / 8 with the m in [0, 8) that makes it whole: no product overflows.
      const std::int64_t t = 2 * k + 1;
      const int tn = static_cast<int>(((t & 7) * (n & 7)) & 7);
      const std::int64_t q = ((t + ((8 - tn) & 7) * n) / 8) % n;
      W rr, ri;
      r2r_half_spectrum_at(b, n, q, rr, ri);
      const W y = static_cast<W>(1.4142135623730950488) *
                  (static_cast<W>(r2r_chi8(tn)) * rr + static_cast<W>(r2r_psi8(tn)) * ri);
      store(k, static_cast<T>((al.sine && (k & 1)) ? -y : y));  // DST-IV: (-1)^k
      break;
    }
  }
}

/// "R2C", "C2R" or "C2C", for describe() and messages.
const char* r2r_fft_type_name(R2RFftType fft) noexcept;
/// "even/odd reorder + R2C(n) + twiddle", for describe() and docs.
const char* algorithm_summary(R2RAlgorithm algorithm) noexcept;

}  // namespace cuplan::detail
