#pragma once
// Values shared by the plan-layer tests that call FFT and Matmul as users do: host tensors of given values, random
// values, and a float64 reference product.

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

}  // namespace cuplan::testing
