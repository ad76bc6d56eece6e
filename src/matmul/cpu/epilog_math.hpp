// SPDX-License-Identifier: Apache-2.0
#pragma once
// The epilog functions exactly as cuBLASLt defines them (gelu: tanh approximation), shared by the CPU backend.

#include <cmath>

namespace cuplan::detail::mm {

inline constexpr double gelu_k0 = 0.7978845608028654;  // sqrt(2 / pi)
inline constexpr double gelu_k1 = 0.044715;

template <class T>
T gelu(T x) {
  const T t = std::tanh(T(gelu_k0) * (x + T(gelu_k1) * x * x * x));
  return T(0.5) * x * (T(1) + t);
}

/// d gelu(x) / dx of the tanh approximation.
template <class T>
T gelu_derivative(T x) {
  const T t = std::tanh(T(gelu_k0) * (x + T(gelu_k1) * x * x * x));
  return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * T(gelu_k0) * (T(1) + T(3 * gelu_k1) * x * x);
}

}  // namespace cuplan::detail::mm
