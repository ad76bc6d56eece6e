// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the FFT tests: the execution spaces tests are parameterised over, strided host arrays, moving data to
// and from the execution space, and a float64 reference DFT (direct, separable over axes).

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "support/test_support.hpp"

namespace cuplan::testing {

using cd = std::complex<double>;

enum class Space { cpu, cuda };

inline std::string space_name(const ::testing::TestParamInfo<Space>& info) {
  return info.param == Space::cpu ? "cpu" : "cuda";
}

/// Skips (with the reason) a CUDA-parameterised test on a machine without a GPU.
#define CUPLAN_REQUIRE_SPACE(space)                                      \
  do {                                                                   \
    if ((space) == ::cuplan::testing::Space::cuda) CUPLAN_REQUIRE_GPU(); \
  } while (0)

inline Execution execution_for(Space space) {
  return space == Space::cpu ? Execution::cpu() : Execution::cuda();
}

/// Fixture of the tests parameterised over the execution space (the CUDA instances skip without a GPU).
class SpaceTest : public ::testing::TestWithParam<Space> {
 protected:
  void SetUp() override { CUPLAN_REQUIRE_SPACE(GetParam()); }
  Execution exec() const { return execution_for(GetParam()); }
};

inline std::int64_t product(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

inline std::vector<std::int64_t> row_major(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// A host array of T with an arbitrary (positive) layout inside a poisoned buffer; `dense()` holds the logical
/// values in row-major order as complex<double> for the reference.
template <class T>
struct HostArray {
  std::vector<std::int64_t> shape, strides;
  std::vector<T> buffer;

  static HostArray random(std::vector<std::int64_t> shape, std::vector<std::int64_t> strides = {}) {
    HostArray a;
    a.shape = shape;
    a.strides = strides.empty() ? row_major(shape) : strides;
    std::int64_t span = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) span += (shape[i] - 1) * a.strides[i];
    a.buffer = random_vector<T>(static_cast<std::size_t>(span));
    return a;
  }
  std::int64_t offset(std::int64_t linear) const {
    std::int64_t off = 0;
    for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
      off += (linear % shape[i]) * strides[i];
      linear /= shape[i];
    }
    return off;
  }
  std::vector<cd> dense() const {
    std::vector<cd> out(static_cast<std::size_t>(product(shape)));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = cd(buffer[static_cast<std::size_t>(offset(i))]);
    return out;
  }
  TensorView view() {
    return TensorView(buffer.data(), Shape(std::span<const std::int64_t>(shape)),
                      Strides(std::span<const std::int64_t>(strides)), Device::cpu());
  }
};

/// The operand in the memory of `space`: the host view itself, or a device copy with the same strides.
struct Operand {
  Tensor device_buffer;  // owns device memory for Space::cuda
  TensorView view;
};

template <class T>
Operand to_space(HostArray<T>& host, Space space, std::optional<StreamRef> stream = {}) {
  if (space == Space::cpu) return {Tensor{}, host.view()};
  const std::int64_t elems = static_cast<std::int64_t>(host.buffer.size());
  Tensor dev = Tensor::empty({elems}, dtype_of<T>, Device::cuda(0), stream);
  copy(TensorView(host.buffer.data(), {elems}), dev.view(), stream);
  const TensorView v(dev.data(), dtype_of<T>, Shape(std::span<const std::int64_t>(host.shape)),
                     Strides(std::span<const std::int64_t>(host.strides)), Device::cuda(0), MemorySpace::device);
  return {dev, v};
}

/// A one-dimensional copy of host `values` on CUDA device 0 (kept alive by the Tensor; callbacks' user data).
template <class T>
Tensor device_values(const std::vector<T>& values) {
  const auto n = static_cast<std::int64_t>(values.size());
  Tensor t = Tensor::empty({n}, dtype_of<T>, Device::cuda(0));
  copy(TensorView(const_cast<T*>(values.data()), {n}), t.view());
  return t;
}

/// A device tensor of zeros on CUDA device 0, written in `stream`'s order. The tests that run an operation only for
/// what it does to plans and work areas give it such operands rather than `Tensor::empty` ones: compute-sanitizer's
/// initcheck reports every read of unwritten memory, and the reports of a whole unwritten operand slowed those tests
/// past the sanitizer run's time limit (docs/dev/testing.md).
inline Tensor device_zeros(const Shape& shape, DType dtype, StreamRef stream) {
  Tensor t = Tensor::empty(shape, dtype, Device::cuda(0), stream);
  const std::vector<std::byte> zeros(static_cast<std::size_t>(t.numel()) * dtype.size());
  copy(TensorView(zeros.data(), dtype, shape), t, stream);  // into the Tensor: the copy is its producer
  return t;
}

/// The logical values of `t` (any memory, any strides) in row-major order.
inline std::vector<cd> to_dense(const TensorView& t) {
  Tensor host = Tensor::empty(t.shape(), t.dtype(), Device::cpu());
  copy(t, host.view());
  std::vector<cd> out(static_cast<std::size_t>(t.numel()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    switch (t.dtype().code()) {
      case DTypeCode::c64:
        out[i] = cd(host.data<std::complex<float>>()[i]);
        break;
      case DTypeCode::c128:
        out[i] = host.data<std::complex<double>>()[i];
        break;
      case DTypeCode::f32:
        out[i] = cd(host.data<float>()[i]);
        break;
      case DTypeCode::f64:
        out[i] = cd(host.data<double>()[i]);
        break;
      case DTypeCode::f16:
        out[i] = cd(static_cast<float>(host.data<cuplan::half>()[i]));
        break;
      case DTypeCode::c32: {
        const cuplan::half2 h = host.data<cuplan::half2>()[i];
        out[i] = cd(static_cast<float>(h.x), static_cast<float>(h.y));
        break;
      }
      default:
        ADD_FAILURE() << "unexpected dtype";
        break;
    }
  }
  return out;
}

/// Unnormalised DFT of `x` (row-major, `shape`) over `axes`; sign -1 forward, +1 inverse.
inline std::vector<cd> reference_dft(std::vector<cd> x, const std::vector<std::int64_t>& shape,
                                     const std::vector<int>& axes, int sign) {
  const auto strides = row_major(shape);
  for (int axis : axes) {
    const std::int64_t n = shape[static_cast<std::size_t>(axis)], s = strides[static_cast<std::size_t>(axis)];
    std::vector<cd> twiddle(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k)
      twiddle[static_cast<std::size_t>(k)] = std::polar(1.0, sign * 2.0 * std::numbers::pi * k / n);
    std::vector<cd> line(static_cast<std::size_t>(n));
    const std::int64_t total = product(shape);
    for (std::int64_t base = 0; base < total; ++base) {
      if ((base / s) % n != 0) continue;  // first element of a line along `axis`
      for (std::int64_t k = 0; k < n; ++k) {
        cd acc = 0;
        for (std::int64_t j = 0; j < n; ++j)
          acc += x[static_cast<std::size_t>(base + j * s)] * twiddle[static_cast<std::size_t>((j * k) % n)];
        line[static_cast<std::size_t>(k)] = acc;
      }
      for (std::int64_t k = 0; k < n; ++k)
        x[static_cast<std::size_t>(base + k * s)] = line[static_cast<std::size_t>(k)];
    }
  }
  return x;
}

/// The first `keep` entries of `axis` of a row-major array (R2C output from a full DFT).
inline std::vector<cd> truncate_axis(const std::vector<cd>& x, const std::vector<std::int64_t>& shape, int axis,
                                     std::int64_t keep) {
  auto out_shape = shape;
  out_shape[static_cast<std::size_t>(axis)] = keep;
  const auto in_strides = row_major(shape), out_strides = row_major(out_shape);
  std::vector<cd> out(static_cast<std::size_t>(product(out_shape)));
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::int64_t rest = static_cast<std::int64_t>(i), off = 0;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      off += (rest % out_shape[static_cast<std::size_t>(d)]) * in_strides[static_cast<std::size_t>(d)];
      rest /= out_shape[static_cast<std::size_t>(d)];
    }
    out[i] = x[static_cast<std::size_t>(off)];
  }
  (void)out_strides;
  return out;
}

/// The circular convolution of each row of `x` (`rows` rows of `n`, row-major) with the filter `k` of length n.
inline std::vector<cd> circular_convolution_rows(const std::vector<cd>& x, const std::vector<cd>& k, std::size_t rows,
                                                 std::size_t n) {
  std::vector<cd> out(rows * n);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < n; ++i) {
      cd sum = 0;
      for (std::size_t j = 0; j < n; ++j) sum += k[j] * x[r * n + (i + n - j) % n];
      out[r * n + i] = sum;
    }
  return out;
}

inline std::vector<cd> scaled(std::vector<cd> x, double s) {
  for (auto& v : x) v *= s;
  return x;
}

/// Relative-error tolerance of a transform of total length n in the given precision.
inline double tolerance(DType dtype, std::int64_t n) {
  const double log_n = std::max(1.0, std::log2(static_cast<double>(std::max<std::int64_t>(n, 2))));
  if (dtype.real() == f64) return 1e-12 * log_n;
  if (dtype.real() == f16) return 5e-3 * log_n;
  return 1e-5 * log_n;
}

}  // namespace cuplan::testing
