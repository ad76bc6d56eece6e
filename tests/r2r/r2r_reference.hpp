// SPDX-License-Identifier: Apache-2.0
#pragma once
// float64 direct-sum references of the eight real-to-real kinds as scipy.fft defines them (unnormalized), and the
// normalized N-D reference of a whole RealTransform call, for the tests of every backend.

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "cuplan/r2r.hpp"

namespace r2r_test {

using cuplan::R2RKind;

/// y = kind(x), unnormalized, by the defining sums (long double accumulation).
inline std::vector<double> direct(R2RKind kind, const std::vector<double>& x) {
  const auto n = static_cast<std::int64_t>(x.size());
  std::vector<double> y(x.size());
  const long double pi = std::numbers::pi_v<long double>;
  for (std::int64_t k = 0; k < n; ++k) {
    long double s = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const long double v = x[static_cast<std::size_t>(i)];
      switch (kind) {
        case R2RKind::dct1:
          s += (i == 0 || i == n - 1) ? v * ((k % 2 != 0 && i == n - 1) ? -1 : 1)
                                      : 2 * v * std::cos(pi * k * i / (n - 1));
          break;
        case R2RKind::dct2:
          s += 2 * v * std::cos(pi * k * (2 * i + 1) / (2 * n));
          break;
        case R2RKind::dct3:
          s += i == 0 ? v : 2 * v * std::cos(pi * (2 * k + 1) * i / (2 * n));
          break;
        case R2RKind::dct4:
          s += 2 * v * std::cos(pi * (2 * k + 1) * (2 * i + 1) / (4 * n));
          break;
        case R2RKind::dst1:
          s += 2 * v * std::sin(pi * (k + 1) * (i + 1) / (n + 1));
          break;
        case R2RKind::dst2:
          s += 2 * v * std::sin(pi * (k + 1) * (2 * i + 1) / (2 * n));
          break;
        case R2RKind::dst3:
          s += i == n - 1 ? ((k % 2 != 0) ? -v : v) : 2 * v * std::sin(pi * (2 * k + 1) * (i + 1) / (2 * n));
          break;
        case R2RKind::dst4:
          s += 2 * v * std::sin(pi * (2 * k + 1) * (2 * i + 1) / (4 * n));
          break;
      }
    }
    y[static_cast<std::size_t>(k)] = static_cast<double>(s);
  }
  return y;
}

inline std::vector<double> random_vector(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& e : v) e = dist(rng);
  return v;
}

/// Largest |a - b| over the largest |b| (relative to the result's scale).
inline double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return scale > 0 ? err / scale : err;
}

}  // namespace r2r_test
