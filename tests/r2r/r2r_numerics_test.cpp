// SPDX-License-Identifier: Apache-2.0
// Real-to-real accuracy against float64 direct sums of scipy.fft's definitions, on the CPU (FFTW) and on CUDA
// (skipped without a GPU): every kind, every norm, orthogonalize on and off, lengths 1 to 1009 (odd, prime, powers
// of two), batched along either end, 2-D and 3-D with mixed kinds, strided views, in place; outputs poisoned first.
// f32 within 2e-6 and f64 within 1e-13 of the largest result value; the inverse of each kind returns the operand.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "r2r_reference.hpp"
#include "support/test_support.hpp"

namespace {

using namespace cuplan;
using r2r_test::scipy_axis;
using r2r_test::scipy_nd;

enum class Space { cpu, cuda };

constexpr R2RKind kAllKinds[] = {R2RKind::dct1, R2RKind::dct2, R2RKind::dct3, R2RKind::dct4,
                                 R2RKind::dst1, R2RKind::dst2, R2RKind::dst3, R2RKind::dst4};
constexpr R2RNorm kAllNorms[] = {R2RNorm::backward, R2RNorm::ortho, R2RNorm::forward};

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-6 : 1e-13;
}

// The operand in the execution space's memory, and a poisoned output of the result's layout next to it.
class R2RSpace : public ::testing::TestWithParam<Space> {
 protected:
  void SetUp() override {
    if (GetParam() == Space::cuda) CUPLAN_REQUIRE_GPU();
  }

 public:
  Execution exec() const { return GetParam() == Space::cpu ? Execution::cpu() : Execution::cuda(); }
  Device device() const { return GetParam() == Space::cpu ? Device::cpu() : Device::cuda(0); }

  template <class T>
  Tensor upload(const std::vector<double>& values, const Shape& shape) const {
    std::vector<T> typed(values.begin(), values.end());
    Tensor host = Tensor::empty(shape, std::is_same_v<T, float> ? f32 : f64);
    std::copy(typed.begin(), typed.end(), host.data<T>());
    return GetParam() == Space::cpu ? host : host.to(device());
  }
  template <class T>
  Tensor poisoned(const Shape& shape) const {
    Tensor host = Tensor::empty(shape, std::is_same_v<T, float> ? f32 : f64);
    std::fill_n(host.data<T>(), host.numel(), std::numeric_limits<T>::quiet_NaN());
    return GetParam() == Space::cpu ? host : host.to(device());
  }
  template <class T>
  static std::vector<double> download(const Tensor& t) {
    const Tensor host = t.device().is_cpu() ? t : t.to(Device::cpu());
    if (t.device().is_cuda()) Device::cuda(t.device().index()).synchronize();
    std::vector<double> out(static_cast<std::size_t>(host.numel()));
    // Through the strides: the result may be a strided out or an in-place operand.
    const int ndim = host.ndim();
    std::vector<std::int64_t> index(static_cast<std::size_t>(ndim), 0);
    for (std::size_t flat = 0; flat < out.size(); ++flat) {
      std::int64_t offset = 0;
      for (int a = 0; a < ndim; ++a) offset += index[a] * host.strides()[a];
      out[flat] = static_cast<double>(host.data<T>()[offset]);
      for (int a = ndim - 1; a >= 0; --a) {
        if (++index[a] < host.shape()[a]) break;
        index[a] = 0;
      }
    }
    return out;
  }
};

std::string space_name(const ::testing::TestParamInfo<Space>& info) {
  return info.param == Space::cpu ? "cpu" : "cuda";
}

template <class T>
void every_kind_norm_and_length(R2RSpace& t) {
  // Under compute-sanitizer (short_run) every new cuFFT plan loads instrumented kernels: fewer lengths, still 1, odd,
  // a power of two and the prime 1009.
  const std::vector<std::int64_t> lengths =
      cuplan::testing::short_run() ? std::vector<std::int64_t>{1, 2, 3, 16, 1009}
                                   : std::vector<std::int64_t>{1, 2, 3, 4, 5, 8, 15, 16, 17, 64, 127, 1009};
  for (R2RKind kind : kAllKinds) {
    const bool sine = static_cast<int>(kind) >= 4;
    const int type = static_cast<int>(kind) % 4 + 1;
    for (std::int64_t n : lengths) {
      if (kind == R2RKind::dct1 && n < 2) continue;
      for (R2RNorm norm : kAllNorms) {
        // orthogonalize default, false, true (only the default for the long prime length)
        for (int ortho = 0; ortho < (n > 200 ? 1 : 3); ++ortho) {
          const std::optional<bool> orthogonalize = ortho == 0 ? std::nullopt : std::optional<bool>(ortho == 2);
          const bool effective = orthogonalize.value_or(norm == R2RNorm::ortho);
          const std::int64_t batch = 3;
          const auto x = r2r_test::random_vector(static_cast<std::size_t>(batch * n), static_cast<std::uint32_t>(n));
          for (bool inverse : {false, true}) {
            const Tensor in = t.upload<T>(x, {batch, n});
            const Tensor out = t.poisoned<T>({batch, n});
            const R2ROptions o{
                .type = type, .axis = -1, .norm = norm, .orthogonalize = orthogonalize, .execution = t.exec()};
            if (!sine)
              inverse ? idct(in, out.view(), o) : dct(in, out.view(), o);
            else
              inverse ? idst(in, out.view(), o) : dst(in, out.view(), o);
            const auto ref = scipy_nd(x, {batch, n}, {1}, {kind}, norm, effective, inverse);
            const double err = r2r_test::relative_error(R2RSpace::download<T>(out), ref);
            EXPECT_LE(err, tolerance<T>()) << to_string(kind) << (inverse ? " inverse" : "") << " n " << n << " norm "
                                           << to_string(norm) << " orthogonalize " << effective;
          }
        }
      }
    }
  }
}

