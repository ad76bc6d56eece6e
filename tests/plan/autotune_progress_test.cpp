// SPDX-License-Identifier: Apache-2.0
// The autotune progress callback (AutotuneOptions::progress, docs/matmul.md "Autotune progress"): the report's
// arithmetic on the CPU (runs, best candidate by median, clock), Matmul::autotune on the CPU (nothing timed, never
// called), and on a GPU the calls per round and a callback that throws, which cancels the tuning and leaves the
// object as it was and usable.

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "plan/autotune_progress.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

TEST(AutotuneProgress, ReportsRunsTheFastestMedianAndTheClock) {
  std::vector<AutotuneProgress> seen;
  detail::AutotuneReporter reporter([&](const AutotuneProgress& p) { seen.push_back(p); }, 4, 3, 2);
  ASSERT_TRUE(reporter.active());
  // Candidate 2 did not run (the library rejected it); candidate 3 is the fastest by median, not by its best run.
  std::vector<std::vector<float>> times = {{1.0f}, {0.9f}, {}, {0.8f}};
  reporter.round_done(times);
  times = {{1.0f, 1.1f, 1.2f}, {0.1f, 2.0f, 2.0f}, {}, {0.8f, 0.85f, 0.9f}};
  reporter.round_done(times);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].runs_done, 3);
  EXPECT_EQ(seen[0].runs_total, 6);
  EXPECT_EQ(seen[0].candidates, 4);
  EXPECT_EQ(seen[0].best_candidate, 3);
  EXPECT_FLOAT_EQ(static_cast<float>(seen[0].best_ms), 0.8f);
  EXPECT_EQ(seen[1].runs_done, 6);
  EXPECT_EQ(seen[1].best_candidate, 3);  // candidate 1's single 0.1 ms run does not make its median
  EXPECT_FLOAT_EQ(static_cast<float>(seen[1].best_ms), 0.85f);
  EXPECT_GE(seen[1].elapsed_ms, seen[0].elapsed_ms);
  EXPECT_GE(seen[0].elapsed_ms, 0.0);
}

TEST(AutotuneProgress, AnEmptyCallbackIsInactiveAndAThrowingOneGoesOn) {
  detail::AutotuneReporter none({}, 2, 2, 1);
  EXPECT_FALSE(none.active());
  EXPECT_EQ(none.round_done({{1.0f}, {2.0f}}).best_candidate, 0);
  detail::AutotuneReporter throwing([](const AutotuneProgress&) { throw std::runtime_error("stop"); }, 2, 2, 1);
  EXPECT_THROW(throwing.round_done({{1.0f}, {2.0f}}), std::runtime_error);
}

TEST(AutotuneProgress, OnTheCpuNothingIsTimedAndTheCallbackIsNotCalled) {
  std::vector<float> a = testing::random_vector<float>(6 * 4), b = testing::random_vector<float>(4 * 5);
  Matmul mm(TensorView(a.data(), {6, 4}), TensorView(b.data(), {4, 5}), {.execution = Execution::cpu()});
  mm.plan();
  int calls = 0;
  mm.autotune({.progress = [&](const AutotuneProgress&) { ++calls; }});
  EXPECT_EQ(calls, 0);
  const Tensor d = mm.execute();
  EXPECT_NEAR(d.data<float>()[0], a[0] * b[0] + a[1] * b[5] + a[2] * b[10] + a[3] * b[15], 1e-5);
}

// D = A B on the device against a double reference.
double max_error(const Tensor& d_device, const std::vector<float>& a, const std::vector<float>& b, int m, int n,
                 int k) {
  const Tensor d = d_device.to(Device::cpu());
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int l = 0; l < k; ++l) want += double(a[i * k + l]) * b[l * n + j];
      worst = std::max(worst, std::abs(d.data<float>()[i * d.strides()[0] + j * d.strides()[1]] - want));
    }
  return worst;
}

TEST(AutotuneProgress, OnTheGpuEachRoundReportsAndAThrowingCallbackCancels) {
  CUPLAN_REQUIRE_GPU();
  const int m = 256, n = 192, k = 128;
  std::vector<float> ha = testing::random_vector<float>(m * k), hb = testing::random_vector<float>(k * n);
  Stream s;
  Tensor a = Tensor::empty({m, k}, f32, Device::cuda(0), s), b = Tensor::empty({k, n}, f32, Device::cuda(0), s);
  copy(TensorView(ha.data(), {m, k}), a, s);
  copy(TensorView(hb.data(), {k, n}), b, s);
  Matmul mm(a, b, {.stream = s});
  mm.plan();
  const std::vector<AlgorithmInfo> before = mm.algorithms();

  // A callback that throws in the first round: autotune leaves with it, the order is unchanged, execute works.
  struct Stop {};
  EXPECT_THROW(mm.autotune({.iterations = 3, .progress = [](const AutotuneProgress&) { throw Stop{}; }}), Stop);
  const std::vector<AlgorithmInfo> after_cancel = mm.algorithms();
  ASSERT_EQ(after_cancel.size(), before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after_cancel[i].description, before[i].description) << i;
    EXPECT_FALSE(after_cancel[i].measured_ms.has_value()) << i;
  }
  EXPECT_LT(max_error(mm.execute(), ha, hb, m, n, k), 1e-3);

  // A full run: one call per round, runs counted up to the total, the best candidate among those timed.
  std::vector<AutotuneProgress> seen;
  mm.autotune({.iterations = 3, .progress = [&](const AutotuneProgress& p) { seen.push_back(p); }});
  ASSERT_EQ(seen.size(), 3u);
  for (std::size_t r = 0; r < seen.size(); ++r) {
    EXPECT_EQ(seen[r].candidates, static_cast<int>(before.size()));
    EXPECT_EQ(seen[r].runs_total % 3, 0);
    EXPECT_EQ(seen[r].runs_done, seen[r].runs_total / 3 * static_cast<int>(r + 1));
    EXPECT_GE(seen[r].best_candidate, 0);
    EXPECT_LT(seen[r].best_candidate, seen[r].candidates);
    EXPECT_GT(seen[r].best_ms, 0.0);
    if (r > 0) {
      EXPECT_GE(seen[r].elapsed_ms, seen[r - 1].elapsed_ms);
    }
  }
  EXPECT_LT(max_error(mm.execute(), ha, hb, m, n, k), 1e-3);
}

}  // namespace
}  // namespace cuplan
