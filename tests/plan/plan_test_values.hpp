// SPDX-License-Identifier: Apache-2.0
#pragma once
// Values shared by the plan-layer tests that call FFT and Matmul as users do: host tensors of given values, random
// values, and a float64 reference product.

#include <algorithm>
#include <complex>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "cuplan/cuplan.hpp"

namespace cuplan::testing {

using cd = std::complex<double>;

/// A host Tensor holding `values` (row-major) as dtype `dtype` (c64, c128, f32 or f64).
inline Tensor host_tensor(const std::vector<cd>& values, Shape shape, DType dtype) {
  Tensor t = Tensor::empty(std::move(shape), dtype, Device::cpu());
  for (std::size_t i = 0; i < values.size(); ++i) {
    switch (dtype.code()) {
      case DTypeCode::c64:
        t.data<std::complex<float>>()[i] = std::complex<float>(values[i]);
        break;
      case DTypeCode::c128:
        t.data<cd>()[i] = values[i];
        break;
      case DTypeCode::f32:
        t.data<float>()[i] = static_cast<float>(values[i].real());
        break;
      default:
        t.data<double>()[i] = values[i].real();
        break;
    }
  }
  return t;
}

inline std::vector<cd> random_values(std::size_t n, bool complex, std::mt19937_64& gen) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cd> v(n);
  for (auto& x : v) x = complex ? cd(u(gen), u(gen)) : cd(u(gen), 0.0);
  return v;
}

/// D = A B in float64, A [m, k], B [k, n] row-major.
inline std::vector<cd> reference_product(const std::vector<cd>& a, const std::vector<cd>& b, std::int64_t m,
                                         std::int64_t n, std::int64_t k) {
  std::vector<cd> d(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      cd acc = 0;
      for (std::int64_t p = 0; p < k; ++p)
        acc += a[static_cast<std::size_t>(i * k + p)] * b[static_cast<std::size_t>(p * n + j)];
      d[static_cast<std::size_t>(i * n + j)] = acc;
    }
  return d;
}

/// The largest componentwise error of `got` against D = A B, each entry measured against (|A| |B|)_ij, the scale of
/// the rounding a product of k terms makes. A norm-wise relative error misjudges small products: one entry that is a
/// nearly cancelling sum of k terms has a large relative error at full accuracy. Compare against
/// product_tolerance(k, unit_roundoff).
inline double product_error(const std::vector<cd>& got, const std::vector<cd>& a, const std::vector<cd>& b,
                            std::int64_t m, std::int64_t n, std::int64_t k) {
  const std::vector<cd> d = reference_product(a, b, m, n, k);
  double worst = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double scale = 0;
      for (std::int64_t p = 0; p < k; ++p)
        scale += std::abs(a[static_cast<std::size_t>(i * k + p)]) * std::abs(b[static_cast<std::size_t>(p * n + j)]);
      const auto at = static_cast<std::size_t>(i * n + j);
      const double err = std::abs(got[at] - d[at]);
      worst = std::max(worst, scale > 0 ? err / scale : err);
    }
  return worst;
}

/// The bound product_error must stay under: k products and sums, plus rounding each operand to the stored precision,
/// with a factor 2 of margin. `unit_roundoff` is 2^-24 for f32, 2^-53 for f64.
inline double product_tolerance(std::int64_t k, double unit_roundoff) {
  return 2.0 * static_cast<double>(k + 2) * unit_roundoff;
}

}  // namespace cuplan::testing
