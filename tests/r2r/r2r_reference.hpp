// SPDX-License-Identifier: Apache-2.0
#pragma once
// float64 direct-sum references of the eight real-to-real kinds as scipy.fft defines them (unnormalized), and the
// normalized N-D reference of a whole RealTransform call, for the tests of every backend; a device result's values.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "cuplan/device.hpp"
#include "cuplan/r2r.hpp"
#include "cuplan/tensor.hpp"

namespace r2r_test {

using cuplan::R2RKind;

/// y = kind(x), unnormalized, by the defining sums (long double accumulation). Every angle is pi p / m for an
/// integer p, reduced exactly modulo 2m and read from a table of long double cosines and sines.
inline std::vector<double> direct(R2RKind kind, const std::vector<double>& x) {
  const auto n = static_cast<std::int64_t>(x.size());
  std::vector<double> y(x.size());
  const long double pi = std::numbers::pi_v<long double>;
  std::int64_t m = 2 * n;
  if (kind == R2RKind::dct1) m = n - 1;
  if (kind == R2RKind::dst1) m = n + 1;
  if (kind == R2RKind::dct4 || kind == R2RKind::dst4) m = 4 * n;
  std::vector<long double> cosine(static_cast<std::size_t>(2 * m)), sine(static_cast<std::size_t>(2 * m));
  for (std::int64_t p = 0; p < 2 * m; ++p) {
    cosine[static_cast<std::size_t>(p)] = std::cos(pi * p / m);
    sine[static_cast<std::size_t>(p)] = std::sin(pi * p / m);
  }
  const auto c = [&](std::int64_t p) { return cosine[static_cast<std::size_t>(p % (2 * m))]; };
  const auto s = [&](std::int64_t p) { return sine[static_cast<std::size_t>(p % (2 * m))]; };
  for (std::int64_t k = 0; k < n; ++k) {
    long double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const long double v = x[static_cast<std::size_t>(i)];
      switch (kind) {
        case R2RKind::dct1:
          sum += (i == 0 || i == n - 1) ? v * ((k % 2 != 0 && i == n - 1) ? -1 : 1) : 2 * v * c(k * i);
          break;
        case R2RKind::dct2:
          sum += 2 * v * c(k * (2 * i + 1));
          break;
        case R2RKind::dct3:
          sum += i == 0 ? v : 2 * v * c((2 * k + 1) * i);
          break;
        case R2RKind::dct4:
          sum += 2 * v * c((2 * k + 1) * (2 * i + 1));
          break;
        case R2RKind::dst1:
          sum += 2 * v * s((k + 1) * (i + 1));
          break;
        case R2RKind::dst2:
          sum += 2 * v * s((k + 1) * (2 * i + 1));
          break;
        case R2RKind::dst3:
          sum += i == n - 1 ? ((k % 2 != 0) ? -v : v) : 2 * v * s((2 * k + 1) * (i + 1));
          break;
        case R2RKind::dst4:
          sum += 2 * v * s((2 * k + 1) * (2 * i + 1));
          break;
      }
    }
    y[static_cast<std::size_t>(k)] = static_cast<double>(sum);
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

/// The kind an inverse runs (scipy: idct of type 2 is a DCT-III, of type 3 a DCT-II; the others invert themselves).
inline R2RKind inverse_of(R2RKind kind) {
  using enum R2RKind;
  static constexpr R2RKind inverse[] = {dct1, dct3, dct2, dct4, dst1, dst3, dst2, dst4};  // in R2RKind's order
  return inverse[static_cast<int>(kind)];
}

/// scipy.fft's definition of one axis with its norm and orthogonalize, in float64: dct(x, type, norm=...,
/// orthogonalize=...) for `inverse` false, idct for true.
inline std::vector<double> scipy_axis(R2RKind kind, std::vector<double> x, cuplan::R2RNorm norm, bool orthogonalize,
                                      bool inverse) {
  const R2RKind run = inverse ? inverse_of(kind) : kind;
  const auto n = static_cast<double>(x.size());
  const double logical = kind == R2RKind::dct1 ? 2 * (n - 1) : kind == R2RKind::dst1 ? 2 * (n + 1) : 2 * n;
  const double r2 = std::sqrt(2.0);
  if (orthogonalize) {  // scipy.fft docs: the input factors of each type
    if (run == R2RKind::dct1) {
      x.front() *= r2;
      x.back() *= r2;
    }
    if (run == R2RKind::dct3) x.front() *= r2;
    if (run == R2RKind::dst3) x.back() *= r2;
  }
  std::vector<double> y = direct(run, x);
  if (orthogonalize) {
    if (run == R2RKind::dct1) {
      y.front() /= r2;
      y.back() /= r2;
    }
    if (run == R2RKind::dct2) y.front() /= r2;
    if (run == R2RKind::dst2) y.back() /= r2;
  }
  double f = 1.0;
  if (norm == cuplan::R2RNorm::ortho) f = 1.0 / std::sqrt(logical);
  if (norm == cuplan::R2RNorm::backward && inverse) f = 1.0 / logical;
  if (norm == cuplan::R2RNorm::forward && !inverse) f = 1.0 / logical;
  for (double& v : y) v *= f;
  return y;
}

/// The N-D reference: scipy_axis along each of `axes` in turn over a row-major array of `shape`.
inline std::vector<double> scipy_nd(std::vector<double> data, const std::vector<std::int64_t>& shape,
                                    const std::vector<int>& axes, const std::vector<R2RKind>& kinds,
                                    cuplan::R2RNorm norm, bool orthogonalize, bool inverse) {
  const int ndim = static_cast<int>(shape.size());
  std::vector<std::int64_t> stride(shape.size(), 1);
  for (int a = ndim - 2; a >= 0; --a) stride[a] = stride[a + 1] * shape[a + 1];
  for (std::size_t k = 0; k < axes.size(); ++k) {
    const int axis = axes[k];
    const std::int64_t n = shape[axis];
    const std::int64_t total = static_cast<std::int64_t>(data.size());
    for (std::int64_t base = 0; base < total; ++base) {
      if ((base / stride[axis]) % n != 0) continue;  // one start per line along the axis
      std::vector<double> line(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) line[i] = data[base + i * stride[axis]];
      const auto y = scipy_axis(kinds[k], line, norm, orthogonalize, inverse);
      for (std::int64_t i = 0; i < n; ++i) data[base + i * stride[axis]] = y[i];
    }
  }
  return data;
}

/// FFTW's float64 result of the transform `o` describes (cuplan's CPU route, out of place, on the default route) of
/// the values `v` of `shape`.
inline std::vector<double> cpu_reference(const std::vector<double>& v, const cuplan::Shape& shape,
                                         cuplan::RealTransformOptions o, cuplan::Direction direction) {
  cuplan::Tensor host = cuplan::Tensor::empty(shape, cuplan::f64);
  std::copy(v.begin(), v.end(), host.data<double>());
  o.execution = cuplan::Execution::cpu();
  o.route = cuplan::FFTRoute::automatic;
  o.inplace = false;
  o.stream.reset();
  o.after = {};
  cuplan::RealTransform rt(host, o);
  rt.plan();
  const cuplan::Tensor y = rt.execute({.direction = direction});
  return {y.data<double>(), y.data<double>() + y.numel()};
}

/// The values of a result in device memory as doubles (f32 or f64), read once the device is idle.
inline std::vector<double> to_host(const cuplan::Tensor& t) {
  const cuplan::Tensor h = t.to(cuplan::Device::cpu());
  cuplan::Device::cuda(0).synchronize();
  std::vector<double> out(static_cast<std::size_t>(h.numel()));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = h.dtype() == cuplan::f32 ? static_cast<double>(h.data<float>()[i]) : h.data<double>()[i];
  return out;
}

}  // namespace r2r_test
