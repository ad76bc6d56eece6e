// SPDX-License-Identifier: Apache-2.0
// PlanningMode without a GPU (docs/streams.md, "Planning happens at the call"): the option is validated by every
// function form, every call plans at the call in either mode (the plan is in the cache when the call returns, with the
// same result), and a planted plan-creation failure raises at the call, leaving the cache without the failed plan.
// The GPU side is planning_mode_gpu_test.cu.

#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "base/fault_injection.hpp"
#include "cuplan/cuplan.hpp"
#include "cuplan/format.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using testing::expect_throw_naming;
using C = std::complex<float>;

TEST(PlanningMode, OutOfRangeValuesAreRejectedByEveryFunctionForm) {
  std::vector<C> x(16, C(1.0F, 0.0F));
  std::vector<float> a(4, 1.0F), b(4, 1.0F);
  const auto bad = static_cast<PlanningMode>(7);
  expect_throw_naming<InvalidArgument>([&] { (void)fft(TensorView(x.data(), {16}), {.planning_mode = bad}); },
                                       {"fft", "planning_mode", "PlanningMode", "7"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        (void)matmul(TensorView(a.data(), {2, 2}), TensorView(b.data(), {2, 2}), {.planning_mode = bad});
      },
      {"matmul", "planning_mode", "PlanningMode", "7"});
  std::vector<float> r(16, 1.0F), k(3, 1.0F);
  expect_throw_naming<InvalidArgument>([&] { (void)dct(TensorView(r.data(), {16}), {.planning_mode = bad}); },
                                       {"dct", "planning_mode", "PlanningMode", "7"});
  expect_throw_naming<InvalidArgument>(
      [&] { (void)fftconvolve(TensorView(r.data(), {16}), TensorView(k.data(), {3}), {.planning_mode = bad}); },
      {"fftconvolve", "planning_mode", "PlanningMode", "7"});
  EXPECT_EQ(fmt::format("{}", PlanningMode::background), "background");
  EXPECT_EQ(fmt::format("{}", PlanningMode::blocking), "blocking");
}

// Either mode plans at the call: the plan is in the cache when the call returns, and the results are equal bit for bit.
TEST(PlanningMode, CpuExecutionPlansAtTheCallInEitherModeWithTheSameResult) {
  const std::vector<C> values = testing::random_vector<C>(6 * 40);
  const TensorView x(const_cast<C*>(values.data()), {6, 40});
  const std::vector<float> a = testing::random_vector<float>(6 * 5), b = testing::random_vector<float>(5 * 7);
  const TensorView av(const_cast<float*>(a.data()), {6, 5}), bv(const_cast<float*>(b.data()), {5, 7});
  std::vector<Tensor> results[2];
  for (int m = 0; m < 2; ++m) {
    const PlanningMode mode = m == 0 ? PlanningMode::background : PlanningMode::blocking;
    SCOPED_TRACE(fmt::format("{}", mode));
    plan_cache::clear();
    results[m].push_back(fft(x, {.axes = {1}, .execution = Execution::cpu(1), .planning_mode = mode}));
    EXPECT_EQ(plan_cache::stats().size, 1U) << "fft planned at the call";
    results[m].push_back(matmul(av, bv, {.execution = Execution::cpu(1), .planning_mode = mode}));
    EXPECT_EQ(plan_cache::stats().size, 2U) << "matmul planned at the call";
  }
  for (std::size_t i = 0; i < results[0].size(); ++i) {
    const Tensor& background = results[0][i];
    const Tensor& blocking = results[1][i];
    ASSERT_EQ(background.numel(), blocking.numel());
    EXPECT_EQ(std::memcmp(background.data(), blocking.data(),
                          static_cast<std::size_t>(background.numel()) * background.dtype().size()),
              0)
        << "result " << i;
  }
}

// The plan-creation fault point, in either mode: the typed error at the call, the cache keeps nothing of the failed
// call, and the next call of the same key plans and runs.
TEST(PlanningMode, APlantedPlanCreationFailureRaisesAtTheCallInEitherMode) {
  namespace fault = detail::fault;
  plan_cache::clear();
  std::vector<float> a(12, 1.0F), b(12, 2.0F);
  const TensorView av(a.data(), {3, 4}), bv(b.data(), {4, 3});
  std::vector<C> x(32, C(1.0F, 0.0F));
  for (int form = 0; form < 4; ++form) {
    const PlanningMode mode = form < 2 ? PlanningMode::background : PlanningMode::blocking;
    fault::arm(fault::Site::plan, 1);
    try {
      if (form % 2 == 0)
        (void)fft(TensorView(x.data(), {32}), {.execution = Execution::cpu(1), .planning_mode = mode});
      else
        (void)matmul(av, bv, {.execution = Execution::cpu(1), .planning_mode = mode});
      FAIL() << "no error from the planted plan-creation failure";
    } catch (const LibraryError& e) {
      EXPECT_EQ(e.status_name(), "CUPLAN_FAULT_INJECTED");
      EXPECT_NE(std::string(e.what()).find(form % 2 == 0 ? "fft: plan creation" : "matmul: plan creation"),
                std::string::npos)
          << e.what();
    }
    fault::disarm();
    EXPECT_EQ(plan_cache::stats().size, 0U) << "the failed plan is not cached";
  }
  const Tensor y = fft(TensorView(x.data(), {32}), {.execution = Execution::cpu(1)});
  EXPECT_EQ(y.data<C>()[0], C(32.0F, 0.0F));
  const Tensor d = matmul(av, bv, {.execution = Execution::cpu(1)});
  EXPECT_EQ(d.data<float>()[0], 8.0F);
}

}  // namespace
}  // namespace cuplan
