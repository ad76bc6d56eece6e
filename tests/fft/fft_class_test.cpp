// SPDX-License-Identifier: Apache-2.0
// The class form's lifecycle: plan/execute/reset/release/free, accessors, move, user outputs, workspace release.
// Parameterised over the execution space like the numerical tests.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "cuplan/format.hpp"
#include "fft/fft_test_util.hpp"

namespace cuplan::testing {
namespace {

class FftClass : public SpaceTest {};

TEST_P(FftClass, ExecuteTwiceThenResetOperandGivesTheNewOperandsTransform) {
  const std::vector<std::int64_t> shape{16, 40};
  auto a = HostArray<std::complex<double>>::random(shape);
  auto b = HostArray<std::complex<double>>::random(shape);
  Operand xa = to_space(a, GetParam());
  Operand xb = to_space(b, GetParam());
  FFT f(xa.view, {.axes = {0, 1}, .execution = exec()});
  EXPECT_EQ(f.uses_cuda(), GetParam() == Space::cuda);
  f.plan();
  const auto ref_a = reference_dft(a.dense(), shape, {0, 1}, -1);
  EXPECT_LT(relative_error(to_dense(f.execute().view()), ref_a), 1e-12);
  EXPECT_LT(relative_error(to_dense(f.execute().view()), ref_a), 1e-12);
  f.reset_operand(xb.view);
  EXPECT_LT(relative_error(to_dense(f.execute().view()), reference_dft(b.dense(), shape, {0, 1}, -1)), 1e-12);
}

TEST_P(FftClass, AccessorsAndDescription) {
  auto a = HostArray<float>::random({4, 10});
  Operand x = to_space(a, GetParam());
  FFT f(x.view, {.axes = {1}, .normalization = Normalization::ortho, .execution = exec()});
  EXPECT_EQ(f.type(), FFTType::r2c);
  EXPECT_EQ(f.axes(), std::vector<int>{1});
  EXPECT_EQ(f.result_shape(), (Shape{4, 6}));
  EXPECT_EQ(f.result_dtype(), c64);
  EXPECT_EQ(f.workspace_size(), 0u);
  const std::string text = fmt::format("{}", f);
  EXPECT_NE(text.find("R2C"), std::string::npos) << text;
  EXPECT_NE(text.find("ortho"), std::string::npos) << text;
  EXPECT_NE(text.find(GetParam() == Space::cuda ? "cuFFT" : "FFTW"), std::string::npos) << text;
}

TEST_P(FftClass, WritesIntoAUserOutput) {
  auto a = HostArray<std::complex<float>>::random({3, 64});
  Operand x = to_space(a, GetParam());
  auto out_host = HostArray<std::complex<float>>::random({3, 64});
  std::fill(out_host.buffer.begin(), out_host.buffer.end(), std::complex<float>(NAN, NAN));
  Operand out = to_space(out_host, GetParam());
  FFT f(x.view, {.axes = {1}, .execution = exec()});
  f.plan();
  Tensor y = f.execute({.out = out.view});
  EXPECT_EQ(y.data(), out.view.data());
  EXPECT_LT(relative_error(to_dense(out.view), reference_dft(a.dense(), {3, 64}, {1}, -1)), tolerance(f32, 64));
  // Every field of FFTExecuteOptions, in its documented order: the inverse back into the poisoned output.
  auto back_host = HostArray<std::complex<float>>::random({3, 64});
  std::fill(back_host.buffer.begin(), back_host.buffer.end(), std::complex<float>(NAN, NAN));
  Operand back = to_space(back_host, GetParam());
  const FFTExecuteOptions inverse{.direction = Direction::inverse,
                                  .stream = std::nullopt,
                                  .after = {},
                                  .release_workspace = true,
                                  .out = back.view};
  f.reset_operand(out.view);
  f.execute(inverse);
  EXPECT_LT(relative_error(to_dense(back.view), scaled(a.dense(), 64.0)), tolerance(f32, 64));
}

TEST_P(FftClass, MovedObjectKeepsWorkingAndTheSourceReportsStateError) {
  auto a = HostArray<std::complex<double>>::random({2, 8});
  Operand x = to_space(a, GetParam());
  FFT f(x.view, {.execution = exec()});
  f.plan();
  FFT g = std::move(f);
  EXPECT_LT(relative_error(to_dense(g.execute().view()), reference_dft(a.dense(), {2, 8}, {0, 1}, -1)), 1e-12);
  EXPECT_THROW(f.execute(), StateError);  // NOLINT(bugprone-use-after-move): moved-from objects must say so
}

TEST_P(FftClass, ReleaseOperandThenResetWorksAgain) {
  auto a = HostArray<std::complex<double>>::random({5, 9});
  Operand x = to_space(a, GetParam());
  FFT f(x.view, {.axes = {1}, .execution = exec()});
  f.plan();
  f.release_operand();
  EXPECT_THROW(f.execute(), StateError);
  f.reset_operand(x.view);
  EXPECT_LT(relative_error(to_dense(f.execute().view()), reference_dft(a.dense(), {5, 9}, {1}, -1)), 1e-12);
}

TEST_P(FftClass, ReleaseWorkspaceEachCallStillComputes) {
  auto a = HostArray<std::complex<float>>::random({4, 1000});
  Operand x = to_space(a, GetParam());
  FFT f(x.view, {.axes = {1}, .execution = exec()});
  f.plan();
  const auto ref = reference_dft(a.dense(), {4, 1000}, {1}, -1);
  for (int i = 0; i < 3; ++i)
    EXPECT_LT(relative_error(to_dense(f.execute({.release_workspace = true}).view()), ref), tolerance(f32, 1000));
}

TEST_P(FftClass, FreeIsIdempotentAndEveryLaterCallThrowsStateError) {
  auto a = HostArray<std::complex<double>>::random({4, 4});
  Operand x = to_space(a, GetParam());
  FFT f(x.view, {.execution = exec()});
  f.plan();
  f.free();
  f.free();
  EXPECT_THROW(f.plan(), StateError);
  EXPECT_THROW(f.execute(), StateError);
  EXPECT_THROW(f.reset_operand(x.view), StateError);
  EXPECT_THROW(f.release_operand(), StateError);
}

TEST_P(FftClass, HostOperandResultIsOnTheHostAndDeviceOperandResultOnTheDevice) {
  auto a = HostArray<std::complex<float>>::random({2, 32});
  Operand x = to_space(a, GetParam());
  FFT f(x.view, {.execution = exec()});
  f.plan();
  Tensor y = f.execute();
  EXPECT_EQ(y.device(), x.view.device());
}

INSTANTIATE_TEST_SUITE_P(Spaces, FftClass, ::testing::Values(Space::cpu, Space::cuda), space_name);

// CUDA execution of host operands: blocking, result on the host (the blocking rule, docs/getting-started.md).
TEST(FftClassCuda, HostOperandWithCudaExecutionBlocksAndReturnsAHostTensor) {
  CUPLAN_REQUIRE_GPU();
  auto a = HostArray<std::complex<double>>::random({8, 30}, {64, 2});
  Stream s;
  FFT f(a.view(), {.axes = {0, 1}, .execution = Execution::cuda()});
  f.plan(s);
  Tensor y = f.execute({.stream = s});
  EXPECT_TRUE(y.view().on_host());
  EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(a.dense(), {8, 30}, {0, 1}, -1)), 1e-12);
}

TEST(FftClassCuda, HalfPrecisionPowerOfTwo) {
  CUPLAN_REQUIRE_GPU();
  const std::int64_t n = 256;
  std::vector<cuplan::half2> host(static_cast<std::size_t>(2 * n));
  auto values = random_vector<std::complex<float>>(host.size());
  std::vector<cd> dense(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) {
    host[i] = cuplan::half2(cuplan::half(values[i].real()), cuplan::half(values[i].imag()));
    dense[i] = cd(static_cast<float>(host[i].x), static_cast<float>(host[i].y));
  }
  Tensor x = Tensor::empty({2, n}, c32, Device::cuda(0));
  copy(TensorView(host.data(), {2, n}), x.view());
  FFT f(x, {.axes = {1}});
  f.plan();
  EXPECT_LT(relative_error(to_dense(f.execute().view()), reference_dft(dense, {2, n}, {1}, -1)), tolerance(f16, n));
}

}  // namespace
}  // namespace cuplan::testing
