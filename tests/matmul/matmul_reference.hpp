// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test operands with chosen layouts and a float64 reference of D = epilog(alpha op(A) op(B) + beta C).

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "support/test_support.hpp"

namespace cuplan::testing {

using cd = std::complex<double>;

template <class T>
cd to_cd(T v) {
  if constexpr (std::is_same_v<T, cuplan::half>)
    return cd(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, cuplan::bfloat16>)
    return cd(static_cast<float>(v));
  else
    return cd(v);
}
template <class T>
T from_cd(cd v) {
  if constexpr (std::is_same_v<T, cuplan::half>)
    return cuplan::half(static_cast<float>(v.real()));
  else if constexpr (std::is_same_v<T, cuplan::bfloat16>)
    return cuplan::bfloat16(static_cast<float>(v.real()));
  else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return T(v);
  else
    return static_cast<T>(v.real());
}

/// A host matrix stack of shape batch + (rows, cols), stored row-major or column-major per matrix (with `pad` extra
/// elements of leading dimension), random values rounded to T. `value(b, r, c)` is the stored value in float64.
template <class T>
struct HostMatrix {
  Shape shape;
  std::int64_t batch = 1, rows = 0, cols = 0, ld = 0;
  bool row_major = true;
  std::vector<T> storage;
  std::vector<cd> values;  // dense [batch][rows][cols]

  HostMatrix(Shape batch_shape, std::int64_t r, std::int64_t c, bool row_major_ = true, std::int64_t pad = 0)
      : rows(r), cols(c), row_major(row_major_) {
    shape = batch_shape;
    batch = 1;
    for (auto e : batch_shape) batch *= e;
    shape.push_back(r);
    shape.push_back(c);
    ld = (row_major ? c : r) + pad;
    const std::int64_t per = ld * (row_major ? r : c);
    storage.assign(static_cast<std::size_t>(per * batch), from_cd<T>(cd(std::nan(""))));
    values.resize(static_cast<std::size_t>(batch * r * c));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t i = 0; i < r; ++i)
        for (std::int64_t j = 0; j < c; ++j) {
          cd v(u(rng()), 0.0);
          if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
            v = cd(v.real(), u(rng()));
          const T stored = from_cd<T>(v);
          storage[static_cast<std::size_t>(b * per + (row_major ? i * ld + j : j * ld + i))] = stored;
          values[static_cast<std::size_t>((b * r + i) * c + j)] = to_cd(stored);
        }
  }
  Strides strides() const {
    Strides s;
    const std::int64_t per = ld * (row_major ? rows : cols);
    std::int64_t acc = per;
    std::vector<std::int64_t> batch_strides;
    for (int i = shape.size() - 3; i >= 0; --i) {
      batch_strides.insert(batch_strides.begin(), acc);
      acc *= shape[i];
    }
    for (auto v : batch_strides) s.push_back(v);
    s.push_back(row_major ? ld : 1);
    s.push_back(row_major ? 1 : ld);
    return s;
  }
  TensorView view() const {
    return TensorView(storage.data(), dtype_of<T>, shape, strides(), Device::cpu(), MemorySpace::host_pageable);
  }
  /// Value of broadcast batch entry `b` of `batch_shape` (NumPy rules).
  cd at(const Shape& batch_shape, std::int64_t b, std::int64_t i, std::int64_t j) const {
    std::int64_t own = 0, mult = 1;
    const int nb = shape.size() - 2;
    for (int d = batch_shape.size() - 1; d >= 0; --d) {
      const std::int64_t idx = b % batch_shape[d];
      b /= batch_shape[d];
      const int od = nb - (batch_shape.size() - d);
      if (od < 0) continue;
      if (shape[od] != 1) own += idx * mult;
      mult *= shape[od];
    }
    return values[static_cast<std::size_t>((own * rows + i) * cols + j)];
  }
};

inline double ref_gelu(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
inline double ref_gelu_grad(double x) {
  const double h = 1e-6;
  return (ref_gelu(x + h) - ref_gelu(x - h)) / (2 * h);
}

/// Reads element i of a host tensor as float64.
inline cd read(const Tensor& t, std::int64_t i) {
  switch (t.dtype().code()) {
    case DTypeCode::f16:
      return to_cd(t.data<cuplan::half>()[i]);
    case DTypeCode::bf16:
      return to_cd(t.data<cuplan::bfloat16>()[i]);
    case DTypeCode::f32:
      return to_cd(t.data<float>()[i]);
    case DTypeCode::f64:
      return to_cd(t.data<double>()[i]);
    case DTypeCode::c64:
      return to_cd(t.data<std::complex<float>>()[i]);
    case DTypeCode::c128:
      return to_cd(t.data<std::complex<double>>()[i]);
    case DTypeCode::i8:
      return cd(t.data<std::int8_t>()[i]);
    default:
      return cd(std::nan(""));
  }
}

/// Every element of a host tensor as float64, in logical row-major order, read through its strides (results may
/// be column-major).
inline std::vector<cd> read_all(const Tensor& t) {
  std::vector<cd> out(static_cast<std::size_t>(t.numel()));
  const Shape& shape = t.shape();
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    std::int64_t rest = i, offset = 0;
    for (int axis = shape.size() - 1; axis >= 0; --axis) {
      offset += (rest % shape[axis]) * t.strides()[axis];
      rest /= shape[axis];
    }
    out[static_cast<std::size_t>(i)] = read(t, offset);
  }
  return out;
}

/// True when `t` (batch..., M, N) is column-major per matrix with batch axes outermost: strides (..., M*N, 1, M).
inline bool is_column_major_stack(const TensorView& t) {
  const int nd = t.ndim();
  if (nd < 2) return false;
  const std::int64_t m = t.shape()[nd - 2], n = t.shape()[nd - 1];
  if ((m > 1 && t.strides()[nd - 2] != 1) || (n > 1 && t.strides()[nd - 1] != m)) return false;
  std::int64_t expected = m * n;
  for (int i = nd - 3; i >= 0; --i) {
    if (t.shape()[i] > 1 && t.strides()[i] != expected) return false;
    expected *= t.shape()[i];
  }
  return true;
}

inline bool all_finite(const std::vector<cd>& v) {
  for (auto x : v)
    if (!std::isfinite(x.real()) || !std::isfinite(x.imag())) return false;
  return true;
}

}  // namespace cuplan::testing
