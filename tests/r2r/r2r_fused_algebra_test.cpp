// SPDX-License-Identifier: Apache-2.0
// The fused kernels' algebra, checked on the CPU: each kind's load side (src/r2r/fused_algebra.hpp, the functions
// the fused kernels call per register), an FFTW DFT in place of cuFFTDx, and its store side, against the float64
// direct sums and against the passes' algebra (r2r_pre_item / r2r_post_item), with orthogonalize-like edge factors
// and a scale applied by the load and store callbacks as the kernels apply them. Every output is written once.

#include <fftw3.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <numbers>
#include <vector>

#include "r2r/algorithms.hpp"
#include "r2r/fused_algebra.hpp"
#include "r2r_reference.hpp"

namespace {

using cuplan::R2RKind;
using cuplan::detail::AxisAlgorithm;
using cuplan::detail::FusedComplex;
using cuplan::detail::R2RFftType;

using cuplan::detail::TwiddleAngle;

// The twiddle cos + i sin of pi (a k + b) / d, computed directly.
FusedComplex<double> twiddle(TwiddleAngle angle, std::int64_t k) {
  const double x = static_cast<double>(angle.a * k + angle.b) / static_cast<double>(angle.d);
  return {std::cos(std::numbers::pi * x), std::sin(std::numbers::pi * x)};
}

struct Factors {
  double pre_first = 1, pre_last = 1, post_first = 1, post_last = 1, scale = 1;
};

// The fused route of one row: the kernel's load for every FFT input element, the DFT, the kernel's store for every
// FFT output element.
std::vector<double> run_fused(R2RKind kind, const std::vector<double>& x, const Factors& f) {
  const auto n = static_cast<std::int64_t>(x.size());
  const AxisAlgorithm al = cuplan::detail::choose_algorithm(kind, n);
  const std::int64_t l = al.fft_length;
  const auto load = [&](int i) {
    double v = x.at(static_cast<std::size_t>(i));
    if (i == 0) v *= f.pre_first;
    if (i == n - 1) v *= f.pre_last;
    return v;
  };
  std::vector<double> y(x.size(), 1e300);  // poisoned
  std::vector<int> written(x.size(), 0);
  const auto store = [&](int i, double v) {
    const double factor = i == 0 ? f.post_first : i == n - 1 ? f.post_last : f.scale;
    y.at(static_cast<std::size_t>(i)) = v * factor;
    ++written.at(static_cast<std::size_t>(i));
  };
  const int len = static_cast<int>(l);
  if (al.fft == R2RFftType::r2c) {
    std::vector<double> a(static_cast<std::size_t>(l));
    std::vector<fftw_complex> b(static_cast<std::size_t>(l / 2 + 1));
    for (int j = 0; j < len; ++j) a[static_cast<std::size_t>(j)] = cuplan::detail::fused_r2c_load<double>(al, j, load);
    fftw_plan p = fftw_plan_dft_r2c_1d(len, a.data(), b.data(), FFTW_ESTIMATE);
    fftw_execute(p);
    fftw_destroy_plan(p);
    for (int k = 0; k <= len / 2; ++k)
      cuplan::detail::fused_r2c_store<double>(
          al, k, FusedComplex<double>{b[static_cast<std::size_t>(k)][0], b[static_cast<std::size_t>(k)][1]},
          twiddle(cuplan::detail::fused_r2c_store_angle(n), k), store);
  } else if (al.fft == R2RFftType::c2r) {
    std::vector<fftw_complex> a(static_cast<std::size_t>(l / 2 + 1));
    std::vector<double> b(static_cast<std::size_t>(l));
    for (int j = 0; j <= len / 2; ++j) {
      const FusedComplex<double> h =
          cuplan::detail::fused_c2r_load<double>(al, j, twiddle(cuplan::detail::fused_c2r_load_angle(n), j), load);
      a[static_cast<std::size_t>(j)][0] = h.re;
      a[static_cast<std::size_t>(j)][1] = h.im;
    }
    fftw_plan p = fftw_plan_dft_c2r_1d(len, a.data(), b.data(), FFTW_ESTIMATE);
    fftw_execute(p);
    fftw_destroy_plan(p);
    for (int m = 0; m < len; ++m) cuplan::detail::fused_c2r_store<double>(al, m, b[static_cast<std::size_t>(m)], store);
  } else {
    std::vector<fftw_complex> a(static_cast<std::size_t>(l)), b(static_cast<std::size_t>(l));
    for (int j = 0; j < len; ++j) {
      const FusedComplex<double> t =
          cuplan::detail::fused_c2c_load<double>(al, j, twiddle(cuplan::detail::fused_c2c_load_angle(n), j), load);
      a[static_cast<std::size_t>(j)][0] = t.re;
      a[static_cast<std::size_t>(j)][1] = t.im;
    }
    fftw_plan p = fftw_plan_dft_1d(len, a.data(), b.data(), FFTW_FORWARD, FFTW_ESTIMATE);
    fftw_execute(p);
    fftw_destroy_plan(p);
    for (int k = 0; k < len; ++k)
      cuplan::detail::fused_c2c_store<double>(
          al, k, FusedComplex<double>{b[static_cast<std::size_t>(k)][0], b[static_cast<std::size_t>(k)][1]},
          twiddle(cuplan::detail::fused_c2c_store_angle(n), k), store);
  }
  for (std::size_t i = 0; i < written.size(); ++i) EXPECT_EQ(written[i], 1) << "element " << i << " written once";
  return y;
}

// The passes' route of one row (r2r_pre_item, DFT, r2r_post_item), unscaled.
std::vector<double> run_passes(R2RKind kind, const std::vector<double>& x) {
  const AxisAlgorithm al = cuplan::detail::choose_algorithm(kind, static_cast<std::int64_t>(x.size()));
  std::vector<double> a(static_cast<std::size_t>(al.a_scalars)), b(static_cast<std::size_t>(al.b_scalars));
  for (std::int64_t j = 0; j < al.pre_items; ++j)
    cuplan::detail::r2r_pre_item<double>(
        al, j, [&](std::int64_t i) { return x.at(static_cast<std::size_t>(i)); }, a.data());
  const int len = static_cast<int>(al.fft_length);
  fftw_plan p = nullptr;
  if (al.fft == R2RFftType::r2c)
    p = fftw_plan_dft_r2c_1d(len, a.data(), reinterpret_cast<fftw_complex*>(b.data()), FFTW_ESTIMATE);
  else if (al.fft == R2RFftType::c2r)
    p = fftw_plan_dft_c2r_1d(len, reinterpret_cast<fftw_complex*>(a.data()), b.data(), FFTW_ESTIMATE);
  else
    p = fftw_plan_dft_1d(len, reinterpret_cast<fftw_complex*>(a.data()), reinterpret_cast<fftw_complex*>(b.data()),
                         FFTW_FORWARD, FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  std::vector<double> y(x.size());
  for (std::int64_t k = 0; k < al.post_items; ++k)
    cuplan::detail::r2r_post_item<double>(al, k, b.data(),
                                          [&](std::int64_t i, double v) { y.at(static_cast<std::size_t>(i)) = v; });
  return y;
}

// Axis lengths whose FFT is a power of two, as on the fused route (type 4 of even n only).
std::vector<std::int64_t> fused_lengths(R2RKind kind,
                                        std::initializer_list<std::int64_t> fft_lengths = {4, 8, 16, 64, 256, 1024}) {
  std::vector<std::int64_t> lengths;
  for (std::int64_t l : fft_lengths) {
    switch (static_cast<int>(kind) % 4) {
      case 0:
        lengths.push_back(kind == R2RKind::dct1 ? l / 2 + 1 : l / 2 - 1);
        break;
      case 3:
        lengths.push_back(2 * l);
        break;
      default:
        lengths.push_back(l);
    }
  }
  return lengths;
}

class FusedAlgebra : public ::testing::TestWithParam<R2RKind> {};

TEST_P(FusedAlgebra, MatchesTheDirectSumAndThePasses) {
  const R2RKind kind = GetParam();
  for (std::int64_t n : fused_lengths(kind)) {
    const auto x = r2r_test::random_vector(static_cast<std::size_t>(n), static_cast<std::uint32_t>(n * 7 + 3));
    const auto reference = r2r_test::direct(kind, x);
    const auto fused = run_fused(kind, x, {});
    EXPECT_LE(r2r_test::relative_error(fused, reference), 1e-13) << cuplan::to_string(kind) << " n " << n;
    EXPECT_LE(r2r_test::relative_error(fused, run_passes(kind, x)), 1e-13) << cuplan::to_string(kind) << " n " << n;
  }
}

TEST_P(FusedAlgebra, EdgeFactorsAndScaleApplyWhereTheKernelAppliesThem) {
  const R2RKind kind = GetParam();
  const std::int64_t n = fused_lengths(kind)[3];
  const Factors f{std::sqrt(2.0), 0.5, 1 / std::sqrt(2.0) * 0.25, 3.0 * 0.25, 0.25};
  const auto x = r2r_test::random_vector(static_cast<std::size_t>(n), 41);
  auto scaled = x;
  scaled.front() *= f.pre_first;
  scaled.back() *= f.pre_last;
  auto reference = r2r_test::direct(kind, scaled);
  for (double& v : reference) v *= f.scale;
  reference.front() *= f.post_first / f.scale;
  reference.back() *= f.post_last / f.scale;
  EXPECT_LE(r2r_test::relative_error(run_fused(kind, x, f), reference), 1e-13) << cuplan::to_string(kind);
}

// Each fused kernel is compiled for one algorithm and FFT length, which fix the row length it transforms: the length
// every axis of that algorithm and FFT length has (up to the longest compiled FFT length, 16384).
TEST_P(FusedAlgebra, TheRowLengthIsAConstantOfTheKernelsAlgorithmAndFftLength) {
  const R2RKind kind = GetParam();
  for (std::int64_t n : fused_lengths(kind, {4, 8, 16, 64, 256, 512, 1024, 2048, 4096, 8192, 16384})) {
    const AxisAlgorithm al = cuplan::detail::choose_algorithm(kind, n);
    EXPECT_EQ(cuplan::detail::fused_row_length(al.algorithm, al.fft_length), n)
        << cuplan::to_string(kind) << " n " << n << " FFT length " << al.fft_length;
  }
  // Type 4 of odd length runs a permuted R2C, which no fused kernel runs.
  const AxisAlgorithm odd = cuplan::detail::choose_algorithm(R2RKind::dct4, 1025);
  EXPECT_EQ(cuplan::detail::fused_row_length(odd.algorithm, odd.fft_length), 0);
}

// The kernels' per-register twiddle rotations are constant expressions: exact to double's rounding on every
// quarter turn, the complement's boundary and negative angles.
// The folded kernels' four-at-a-time loads (type 2) and stores (type 3) give exactly what the per-element functions
// give: every pair of the reordered row from one quad, every output of a quad where fused_c2r_store puts it.
TEST(FusedQuads, Type2QuadsGiveThePairsOfThePerElementLoads) {
  for (R2RKind kind : {R2RKind::dct2, R2RKind::dst2})
    for (std::int64_t n : {4, 8, 12, 256, 4096}) {
      const AxisAlgorithm al = cuplan::detail::choose_algorithm(kind, n);
      const std::vector<double> x = r2r_test::random_vector(static_cast<std::size_t>(n), 11);
      const auto load = [&](int i) { return x.at(static_cast<std::size_t>(i)); };
      std::vector<int> seen(static_cast<std::size_t>(n / 2), 0);
      for (int q = 0; q < n / 4; ++q) {
        const double quad[4] = {x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3]};
        FusedComplex<double> low{}, high{};
        cuplan::detail::fused_type2_quad_pairs(al, quad, low, high);
        for (const auto& [p, pair] : {std::pair{q, low}, std::pair{static_cast<int>(n / 2) - 1 - q, high}}) {
          EXPECT_EQ(pair.re, cuplan::detail::fused_r2c_load<double>(al, 2 * p, load)) << n << " pair " << p;
          EXPECT_EQ(pair.im, cuplan::detail::fused_r2c_load<double>(al, 2 * p + 1, load)) << n << " pair " << p;
          ++seen.at(static_cast<std::size_t>(p));
        }
      }
      EXPECT_TRUE(std::ranges::all_of(seen, [](int c) { return c == 1; }))
          << "every pair from exactly one quad, n " << n;
    }
}

TEST(FusedQuads, Type3QuadsPutEveryOutputWhereThePerElementStoreDoes) {
  for (R2RKind kind : {R2RKind::dct3, R2RKind::dst3})
    for (std::int64_t n : {4, 8, 12, 256, 4096}) {
      const AxisAlgorithm al = cuplan::detail::choose_algorithm(kind, n);
      const std::vector<double> v = r2r_test::random_vector(static_cast<std::size_t>(n), 13);  // the C2R's output
      std::vector<double> expected(static_cast<std::size_t>(n), 1e300), got(static_cast<std::size_t>(n), 1e300);
      for (int m = 0; m < n; ++m)
        cuplan::detail::fused_c2r_store<double>(al, m, v[static_cast<std::size_t>(m)], [&](int i, double value) {
          expected.at(static_cast<std::size_t>(i)) = value;
        });
      for (int q = 0; q < n / 4; ++q) {
        const int p = static_cast<int>(n / 2) - 1 - q;
        double y[4];
        cuplan::detail::fused_type3_quad_outputs<double>(al, {v[2 * q], v[2 * q + 1]}, {v[2 * p], v[2 * p + 1]}, y);
        for (int i = 0; i < 4; ++i) got.at(static_cast<std::size_t>(4 * q + i)) = y[i];
      }
      EXPECT_EQ(got, expected) << cuplan::to_string(kind) << " n " << n;
    }
}

// The branch-free type-3 load (the kernels' straight-line form, up to 16 elements per thread) gives what the
// per-element form gives at every spectrum index, j = 0 included, and reads inside the row only.
TEST(FusedType3Load, TheBranchFreeLoadMatchesThePerElementOneAndReadsInsideTheRow) {
  for (const R2RKind kind : {R2RKind::dct3, R2RKind::dst3}) {
    for (std::int64_t n : fused_lengths(kind)) {
      const AxisAlgorithm al = cuplan::detail::choose_algorithm(kind, n);
      ASSERT_EQ(al.fft, R2RFftType::c2r) << cuplan::to_string(kind) << " n " << n;
      const auto x = r2r_test::random_vector(static_cast<std::size_t>(n), static_cast<std::uint32_t>(n * 5 + 1));
      int outside = 0;
      const auto load = [&](int i) {
        if (i < 0 || i >= n) {
          ++outside;
          return 0.0;
        }
        return x[static_cast<std::size_t>(i)];
      };
      for (int j = 0; j <= static_cast<int>(n / 2); ++j) {
        const FusedComplex<double> w = twiddle(cuplan::detail::fused_c2r_load_angle(n), j);
        const FusedComplex<double> a = cuplan::detail::fused_c2r_load<double, true>(al, j, w, load);
        const FusedComplex<double> b = cuplan::detail::fused_c2r_load<double, false>(al, j, w, load);
        EXPECT_EQ(a.re, b.re) << cuplan::to_string(kind) << " n " << n << " j " << j;
        EXPECT_EQ(a.im, b.im) << cuplan::to_string(kind) << " n " << n << " j " << j;
      }
      EXPECT_EQ(outside, 0) << cuplan::to_string(kind) << " n " << n << ": loads outside the row";
    }
  }
}

TEST(FusedTwiddles, TheConstantCosineAndSineMatchTheLibrarys) {
  static_assert(cuplan::detail::constant_cos_sin_pi(0, 1).re == 1.0);
  static_assert(cuplan::detail::constant_cos_sin_pi(1, 2).re < 1e-15);
  for (std::int64_t q : {1, 2, 3, 4, 7, 8, 1000, 32768, 65536}) {
    for (std::int64_t p = -3 * q; p <= 3 * q; p += (q > 64 ? q / 64 + 1 : 1)) {
      const FusedComplex<double> w = cuplan::detail::constant_cos_sin_pi(p, q);
      const long double x = std::numbers::pi_v<long double> * static_cast<long double>(p) / static_cast<long double>(q);
      EXPECT_NEAR(w.re, static_cast<double>(std::cos(x)), 4e-16) << p << " / " << q;
      EXPECT_NEAR(w.im, static_cast<double>(std::sin(x)), 4e-16) << p << " / " << q;
    }
  }
}

// A thread's twiddles as the kernels compute them: a sincospi at its first element, then a rotation by the constant of
// each register (k = e * stride + t), in float and in double, against the direct twiddle. Every side's angle, at the
// longest row a fused kernel runs and a block stride of 256 (64 registers).
template <class T>
double rotated_twiddle_error(TwiddleAngle angle, std::int64_t stride, std::int64_t registers) {
  double worst = 0;
  for (std::int64_t t = 0; t < stride; t += 7) {
    const T x0 = static_cast<T>(angle.a * t + angle.b) * (T(1) / static_cast<T>(angle.d));
    const T c0 = static_cast<T>(std::cos(std::numbers::pi * static_cast<double>(x0)));
    const T s0 = static_cast<T>(std::sin(std::numbers::pi * static_cast<double>(x0)));
    for (std::int64_t e = 0; e < registers; ++e) {
      const FusedComplex<double> step = cuplan::detail::constant_cos_sin_pi(angle.a * e * stride, angle.d);
      const T c = static_cast<T>(step.re), s = static_cast<T>(step.im);
      const T re = c0 * c - s0 * s, im = s0 * c + c0 * s;
      const FusedComplex<double> exact = twiddle(angle, e * stride + t);
      worst =
          std::max({worst, std::abs(static_cast<double>(re) - exact.re), std::abs(static_cast<double>(im) - exact.im)});
    }
  }
  return worst;
}

TEST(FusedTwiddles, ARotatedThreadTwiddleIsWithinAFewRoundingsOfTheDirectOne) {
  const std::int64_t n = 32768;
  for (const TwiddleAngle angle : {cuplan::detail::fused_r2c_store_angle(n), cuplan::detail::fused_c2r_load_angle(n),
                                   cuplan::detail::fused_c2c_load_angle(n), cuplan::detail::fused_c2c_store_angle(n)}) {
    EXPECT_LE(rotated_twiddle_error<float>(angle, 256, 64), 4.0 * 0x1p-24)
        << angle.a << " k + " << angle.b << " / " << angle.d;
    EXPECT_LE(rotated_twiddle_error<double>(angle, 256, 64), 4.0 * 0x1p-53)
        << angle.a << " k + " << angle.b << " / " << angle.d;
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, FusedAlgebra,
                         ::testing::Values(R2RKind::dct1, R2RKind::dct2, R2RKind::dct3, R2RKind::dct4, R2RKind::dst1,
                                           R2RKind::dst2, R2RKind::dst3, R2RKind::dst4),
                         [](const auto& param_info) { return std::string(cuplan::to_string(param_info.param)); });

}  // namespace
