// SPDX-License-Identifier: Apache-2.0
// Numerical results of the class form against a float64 reference DFT, over sizes, axes, layouts, types and
// normalisations. Parameterised over the execution space: CPU (FFTW) everywhere, CUDA (cuFFT) where a GPU exists.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <optional>
#include <string>
#include <vector>

#include "fft/fft_test_util.hpp"

namespace cuplan::testing {
namespace {

class FftNumerics : public SpaceTest {};

template <class T>
void check_c2c(Space space, std::vector<std::int64_t> shape, std::vector<int> axes, std::vector<int> ref_axes,
               Direction direction, std::vector<std::int64_t> strides = {}) {
  auto host = HostArray<T>::random(shape, strides);
  const auto operand = host.dense();  // a copy: on the CPU the operand is host's own memory
  Operand x = to_space(host, space);
  FFT f(x.view, {.axes = axes, .execution = execution_for(space)});
  f.plan();
  Tensor y = f.execute({.direction = direction});
  const auto expected = reference_dft(operand, shape, ref_axes, direction == Direction::forward ? -1 : 1);
  std::int64_t n = 1;
  for (int a : ref_axes) n *= shape[static_cast<std::size_t>(a)];
  EXPECT_LT(relative_error(to_dense(y.view()), expected), tolerance(dtype_of<T>, n)) << f.describe();
  EXPECT_EQ(to_dense(x.view), operand) << "the operand stays intact: " << f.describe();
}

TEST_P(FftNumerics, C2C1DAllSizesBothDirectionsBothPrecisions) {
  for (std::int64_t n : {1, 2, 3, 5, 7, 16, 17, 64, 97, 128, 243, 1000, 4096}) {
    SCOPED_TRACE(n);
    const std::int64_t batch = n > 1000 ? 1 : 3;
    check_c2c<std::complex<float>>(GetParam(), {batch, n}, {-1}, {1}, Direction::forward);
    check_c2c<std::complex<double>>(GetParam(), {batch, n}, {-1}, {1}, Direction::inverse);
  }
}

TEST_P(FftNumerics, C2CLeadingMiddleTrailingAxes) {
  const std::vector<std::int64_t> shape{6, 10, 7, 4};
  const std::vector<std::vector<int>> cases{{0},    {1},    {3},       {0, 1},    {1, 2},
                                            {0, 2}, {0, 3}, {1, 2, 3}, {0, 1, 2}, {-1, -3}};
  for (const auto& axes : cases) {
    std::vector<int> ref;
    for (int a : axes) ref.push_back(a < 0 ? a + 4 : a);
    SCOPED_TRACE(::testing::PrintToString(axes));
    check_c2c<std::complex<double>>(GetParam(), shape, axes, ref, Direction::forward);
    check_c2c<std::complex<float>>(GetParam(), shape, axes, ref, Direction::inverse);
  }
}

TEST_P(FftNumerics, C2CDefaultAxesAreTheLastThree) {
  check_c2c<std::complex<double>>(GetParam(), {3, 4, 5, 6}, {}, {1, 2, 3}, Direction::forward);
  check_c2c<std::complex<double>>(GetParam(), {12, 9}, {}, {0, 1}, Direction::forward);
}

TEST_P(FftNumerics, C2CStridedAndNonContiguousInputs) {
  // Every other element along the last axis.
  check_c2c<std::complex<double>>(GetParam(), {5, 16}, {1}, {1}, Direction::forward, {40, 2});
  // Transposed (column-major) 2-D operand, both axes and each axis alone.
  check_c2c<std::complex<double>>(GetParam(), {12, 10}, {0, 1}, {0, 1}, Direction::forward, {1, 12});
  check_c2c<std::complex<float>>(GetParam(), {12, 10}, {1}, {1}, Direction::forward, {1, 12});
  // Padded rows, 3-D with a gap between batches, and a permuted layout that needs an internal copy.
  check_c2c<std::complex<double>>(GetParam(), {4, 6, 9}, {1, 2}, {1, 2}, Direction::inverse, {70, 11, 1});
  check_c2c<std::complex<double>>(GetParam(), {4, 6, 9}, {0, 2}, {0, 2}, Direction::forward, {1, 36, 4});
  // Strides that do not divide: staged through a dense copy.
  check_c2c<std::complex<double>>(GetParam(), {8, 10}, {0, 1}, {0, 1}, Direction::inverse, {2, 9});
  // Many batches that do not merge (middle axis of a wide array).
  check_c2c<std::complex<float>>(GetParam(), {80, 8, 3}, {1}, {1}, Direction::forward);
}

TEST_P(FftNumerics, C2CInPlace) {
  auto host = HostArray<std::complex<double>>::random({8, 24});
  const auto original = host.dense();
  Operand x = to_space(host, GetParam());
  FFT f(x.view, {.axes = {0, 1}, .inplace = true, .execution = exec()});
  f.plan();
  Tensor y = f.execute();
  EXPECT_EQ(y.data(), x.view.data());
  EXPECT_LT(relative_error(to_dense(x.view), reference_dft(original, {8, 24}, {0, 1}, -1)), 1e-12);
}

template <class Real>
void check_r2c_roundtrip(Space space, std::vector<std::int64_t> shape, std::vector<int> axes, int halved) {
  using C = std::complex<Real>;
  auto host = HostArray<Real>::random(shape);
  const auto operand = host.dense();  // a copy: on the CPU the operand is host's own memory
  Operand x = to_space(host, space);
  std::vector<int> ref_axes;
  for (int a : axes) ref_axes.push_back(a < 0 ? a + static_cast<int>(shape.size()) : a);
  std::int64_t n = 1;
  for (int a : ref_axes) n *= shape[static_cast<std::size_t>(a)];

  FFT forward(x.view, {.axes = axes, .execution = execution_for(space)});
  EXPECT_EQ(forward.type(), FFTType::r2c);
  forward.plan();
  Tensor spectrum = forward.execute();
  const std::int64_t m = shape[static_cast<std::size_t>(halved)] / 2 + 1;
  ASSERT_EQ(spectrum.shape()[halved], m);
  ASSERT_EQ(spectrum.dtype(), dtype_of<C>);
  const auto full = reference_dft(operand, shape, ref_axes, -1);
  EXPECT_LT(relative_error(to_dense(spectrum.view()), truncate_axis(full, shape, halved, m)),
            tolerance(dtype_of<Real>, n));
  EXPECT_EQ(to_dense(x.view), operand) << "the real operand stays intact: " << forward.describe();

  // C2R of a genuinely Hermitian spectrum gives back n * x; the spectrum itself must stay intact.
  const auto spectrum_before = to_dense(spectrum.view());
  const Parity parity = shape[static_cast<std::size_t>(halved)] % 2 == 0 ? Parity::even : Parity::odd;
  FFT inverse(spectrum,
              {.axes = axes, .last_axis_parity = parity, .execution = execution_for(space), .fft_type = FFTType::c2r});
  inverse.plan();
  Tensor back = inverse.execute();
  ASSERT_EQ(back.shape()[halved], shape[static_cast<std::size_t>(halved)]);
  EXPECT_LT(relative_error(to_dense(back.view()), scaled(operand, static_cast<double>(n))),
            tolerance(dtype_of<Real>, n));
  EXPECT_EQ(to_dense(spectrum.view()), spectrum_before);
}

TEST_P(FftNumerics, R2CAndC2RRoundTripAllSizesEvenAndOdd) {
  for (std::int64_t n : {1, 2, 3, 5, 7, 16, 17, 64, 97, 128, 243, 1000, 4096}) {
    SCOPED_TRACE(n);
    check_r2c_roundtrip<float>(GetParam(), {2, n}, {-1}, 1);
    check_r2c_roundtrip<double>(GetParam(), {2, n}, {-1}, 1);
  }
}

TEST_P(FftNumerics, R2CMultiDimensionalOverLeadingMiddleAndTrailingAxes) {
  check_r2c_roundtrip<double>(GetParam(), {6, 10, 7}, {0, 1}, 1);
  check_r2c_roundtrip<double>(GetParam(), {6, 10, 7}, {1, 2}, 2);
  check_r2c_roundtrip<double>(GetParam(), {5, 6, 7, 3}, {0, 1, 2}, 2);
  check_r2c_roundtrip<float>(GetParam(), {9, 8, 5}, {1}, 1);
  // Halved axis before another transformed axis in memory: planned through internal copies.
  check_r2c_roundtrip<double>(GetParam(), {6, 9}, {1, 0}, 0);
}

// Out-of-place C2C and R2C read the operand where it is (no copy where its layout nests) and leave it intact, at
// sizes where cuFFT's plans take several kernels (the values are not checked here: the tests above do).
TEST_P(FftNumerics, OutOfPlaceC2CAndR2CLeaveTheOperandIntactAtLargeSizes) {
  const auto intact = [&]<class T>(std::vector<std::int64_t> shape, std::vector<int> axes, T) {
    SCOPED_TRACE(::testing::Message() << dtype_of<T>.name() << " " << ::testing::PrintToString(shape));
    auto host = HostArray<T>::random(shape);
    const auto operand = host.dense();  // a copy: on the CPU the operand is host's own memory
    Operand x = to_space(host, GetParam());
    FFT f(x.view, {.axes = axes, .execution = exec()});
    f.plan();
    const Tensor y = f.execute();
    EXPECT_EQ(to_dense(x.view), operand) << f.describe();
  };
  intact(std::vector<std::int64_t>{4, 512, 512}, {1, 2}, float{});
  intact(std::vector<std::int64_t>{128, 128, 128}, {0, 1, 2}, float{});
  intact(std::vector<std::int64_t>{2, 8192, 64}, {1, 2}, double{});
  intact(std::vector<std::int64_t>{16, 16384}, {1}, float{});
  intact(std::vector<std::int64_t>{64, 64, 64}, {0, 1, 2}, std::complex<float>{});
}

TEST_P(FftNumerics, R2CInPlaceWithPaddedRowsAndC2RInPlace) {
  const std::int64_t rows = 5, n = 14, padded = 2 * (n / 2 + 1);
  auto host = HostArray<double>::random({rows, n}, {padded, 1});
  host.buffer.resize(static_cast<std::size_t>(rows * padded));  // the last row is padded too: the complex rows fill it
  const auto original = host.dense();
  Operand x = to_space(host, GetParam());
  FFT f(x.view, {.axes = {1}, .inplace = true, .execution = exec()});
  f.plan();
  Tensor y = f.execute();
  EXPECT_EQ(y.data(), x.view.data());
  ASSERT_EQ(y.shape(), (Shape{rows, n / 2 + 1}));
  const auto full = reference_dft(original, {rows, n}, {1}, -1);
  EXPECT_LT(relative_error(to_dense(y.view()), truncate_axis(full, {rows, n}, 1, n / 2 + 1)), 1e-12);

  FFT back(y, {.axes = {1}, .inplace = true, .execution = exec(), .fft_type = FFTType::c2r});
  back.plan();
  Tensor z = back.execute();
  ASSERT_EQ(z.shape(), (Shape{rows, n}));
  EXPECT_EQ(z.strides(), (Strides{padded, 1}));
  EXPECT_LT(relative_error(to_dense(z.view()), scaled(original, static_cast<double>(n))), 1e-12);
}

// In place on an owning Tensor, the result shares the operand's memory and ownership: it stays valid after the
// operand, its owner and the FFT object are gone (a non-owning wrap would dangle).
TEST_P(FftNumerics, R2CInPlaceResultKeepsTheOperandMemoryAlive) {
  const std::int64_t rows = 4, n = 10, padded = 2 * (n / 2 + 1);
  auto host = HostArray<double>::random({rows, n}, {padded, 1});
  host.buffer.resize(static_cast<std::size_t>(rows * padded));
  const auto original = host.dense();
  const bool cuda = GetParam() == Space::cuda;
  const Device device = cuda ? Device::cuda(0) : Device::cpu();
  std::optional<Tensor> owner = Tensor::empty({rows * padded}, f64, device);
  copy(TensorView(host.buffer.data(), {rows * padded}), owner->view());
  const void* memory = owner->data();
  std::optional<Tensor> operand =
      Tensor::alias(*owner, TensorView(owner->data(), f64, {rows, n}, Strides{padded, 1}, device,
                                       cuda ? MemorySpace::device : MemorySpace::host_pageable));
  std::optional<FFT> f(std::in_place, *operand, FFTOptions{.axes = {1}, .inplace = true, .execution = exec()});
  f->plan();
  Tensor y = f->execute();
  f.reset();
  operand.reset();
  owner.reset();
  EXPECT_TRUE(y.owning());
  EXPECT_EQ(y.data(), memory);  // the operand's memory, kept alive by the result alone
  ASSERT_EQ(y.shape(), (Shape{rows, n / 2 + 1}));
  const auto full = reference_dft(original, {rows, n}, {1}, -1);
  EXPECT_LT(relative_error(to_dense(y.view()), truncate_axis(full, {rows, n}, 1, n / 2 + 1)), 1e-12);
}

// A column-major operand: the natural (row-major) result needs a copy that rearranges it, the optimized one takes
// the layout the transform computes into and needs none. Both give the same values.
TEST_P(FftNumerics, ResultLayoutOptimizedAvoidsTheRearrangingCopy) {
  const std::vector<std::int64_t> shape{12, 10};
  auto host = HostArray<std::complex<double>>::random(shape, {1, 12});
  Operand x = to_space(host, GetParam());
  const auto expected = reference_dft(host.dense(), shape, {0, 1}, -1);
  FFT natural(x.view, {.axes = {0, 1}, .execution = exec()});
  FFT optimized(x.view, {.axes = {0, 1}, .result_layout = ResultLayout::optimized, .execution = exec()});
  EXPECT_EQ(natural.result_strides(), (Strides{10, 1}));
  EXPECT_EQ(optimized.result_strides(), (Strides{1, 12}));
  EXPECT_NE(natural.describe().find("output copy"), std::string::npos) << natural.describe();
  EXPECT_EQ(optimized.describe().find("output copy"), std::string::npos) << optimized.describe();
  natural.plan();
  optimized.plan();
  EXPECT_LT(relative_error(to_dense(natural.execute().view()), expected), 1e-12);
  Tensor y = optimized.execute();
  EXPECT_EQ(y.strides(), (Strides{1, 12}));
  EXPECT_LT(relative_error(to_dense(y.view()), expected), 1e-12);

  // Into a poisoned output of the optimized layout.
  const Device device = GetParam() == Space::cuda ? Device::cuda(0) : Device::cpu();
  Tensor out = Tensor::empty_strided({12, 10}, {1, 12}, c128, device);
  std::vector<std::complex<double>> nan(120, {std::nan(""), std::nan("")});
  copy(TensorView(nan.data(), {120}), TensorView(out.data(), c128, {120}, std::nullopt, device));
  optimized.execute({.out = out.view()});
  EXPECT_LT(relative_error(to_dense(out.view()), expected), 1e-12);
}

TEST_P(FftNumerics, NormalizationsScaleAsDocumented) {
  const std::vector<std::int64_t> shape{4, 30};
  auto host = HostArray<std::complex<double>>::random(shape);
  Operand x = to_space(host, GetParam());
  const auto fwd = reference_dft(host.dense(), shape, {0, 1}, -1);
  const auto inv = reference_dft(host.dense(), shape, {0, 1}, 1);
  const double n = 120.0;
  struct Case {
    Normalization norm;
    double forward_scale, inverse_scale;
  };
  for (const Case& c :
       {Case{Normalization::none, 1, 1}, Case{Normalization::inverse, 1, 1 / n}, Case{Normalization::forward, 1 / n, 1},
        Case{Normalization::ortho, 1 / std::sqrt(n), 1 / std::sqrt(n)}}) {
    SCOPED_TRACE(to_string(c.norm));
    FFT f(x.view, {.axes = {0, 1}, .normalization = c.norm, .execution = exec()});
    f.plan();
    EXPECT_LT(relative_error(to_dense(f.execute().view()), scaled(fwd, c.forward_scale)), 1e-12);
    EXPECT_LT(
        relative_error(to_dense(f.execute({.direction = Direction::inverse}).view()), scaled(inv, c.inverse_scale)),
        1e-12);
  }
  // Ortho round trip is the identity.
  FFT f(x.view, {.axes = {0, 1}, .normalization = Normalization::ortho, .execution = exec()});
  f.plan();
  Tensor y = f.execute();
  FFT g(y, {.axes = {0, 1}, .normalization = Normalization::ortho, .execution = exec()});
  g.plan();
  EXPECT_LT(relative_error(to_dense(g.execute({.direction = Direction::inverse}).view()), host.dense()), 1e-12);
}

TEST_P(FftNumerics, R2CNormalizedForward) {
  auto host = HostArray<float>::random({3, 64});
  Operand x = to_space(host, GetParam());
  FFT f(x.view, {.axes = {1}, .normalization = Normalization::forward, .execution = exec()});
  f.plan();
  const auto full = reference_dft(host.dense(), {3, 64}, {1}, -1);
  EXPECT_LT(relative_error(to_dense(f.execute().view()), scaled(truncate_axis(full, {3, 64}, 1, 33), 1.0 / 64)),
            tolerance(f32, 64));
}

INSTANTIATE_TEST_SUITE_P(Spaces, FftNumerics, ::testing::Values(Space::cpu, Space::cuda), space_name);

}  // namespace
}  // namespace cuplan::testing
