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

std::vector<double> run_route(R2RKind kind, const std::vector<double>& x) {
  const AxisAlgorithm al = cuplan::detail::choose_algorithm(kind, static_cast<std::int64_t>(x.size()));
  std::vector<double> a(static_cast<std::size_t>(al.a_scalars), 1e300);  // poisoned
  std::vector<double> b(static_cast<std::size_t>(al.b_scalars), 1e300);
  for (std::int64_t j = 0; j < al.pre_items; ++j)
    cuplan::detail::r2r_pre_item(
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
  std::vector<double> y(x.size(), 1e300);
  std::vector<int> written(x.size(), 0);
  for (std::int64_t k = 0; k < al.post_items; ++k)
    cuplan::detail::r2r_post_item(al, k, b.data(), [&](std::int64_t i, double v) {
      y.at(static_cast<std::size_t>(i)) = v;
      ++written.at(static_cast<std::size_t>(i));
    });
  for (std::size_t i = 0; i < written.size(); ++i) EXPECT_EQ(written[i], 1) << "element " << i << " written once";
  return y;
}

class Algorithms : public ::testing::TestWithParam<R2RKind> {};

TEST_P(Algorithms, EveryLengthMatchesTheDirectSum) {
  const R2RKind kind = GetParam();
  for (std::int64_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 64, 100, 127, 256, 1009}) {
    if (kind == R2RKind::dct1 && n < 2) continue;
    const auto x = r2r_test::random_vector(static_cast<std::size_t>(n), static_cast<std::uint32_t>(n * 13 + 1));
    const double err = r2r_test::relative_error(run_route(kind, x), r2r_test::direct(kind, x));
    EXPECT_LE(err, 1e-13) << cuplan::to_string(kind) << " n " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, Algorithms,
                         ::testing::Values(R2RKind::dct1, R2RKind::dct2, R2RKind::dct3, R2RKind::dct4, R2RKind::dst1,
                                           R2RKind::dst2, R2RKind::dst3, R2RKind::dst4),
                         [](const auto& param_info) { return std::string(cuplan::to_string(param_info.param)); });

}  // namespace
