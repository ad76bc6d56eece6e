// SPDX-License-Identifier: Apache-2.0
// Numerical results of Convolution and fftconvolve against a float64 direct convolution: every mode, axis sets,
// real and complex f32/f64 (and mixed), odd and prime lengths, kernels broadcast over batch axes, strided operands,
// outputs poisoned first. Parameterised over the execution space: CPU (FFTW) everywhere, CUDA where a GPU exists
// (there the automatic route: fused where it applies, separate passes elsewhere).

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <vector>

#include "convolution/convolution_test_util.hpp"

namespace cuplan::testing {
namespace {

class ConvolutionNumerics : public SpaceTest {};

constexpr ConvolutionMode kModes[] = {ConvolutionMode::full, ConvolutionMode::same, ConvolutionMode::valid,
                                      ConvolutionMode::circular};

std::vector<int> normal_axes(const std::vector<int>& axes, std::size_t ndim) {
  std::vector<int> out;
  for (int a : axes) out.push_back(a < 0 ? a + static_cast<int>(ndim) : a);
  return out;
}

/// One case through the class form (result into a poisoned `out`, then a second execute into a new Tensor) and the
/// function form, each against the reference; the operand unchanged after all three.
template <class T, class K = T>
void check(Space space, std::vector<std::int64_t> xs, std::vector<std::int64_t> ks, std::vector<int> axes,
           ConvolutionMode mode, std::vector<std::int64_t> x_strides = {},
           ConvolutionRoute route = ConvolutionRoute::automatic) {
  SCOPED_TRACE(::testing::Message() << "mode " << to_string(mode) << " x " << ::testing::PrintToString(xs) << " k "
                                    << ::testing::PrintToString(ks) << " axes " << ::testing::PrintToString(axes));
  auto hx = HostArray<T>::random(xs, x_strides);
  auto hk = HostArray<K>::random(ks);
  Operand x = to_space(hx, space);
  Operand k = to_space(hk, space);
  std::vector<int> defaults;  // empty axes: the last min(ndim, 3)
  for (int a = std::max(0, static_cast<int>(xs.size()) - 3); a < static_cast<int>(xs.size()); ++a)
    defaults.push_back(a);
  const auto ref_axes = normal_axes(axes.empty() ? defaults : axes, xs.size());
  const auto operand = hx.dense();  // a copy: on the CPU the operand is hx's own memory
  const auto expected = reference_convolution(operand, xs, hk.dense(), ks, ref_axes, mode);
  const ConvolutionOptions options{.axes = axes, .mode = mode, .route = route, .execution = execution_for(space)};

  Convolution conv(x.view, k.view, options);
  conv.plan();
  const auto shape = convolution_shape(xs, ks, ref_axes, mode);
  EXPECT_EQ(conv.result_shape(), Shape(std::span<const std::int64_t>(shape)));
  std::int64_t fft_size = 1;
  for (std::int64_t n : conv.fft_lengths()) fft_size *= n;
  const double tol = convolution_tolerance(conv.result_dtype(), fft_size);
  Tensor out = poisoned(conv.result_dtype(), shape, space);
  conv.execute({.out = out.view()});
  EXPECT_LT(relative_error(to_dense(out.view()), expected), tol) << conv.describe();
  const Tensor again = conv.execute();
  EXPECT_LT(relative_error(to_dense(again.view()), expected), tol) << conv.describe();

  Tensor fout = poisoned(conv.result_dtype(), shape, space);
  fftconvolve(x.view, k.view, fout.view(), options);
  EXPECT_LT(relative_error(to_dense(fout.view()), expected), tol) << "fftconvolve";
  EXPECT_EQ(to_dense(x.view), operand) << "the operand stays intact: " << conv.describe();
}

TEST_P(ConvolutionNumerics, EveryMode1DOddPrimeAndPowerOfTwoLengths) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> lengths{{1, 1},  {7, 3},   {13, 13},  {17, 5}, {31, 1},
                                                                   {64, 9}, {97, 31}, {256, 17}, {5, 11}, {300, 64}};
  for (ConvolutionMode mode : kModes)
    for (auto [n, m] : lengths) {
      if (mode == ConvolutionMode::circular && m > n) continue;
      check<float>(GetParam(), {3, n}, {1, m}, {-1}, mode);
      check<std::complex<double>>(GetParam(), {2, n}, {1, m}, {-1}, mode);
    }
}

TEST_P(ConvolutionNumerics, EveryDtypeAndMixedRealComplex) {
  for (ConvolutionMode mode : kModes) {
    check<float>(GetParam(), {4, 37}, {1, 6}, {1}, mode);
    check<double>(GetParam(), {4, 37}, {1, 6}, {1}, mode);
    check<std::complex<float>>(GetParam(), {4, 37}, {1, 6}, {1}, mode);
    check<std::complex<double>>(GetParam(), {4, 37}, {1, 6}, {1}, mode);
    check<float, std::complex<float>>(GetParam(), {3, 29}, {1, 4}, {1}, mode);
    check<std::complex<double>, double>(GetParam(), {3, 29}, {1, 4}, {1}, mode);
  }
}

TEST_P(ConvolutionNumerics, AxisSets2DAnd3D) {
  const std::vector<std::int64_t> xs{6, 9, 7, 5};
  const std::vector<std::vector<int>> cases{{0}, {1}, {2}, {0, 1}, {1, 3}, {-1, -2}, {0, 2, 3}, {1, 2, 3}};
  for (const auto& axes : cases)
    for (ConvolutionMode mode : kModes) {
      std::vector<std::int64_t> ks(xs.size(), 1);
      for (int a : normal_axes(axes, xs.size())) ks[static_cast<std::size_t>(a)] = a % 2 == 0 ? 3 : 4;
      check<float>(GetParam(), xs, ks, axes, mode);
      check<std::complex<double>>(GetParam(), xs, ks, axes, mode);
    }
}

TEST_P(ConvolutionNumerics, DefaultAxesAreTheLastThree) {
  check<double>(GetParam(), {2, 5, 6, 7}, {1, 2, 3, 2}, {}, ConvolutionMode::full);
  check<float>(GetParam(), {11}, {4}, {}, ConvolutionMode::same);
}

TEST_P(ConvolutionNumerics, KernelPerBatchEntryAndBroadcastOverSomeBatchAxes) {
  for (ConvolutionMode mode : kModes) {
    check<float>(GetParam(), {3, 4, 40}, {3, 4, 7}, {2}, mode);                // one kernel per row
    check<std::complex<float>>(GetParam(), {3, 4, 40}, {3, 1, 7}, {2}, mode);  // broadcast over axis 1
    check<double>(GetParam(), {5, 12, 3}, {1, 6, 3}, {1}, mode);               // batch axes on both sides
  }
}

TEST_P(ConvolutionNumerics, StridedAndPaddedOperands) {
  check<float>(GetParam(), {4, 50}, {1, 9}, {1}, ConvolutionMode::same, {64, 1});
  check<std::complex<double>>(GetParam(), {6, 5, 8}, {1, 3, 8}, {1, 2}, ConvolutionMode::full, {1, 48, 6});
  check<double>(GetParam(), {10, 3}, {4, 1}, {0}, ConvolutionMode::valid, {3, 1});
}

TEST_P(ConvolutionNumerics, ValidModeWithTheKernelLongerThanTheOperand) {
  check<float>(GetParam(), {2, 5}, {1, 12}, {1}, ConvolutionMode::valid);
  check<std::complex<float>>(GetParam(), {4, 3}, {9, 7}, {0, 1}, ConvolutionMode::valid);
}

TEST_P(ConvolutionNumerics, OneKernelOverManyOperandsAndANewKernel) {
  const Space space = GetParam();
  auto hx = HostArray<float>::random({8, 100});
  auto hk = HostArray<float>::random({1, 15});
  Operand x = to_space(hx, space);
  Operand k = to_space(hk, space);
  Convolution conv(x.view, k.view, {.mode = ConvolutionMode::same, .execution = execution_for(space)});
  conv.plan();
  std::vector<HostArray<float>> operands;
  std::vector<Operand> placed;
  for (int round = 0; round < 3; ++round) {
    operands.push_back(HostArray<float>::random({8, 100}));
    placed.push_back(to_space(operands.back(), space));
    conv.reset_operand(placed.back().view);
    const Tensor y = conv.execute();
    const auto expected =
        reference_convolution(operands.back().dense(), {8, 100}, hk.dense(), hk.shape, {1}, ConvolutionMode::same);
    EXPECT_LT(relative_error(to_dense(y.view()), expected), convolution_tolerance(f32, 128)) << round;
  }
  // A new kernel: its spectrum is computed by reset_kernel, the operand stays the last one given.
  auto hk2 = HostArray<float>::random({1, 15});
  Operand k2 = to_space(hk2, space);
  conv.reset_kernel(k2.view);
  const Tensor y = conv.execute();
  const auto expected =
      reference_convolution(operands.back().dense(), {8, 100}, hk2.dense(), hk2.shape, {1}, ConvolutionMode::same);
  EXPECT_LT(relative_error(to_dense(y.view()), expected), convolution_tolerance(f32, 128));
}

TEST_P(ConvolutionNumerics, FunctionFormPlanCacheHitTakesTheNewKernel) {
  const Space space = GetParam();
  auto hx = HostArray<std::complex<float>>::random({4, 64});
  Operand x = to_space(hx, space);
  for (int round = 0; round < 3; ++round) {
    auto hk = HostArray<std::complex<float>>::random({1, 10});
    Operand k = to_space(hk, space);
    const Tensor y = fftconvolve(x.view, k.view, {.execution = execution_for(space)});
    const auto expected = reference_convolution(hx.dense(), hx.shape, hk.dense(), hk.shape, {1}, ConvolutionMode::full);
    EXPECT_LT(relative_error(to_dense(y.view()), expected), convolution_tolerance(c64, 80)) << round;
  }
}

TEST_P(ConvolutionNumerics, HostOperandsOnEitherExecution) {
  // Host operands: blocking calls, host results, whatever the execution.
  auto hx = HostArray<double>::random({3, 33});
  auto hk = HostArray<double>::random({1, 8});
  const Tensor y =
      fftconvolve(hx.view(), hk.view(), {.mode = ConvolutionMode::same, .execution = execution_for(GetParam())});
  EXPECT_TRUE(y.view().on_host());
  const auto expected = reference_convolution(hx.dense(), hx.shape, hk.dense(), hk.shape, {1}, ConvolutionMode::same);
  EXPECT_LT(relative_error(to_dense(y.view()), expected), convolution_tolerance(f64, 64));
}

INSTANTIATE_TEST_SUITE_P(Spaces, ConvolutionNumerics, ::testing::Values(Space::cpu, Space::cuda), space_name);

}  // namespace
}  // namespace cuplan::testing
