// SPDX-License-Identifier: Apache-2.0
// Function forms fft/ifft/rfft/irfft: results, output overloads, the plan cache (hits, no re-plan) and threads.

#include <gtest/gtest.h>

#include <thread>

#include "fft/fft_test_util.hpp"

namespace cuplan::testing {
namespace {

class FftFunctions : public ::testing::TestWithParam<Space> {
 protected:
  void SetUp() override {
    CUPLAN_REQUIRE_SPACE(GetParam());
    plan_cache::clear();
    plan_cache::reset_stats();
  }
  Execution exec() const { return execution_for(GetParam()); }
};

TEST_P(FftFunctions, FftAndIfftMatchTheReference) {
  auto a = HostArray<std::complex<double>>::random({6, 20, 5});
  Operand x = to_space(a, GetParam());
  Tensor y = fft(x.view, {.axes = {0, 1}, .execution = exec()});
  EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(a.dense(), {6, 20, 5}, {0, 1}, -1)), 1e-12);
  Tensor z = ifft(y, {.axes = {0, 1}, .normalization = Normalization::inverse, .execution = exec()});
  EXPECT_LT(relative_error(to_dense(z.view()), a.dense()), 1e-12);
}

TEST_P(FftFunctions, RfftAndIrfftRoundTripOddLength) {
  auto a = HostArray<float>::random({4, 45});
  Operand x = to_space(a, GetParam());
  Tensor y = rfft(x.view, {.axes = {1}, .execution = exec()});
  EXPECT_EQ(y.shape(), (Shape{4, 23}));
  Tensor z = irfft(
      y, {.axes = {1}, .last_axis_parity = Parity::odd, .normalization = Normalization::inverse, .execution = exec()});
  EXPECT_EQ(z.shape(), (Shape{4, 45}));
  EXPECT_LT(relative_error(to_dense(z.view()), a.dense()), tolerance(f32, 45));
}

TEST_P(FftFunctions, OutputOverloadsWriteIntoTheGivenView) {
  auto a = HostArray<std::complex<float>>::random({3, 16});
  auto out = HostArray<std::complex<float>>::random({3, 16}, {32, 2});  // strided output
  std::fill(out.buffer.begin(), out.buffer.end(), std::complex<float>(NAN, NAN));
  Operand x = to_space(a, GetParam());
  Operand o = to_space(out, GetParam());
  fft(x.view, o.view, {.axes = {1}, .execution = exec()});
  EXPECT_LT(relative_error(to_dense(o.view), reference_dft(a.dense(), {3, 16}, {1}, -1)), tolerance(f32, 16));
}

TEST_P(FftFunctions, RepeatedCallsHitTheCacheAndDoNotReplan) {
  auto a = HostArray<std::complex<double>>::random({8, 64});
  auto b = HostArray<std::complex<double>>::random({8, 64});
  Operand xa = to_space(a, GetParam());
  Operand xb = to_space(b, GetParam());
  const FFTOptions options{.axes = {1}, .execution = exec()};
  fft(xa.view, options);
  for (int i = 0; i < 5; ++i) {
    Tensor y = fft(xb.view, options);
    EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(b.dense(), {8, 64}, {1}, -1)), 1e-12);
  }
  const PlanCacheStats stats = plan_cache::stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 5u);
  ifft(xa.view, options);  // another direction of the same plan is a hit too (direction is not in the key)
  EXPECT_EQ(plan_cache::stats().misses, 1u);
}

TEST_P(FftFunctions, ManyThreadsShareTheCacheSafely) {
  constexpr int threads = 4, calls = 10;
  std::vector<HostArray<std::complex<float>>> inputs;
  for (int t = 0; t < threads; ++t) inputs.push_back(HostArray<std::complex<float>>::random({4, 128}));
  std::vector<double> worst(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      Operand x = to_space(inputs[static_cast<std::size_t>(t)], GetParam());
      const auto ref = reference_dft(inputs[static_cast<std::size_t>(t)].dense(), {4, 128}, {1}, -1);
      for (int i = 0; i < calls; ++i) {
        Tensor y = fft(x.view, {.axes = {1}, .execution = execution_for(GetParam()), .blocking = Blocking::always});
        worst[static_cast<std::size_t>(t)] =
            std::max(worst[static_cast<std::size_t>(t)], relative_error(to_dense(y.view()), ref));
      }
    });
  for (auto& th : pool) th.join();
  for (double e : worst) EXPECT_LT(e, tolerance(f32, 128));
  EXPECT_EQ(plan_cache::stats().hits + plan_cache::stats().misses, static_cast<std::uint64_t>(threads * calls));
}

INSTANTIATE_TEST_SUITE_P(Spaces, FftFunctions, ::testing::Values(Space::cpu, Space::cuda), space_name);

}  // namespace
}  // namespace cuplan::testing
