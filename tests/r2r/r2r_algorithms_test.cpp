// SPDX-License-Identifier: Apache-2.0
// The GPU route's algebra, checked on the CPU: each kind's pre-pass, an FFTW DFT in place of cuFFT, and its
// post-pass (src/r2r/algorithms.hpp, the functions the kernels call), against the float64 direct sums.

#include <fftw3.h>
#include <gtest/gtest.h>

#include <vector>

#include "r2r/algorithms.hpp"
#include "r2r_reference.hpp"

namespace {

using cuplan::R2RKind;
using cuplan::detail::AxisAlgorithm;
using cuplan::detail::R2RFftType;

// The route of one row, `row` of `rows` FFT rows laid out interleaved (row index fastest, as the kernels lay out an
// axis that is not the innermost) or, with rows = 1, alone. W: the twiddles' and the algebra's precision (float in the
// f32 kernels, double in the f64 ones).
template <class W = double>
std::vector<double> run_route(R2RKind kind, const std::vector<double>& x, int rows = 1, int row = 0) {
  const AxisAlgorithm al = cuplan::detail::choose_algorithm(kind, static_cast<std::int64_t>(x.size()));
  std::vector<double> a(static_cast<std::size_t>(al.a_scalars * rows), 1e300);  // poisoned
  std::vector<double> b(static_cast<std::size_t>(al.b_scalars * rows), 1e300);
  const bool a_complex = al.fft != R2RFftType::r2c, b_complex = al.fft != R2RFftType::c2r;
  const auto view = [&](std::vector<double>& v, bool complex, int r) {
    return cuplan::detail::R2RRowView<double>{v.data() + (complex ? 2 : 1) * r, (complex ? 2 : 1) * rows, complex};
  };
  for (int r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < al.pre_items; ++j)
      cuplan::detail::r2r_pre_item<double, W>(
          al, j, [&](std::int64_t i) { return x.at(static_cast<std::size_t>(i)) * (r + 1); }, view(a, a_complex, r));
  const int len = static_cast<int>(al.fft_length);
  fftw_plan p = nullptr;
  if (al.fft == R2RFftType::r2c)
    p = fftw_plan_many_dft_r2c(1, &len, rows, a.data(), nullptr, rows, 1, reinterpret_cast<fftw_complex*>(b.data()),
                               nullptr, rows, 1, FFTW_ESTIMATE);
  else if (al.fft == R2RFftType::c2r)
    p = fftw_plan_many_dft_c2r(1, &len, rows, reinterpret_cast<fftw_complex*>(a.data()), nullptr, rows, 1, b.data(),
                               nullptr, rows, 1, FFTW_ESTIMATE);
  else
    p = fftw_plan_many_dft(1, &len, rows, reinterpret_cast<fftw_complex*>(a.data()), nullptr, rows, 1,
                           reinterpret_cast<fftw_complex*>(b.data()), nullptr, rows, 1, FFTW_FORWARD, FFTW_ESTIMATE);
  fftw_execute(p);
  fftw_destroy_plan(p);
  std::vector<double> y(x.size(), 1e300);
  std::vector<int> written(x.size(), 0);
  for (std::int64_t k = 0; k < al.post_items; ++k)
    cuplan::detail::r2r_post_item<double, W>(al, k, view(b, b_complex, row), [&](std::int64_t i, double v) {
      y.at(static_cast<std::size_t>(i)) = v / (row + 1);
      ++written.at(static_cast<std::size_t>(i));
    });
  for (std::size_t i = 0; i < written.size(); ++i) EXPECT_EQ(written[i], 1) << "element " << i << " written once";
  return y;
}

class Algorithms : public ::testing::TestWithParam<R2RKind> {};

TEST_P(Algorithms, EveryLengthMatchesTheDirectSum) {
  const R2RKind kind = GetParam();
  for (std::int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 16, 17, 21, 31, 64, 99, 100, 127, 256, 1009, 4095}) {
    if (kind == R2RKind::dct1 && n < 2) continue;
    const auto x = r2r_test::random_vector(static_cast<std::size_t>(n), static_cast<std::uint32_t>(n * 13 + 1));
    const auto reference = r2r_test::direct(kind, x);
    EXPECT_LE(r2r_test::relative_error(run_route(kind, x), reference), 1e-13) << cuplan::to_string(kind) << " n " << n;
    // The middle row of three, interleaved.
    EXPECT_LE(r2r_test::relative_error(run_route(kind, x, 3, 1), reference), 1e-13)
        << cuplan::to_string(kind) << " n " << n << " interleaved";
  }
}

// The f32 kernels' algebra: twiddles (sincospif on the device) and the arithmetic around them in float, data and DFT
// in double, so that what is measured is the algebra's own rounding: a few float ulps, well inside the 2e-6 that f32
// transforms are held to.
TEST_P(Algorithms, FloatTwiddlesMatchTheDirectSumToAFewUlps) {
  const R2RKind kind = GetParam();
  for (std::int64_t n : {2, 3, 8, 17, 100, 1009, 4096}) {
    const auto x = r2r_test::random_vector(static_cast<std::size_t>(n), static_cast<std::uint32_t>(n * 7 + 3));
    const auto reference = r2r_test::direct(kind, x);
    EXPECT_LE(r2r_test::relative_error(run_route<float>(kind, x), reference), 4e-7)
        << cuplan::to_string(kind) << " n " << n;
    EXPECT_LE(r2r_test::relative_error(run_route<float>(kind, x, 3, 2), reference), 4e-7)
        << cuplan::to_string(kind) << " n " << n << " interleaved";
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, Algorithms,
                         ::testing::Values(R2RKind::dct1, R2RKind::dct2, R2RKind::dct3, R2RKind::dct4, R2RKind::dst1,
                                           R2RKind::dst2, R2RKind::dst3, R2RKind::dst4),
                         [](const auto& param_info) { return std::string(cuplan::to_string(param_info.param)); });

}  // namespace
