// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the convolution tests: a float64 direct convolution (every mode, any axes, a kernel broadcast over batch
// axes) and poisoned outputs. The spaces, strided host arrays and moves between memories are the FFT tests' own.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cuplan/convolution.hpp"
#include "fft/fft_test_util.hpp"

namespace cuplan::testing {

/// The result shape of `mode` (scipy.signal.fftconvolve's rule, plus circular).
inline std::vector<std::int64_t> convolution_shape(const std::vector<std::int64_t>& x,
                                                   const std::vector<std::int64_t>& k, const std::vector<int>& axes,
                                                   ConvolutionMode mode) {
  std::vector<std::int64_t> out = x;
  for (int a : axes) {
    const auto i = static_cast<std::size_t>(a);
    switch (mode) {
      case ConvolutionMode::full:
        out[i] = x[i] + k[i] - 1;
        break;
      case ConvolutionMode::valid:
        out[i] = std::max(x[i], k[i]) - std::min(x[i], k[i]) + 1;
        break;
      default:
        out[i] = x[i];
    }
  }
  return out;
}

/// Direct convolution in float64 of `x` (row-major, shape `xs`) with `k` (row-major, shape `ks`, same rank; batch
/// extents 1 or x's) over `axes` (non-negative): y[o] = sum_j x[o + offset - j] k[j], with the offsets of each mode
/// and indices taken modulo n in circular mode.
inline std::vector<cd> reference_convolution(const std::vector<cd>& x, const std::vector<std::int64_t>& xs,
                                             const std::vector<cd>& k, const std::vector<std::int64_t>& ks,
                                             const std::vector<int>& axes, ConvolutionMode mode) {
  const int nd = static_cast<int>(xs.size());
  const auto os = convolution_shape(xs, ks, axes, mode);
  std::vector<std::int64_t> offset(xs.size(), 0);
  std::vector<bool> conv(xs.size(), false);
  for (int a : axes) {
    const auto i = static_cast<std::size_t>(a);
    conv[i] = true;
    if (mode == ConvolutionMode::same) offset[i] = (ks[i] - 1) / 2;
    if (mode == ConvolutionMode::valid) offset[i] = std::min(xs[i], ks[i]) - 1;
  }
  const auto xstr = row_major(xs), kstr = row_major(ks);
  std::vector<std::int64_t> kconv;  // the kernel's extents on the convolved axes
  for (int a = 0; a < nd; ++a)
    if (conv[static_cast<std::size_t>(a)]) kconv.push_back(ks[static_cast<std::size_t>(a)]);
  const std::int64_t kcount = product(kconv);
  std::vector<cd> y(static_cast<std::size_t>(product(os)));
  std::vector<std::int64_t> o(xs.size());
  for (std::size_t linear = 0; linear < y.size(); ++linear) {
    std::int64_t rest = static_cast<std::int64_t>(linear);
    for (int a = nd - 1; a >= 0; --a) {
      o[static_cast<std::size_t>(a)] = rest % os[static_cast<std::size_t>(a)];
      rest /= os[static_cast<std::size_t>(a)];
    }
    cd sum = 0;
    for (std::int64_t j = 0; j < kcount; ++j) {
      std::int64_t jrest = j, xoff = 0, koff = 0;
      bool inside = true;
      for (int a = nd - 1; a >= 0; --a) {
        const auto i = static_cast<std::size_t>(a);
        if (!conv[i]) {
          xoff += o[i] * xstr[i];
          koff += (ks[i] == 1 ? 0 : o[i]) * kstr[i];
          continue;
        }
        const std::int64_t jj = jrest % ks[i];
        jrest /= ks[i];
        std::int64_t m = o[i] + offset[i] - jj;
        if (mode == ConvolutionMode::circular) m = ((m % xs[i]) + xs[i]) % xs[i];
        if (m < 0 || m >= xs[i]) inside = false;
        xoff += m * xstr[i];
        koff += jj * kstr[i];
      }
      if (inside) sum += x[static_cast<std::size_t>(xoff)] * k[static_cast<std::size_t>(koff)];
    }
    y[linear] = sum;
  }
  return y;
}

/// Tolerance of a convolution result against the float64 reference (relative to the result's norm).
inline double convolution_tolerance(DType dtype, std::int64_t fft_size) {
  const double eps = dtype.real() == f64 ? 1e-15 : 1e-7;
  return 50.0 * eps * std::log2(static_cast<double>(std::max<std::int64_t>(fft_size, 2))) + 20.0 * eps;
}

/// A dense Tensor of `dtype` and `shape` in `space`'s memory, every value NaN (so that a value the call does not
/// write is seen).
inline Tensor poisoned(DType dtype, const std::vector<std::int64_t>& shape, Space space) {
  const Shape s{std::span<const std::int64_t>(shape)};
  Tensor host = Tensor::empty(s, dtype, Device::cpu());
  const std::size_t values = static_cast<std::size_t>(host.numel()) * (dtype.is_complex() ? 2 : 1);
  if (dtype.real() == f64)
    std::fill_n(static_cast<double*>(host.data()), values, std::numeric_limits<double>::quiet_NaN());
  else
    std::fill_n(static_cast<float*>(host.data()), values, std::numeric_limits<float>::quiet_NaN());
  if (space == Space::cpu) return host;
  return host.to(Device::cuda(0));
}

}  // namespace cuplan::testing