TEST_P(R2RSpace, OneAxisEveryKindNormAndLengthF64) {
  every_kind_norm_and_length<double>(*this);
}
TEST_P(R2RSpace, OneAxisEveryKindNormAndLengthF32) {
  every_kind_norm_and_length<float>(*this);
}

// scipy.fft.dct([1, 2, 3, 4]) and the same with norm="ortho", as scipy prints them.
TEST_P(R2RSpace, MatchesScipyPrintedValues) {
  const Tensor x = upload<double>({1, 2, 3, 4}, {4});
  const auto plain = download<double>(dct(x, {.execution = exec()}));
  const std::vector<double> scipy_plain{20.0, -6.308644059797899, 0.0, -0.44834152916796777};
  const auto ortho = download<double>(dct(x, {.norm = R2RNorm::ortho, .execution = exec()}));
  const std::vector<double> scipy_ortho{5.0, -2.230442497387663, 0.0, -0.15851266778110726};
  EXPECT_LE(r2r_test::relative_error(plain, scipy_plain), 1e-13);
  EXPECT_LE(r2r_test::relative_error(ortho, scipy_ortho), 1e-13);
}

// scipy's orthogonalize with norm="ortho" makes every kind's matrix orthogonal: the transform keeps the 2-norm.
// An independent check of the edge factors (the reference above shares scipy's definitions with the library).
TEST_P(R2RSpace, OrthoIsOrthogonal) {
  for (R2RKind kind : kAllKinds) {
    for (std::int64_t n : {2, 3, 8, 17}) {
      const auto x = r2r_test::random_vector(static_cast<std::size_t>(n), 17);
      RealTransform rt(upload<double>(x, {n}), {.kinds = {kind}, .norm = R2RNorm::ortho, .execution = exec()});
      rt.plan();
      const auto y = download<double>(rt.execute());
      double nx = 0, ny = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        nx += x[i] * x[i];
        ny += y[i] * y[i];
      }
      EXPECT_NEAR(std::sqrt(ny), std::sqrt(nx), 1e-13 * std::sqrt(nx)) << to_string(kind) << " n " << n;
    }
  }
}

template <class T>
void round_trips(R2RSpace& t) {
  for (R2RKind kind : kAllKinds) {
    for (std::int64_t n : cuplan::testing::short_run() ? std::vector<std::int64_t>{3, 1009}
                                                       : std::vector<std::int64_t>{2, 3, 16, 17, 1009}) {
      for (R2RNorm norm : kAllNorms) {
        for (bool ortho : {false, true}) {
          const auto x = r2r_test::random_vector(static_cast<std::size_t>(2 * n), 7);
          const Tensor in = t.upload<T>(x, {2, n});
          RealTransform rt(in, {.kinds = {kind}, .norm = norm, .orthogonalize = ortho, .execution = t.exec()});
          rt.plan();
          const Tensor y = rt.execute();
          rt.reset_operand(y);
          const Tensor back = rt.execute({.direction = Direction::inverse});
          EXPECT_LE(r2r_test::relative_error(R2RSpace::download<T>(back), x), 10 * tolerance<T>())
              << to_string(kind) << " n " << n << " norm " << to_string(norm) << " orthogonalize " << ortho;
        }
      }
    }
  }
}

TEST_P(R2RSpace, InverseReturnsTheOperandF64) {
  round_trips<double>(*this);
}
TEST_P(R2RSpace, InverseReturnsTheOperandF32) {
  round_trips<float>(*this);
}

// 2-D and 3-D, mixed kinds per axis, every norm, both directions.
template <class T>
void mixed_kinds(R2RSpace& t) {
  struct Case {
    std::vector<std::int64_t> shape;
    std::vector<int> axes;
    std::vector<R2RKind> kinds;
  };
  const std::vector<Case> cases{
      {{6, 9}, {0, 1}, {R2RKind::dct2, R2RKind::dst2}},
      {{5, 8}, {1, 0}, {R2RKind::dct1, R2RKind::dst4}},
      {{4, 7, 6}, {0, 1, 2}, {R2RKind::dct2, R2RKind::dst2, R2RKind::dct2}},
      {{3, 5, 16}, {2, 0, 1}, {R2RKind::dct4, R2RKind::dst1, R2RKind::dct3}},
      {{2, 9, 3, 4}, {1, 3}, {R2RKind::dst3, R2RKind::dct1}},
  };
  for (const Case& c : cases) {
    Shape shape;
    for (auto e : c.shape) shape.push_back(e);
    std::size_t numel = 1;
    for (auto e : c.shape) numel *= static_cast<std::size_t>(e);
    const auto x = r2r_test::random_vector(numel, 11);
    for (R2RNorm norm : kAllNorms) {
      for (bool inverse : {false, true}) {
        const Tensor in = t.upload<T>(x, shape);
        RealTransform rt(in, {.axes = c.axes, .kinds = c.kinds, .norm = norm, .execution = t.exec()});
        rt.plan();
        const Tensor out = t.poisoned<T>(shape);
        rt.execute({.direction = inverse ? Direction::inverse : Direction::forward, .out = out.view()});
        const auto ref = scipy_nd(x, c.shape, c.axes, c.kinds, norm, norm == R2RNorm::ortho, inverse);
        EXPECT_LE(r2r_test::relative_error(R2RSpace::download<T>(out), ref), tolerance<T>())
            << rt.describe() << (inverse ? " inverse" : "");
      }
    }
  }
}

TEST_P(R2RSpace, MixedKindsIn2DAnd3DF64) {
  mixed_kinds<double>(*this);
}
TEST_P(R2RSpace, MixedKindsIn2DAnd3DF32) {
  mixed_kinds<float>(*this);
}

// dctn over every axis, a strided (transposed, every other column) operand, and in place.
TEST_P(R2RSpace, StridedViewsAndInPlace) {
  const std::int64_t rows = 6, cols = 10;
  const auto x = r2r_test::random_vector(static_cast<std::size_t>(rows * cols), 5);
  const Tensor base = upload<double>(x, {rows, cols});
  // Columns 0, 2, 4, 6, 8 seen transposed: shape [5, 6], strides [2, 10].
  const TensorView strided(base.data(), f64, {5, rows}, Strides{2, cols}, base.device(), base.memory_space());
  std::vector<double> logical;
  for (std::int64_t j = 0; j < 5; ++j)
    for (std::int64_t i = 0; i < rows; ++i) logical.push_back(x[static_cast<std::size_t>(i * cols + 2 * j)]);
  const auto ref = scipy_nd(logical, {5, rows}, {0, 1}, {R2RKind::dst2, R2RKind::dst2}, R2RNorm::ortho, true, false);
  const Tensor y = dstn(strided, {.norm = R2RNorm::ortho, .execution = exec()});
  EXPECT_EQ(y.strides(), (Strides{rows, 1}));
  EXPECT_LE(r2r_test::relative_error(download<double>(y), ref), 1e-13);

  // In place over the strided view: the result is the operand's memory, the other columns untouched.
  const Tensor z = dctn(strided, {.type = 4, .inplace = true, .execution = exec()});
  EXPECT_EQ(z.data(), base.data());
  const auto ref4 =
      scipy_nd(logical, {5, rows}, {0, 1}, {R2RKind::dct4, R2RKind::dct4}, R2RNorm::backward, false, false);
  EXPECT_LE(r2r_test::relative_error(download<double>(z), ref4), 1e-13);
  const auto all = download<double>(base);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 1; j < cols; j += 2)
      EXPECT_EQ(all[static_cast<std::size_t>(i * cols + j)], x[static_cast<std::size_t>(i * cols + j)]);
}

// dct along axis 0 of a [n, 4] array (a strided axis), batched over the columns.
TEST_P(R2RSpace, AlongTheFirstAxis) {
  for (std::int64_t n : {2, 9, 32}) {
    const auto x = r2r_test::random_vector(static_cast<std::size_t>(n * 4), 3);
    for (R2RKind kind : kAllKinds) {
      const Tensor in = upload<double>(x, {n, 4});
      const int type = static_cast<int>(kind) % 4 + 1;
      const bool sine = static_cast<int>(kind) >= 4;
      const R2ROptions o{.type = type, .axis = 0, .execution = exec()};
      const Tensor y = sine ? dst(in, o) : dct(in, o);
      const auto ref = scipy_nd(x, {n, 4}, {0}, {kind}, R2RNorm::backward, false, false);
      EXPECT_LE(r2r_test::relative_error(download<double>(y), ref), 1e-13) << to_string(kind) << " n " << n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Spaces, R2RSpace, ::testing::Values(Space::cpu, Space::cuda), space_name);

}  // namespace
