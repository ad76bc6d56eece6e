// SPDX-License-Identifier: Apache-2.0
// Planning off the caller's thread, the parts that run without a GPU (docs/streams.md, "Planning off the caller's
// thread"): the planner thread (order, drain, many submitting threads, keys being planned and the calls that wait
// for them), the deferred errors (raised once, at whichever documented point comes first), the option's validation,
// and the calls that keep planning on the caller's thread (CPU execution) with the plan-creation fault point. Built
// under TSan by scripts/sanitize_cpu.sh with the other CPU tests. The GPU side is background_planning_gpu_test.cu.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <complex>
#include <cstring>
#include <thread>
#include <vector>

#include "base/fault_injection.hpp"
#include "cuplan/cuplan.hpp"
#include "cuplan/format.hpp"
#include "plan/planning/background_planner.hpp"
#include "plan/planning/planned_call.hpp"
#include "plan/planning/serial_worker.hpp"
#include "runtime/deferred_errors.hpp"
#include "support/test_support.hpp"

namespace cuplan::detail {
namespace {

PlanKey key_for(int value) {
  return PlanKey(PlanKind::fft).add(value).add(std::int64_t{0x5eed});
}

TEST(SerialWorker, RunsJobsInSubmissionOrderAndDrains) {
  SerialWorker planner("test");
  std::vector<int> order;  // written by the planner thread only, read after drain()
  for (int i = 0; i < 32; ++i) planner.submit([&order, i] { order.push_back(i); });
  planner.drain();
  ASSERT_EQ(order.size(), 32U);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
  EXPECT_EQ(planner.pending(), 0U);
}

TEST(SerialWorker, AJobThatThrowsIsLoggedAndTheNextOneRuns) {
  SerialWorker planner("test");
  std::atomic<bool> ran{false};
  planner.submit([] { throw std::runtime_error("a job's own failure"); });
  planner.submit([&] { ran = true; });
  planner.drain();
  EXPECT_TRUE(ran.load());
}

TEST(SerialWorker, DestructionRunsEveryQueuedJobBeforeJoining) {
  std::atomic<int> ran{0};
  {
    SerialWorker planner("test");
    for (int i = 0; i < 16; ++i)
      planner.submit([&ran] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++ran;
      });
  }  // no drain(): the destructor runs the queue dry (every job opens a gate: none may be dropped)
  EXPECT_EQ(ran.load(), 16);
}

// Eight threads each plan eight keys at once: a caller marks its key as being planned and queues the job; a second
// caller of the same key waits for that plan and then finds it made exactly once; no deadlock, no race (TSan).
TEST(BackgroundPlanner, EightThreadsOfNewKeysWaitForThePlansBeingMadeAndMakeEachOnce) {
  BackgroundPlanner planner;
  constexpr int threads = 8, keys_per_thread = 8;
  std::vector<std::atomic<int>> made(threads * keys_per_thread);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int k = 0; k < keys_per_thread; ++k) {
        const int id = t * keys_per_thread + k;
        const PlanKey key = key_for(id);
        planner.start_planning(key);
        planner.submit([&planner, &made, key, id] {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          made[static_cast<std::size_t>(id)].fetch_add(1);
          planner.finish_planning(key);
        });
        // A second call of the same key (here the neighbour thread's previous key as well): waits, then sees it made.
        planner.wait_for_plan(key);
        EXPECT_EQ(made[static_cast<std::size_t>(id)].load(), 1);
        const int neighbour = ((t + 1) % threads) * keys_per_thread + k;
        planner.wait_for_plan(key_for(neighbour));
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  planner.drain();
  for (const std::atomic<int>& count : made) EXPECT_EQ(count.load(), 1);
  EXPECT_FALSE(planner.planning(key_for(0)));
}

// A job that overruns the limit gets its overdue handling once, from the watchdog, while it still runs (planning that
// waits for the device, which waits for the job's gate); a job that ends in time never does.
TEST(SerialWorker, AnOverdueJobIsHandledOnceWhileItRunsAndAPromptOneNever) {
  SerialWorker planner("test", std::chrono::milliseconds(50));
  std::atomic<int> overdue_calls{0};
  std::atomic<bool> released{false};
  planner.submit([] {}, [&] { ++overdue_calls; });  // prompt
  planner.submit(
      [&] {
        while (!released.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // stuck until handled
      },
      [&] {
        ++overdue_calls;
        released = true;  // what opening the gate does for a job stuck behind it
      });
  planner.drain();
  EXPECT_EQ(overdue_calls.load(), 1);
  EXPECT_TRUE(released.load());
}

// An overdue job makes the jobs queued behind it overdue at once: each waits for it, and it may wait for theirs (a
// plan that waits for the device, which waits for every queued job's gate). Each handling runs once.
TEST(SerialWorker, AnOverdueJobMakesEveryJobQueuedBehindItOverdueAtOnce) {
  SerialWorker planner("test", std::chrono::milliseconds(50));
  constexpr int queued = 4;
  std::atomic<int> handled{0};
  std::vector<int> calls(queued + 1, 0);
  bool released = false;
  planner.submit(
      [&] {
        // Stuck until every queued job's handling has run (their gates opened); without the cascade that never
        // happens while it runs, and it gives up after a minute so that the test fails instead of hanging.
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
        while (handled.load() < queued + 1 && std::chrono::steady_clock::now() < give_up)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        released = handled.load() == queued + 1;
      },
      [&] {
        ++calls[0];
        ++handled;
      });
  for (int i = 1; i <= queued; ++i)
    planner.submit([] {},
                   [&, i] {
                     ++calls[static_cast<std::size_t>(i)];
                     ++handled;
                   });
  planner.drain();
  EXPECT_TRUE(released) << "the queued jobs were not handled while the first one ran";
  for (int i = 0; i <= queued; ++i) EXPECT_EQ(calls[static_cast<std::size_t>(i)], 1) << "job " << i;
}

// Only CUDA_MODULE_LOADING=EAGER loads every module at start-up; unset means lazy (the default since CUDA 12.2), as
// does any other value.
TEST(PlanningMode, BackgroundPlanningCountsOnlyEagerModuleLoadingAsEager) {
  EXPECT_FALSE(detail::lazy_module_loading("EAGER"));
  EXPECT_TRUE(detail::lazy_module_loading(nullptr));
  EXPECT_TRUE(detail::lazy_module_loading("LAZY"));
  EXPECT_TRUE(detail::lazy_module_loading("eager"));
  EXPECT_TRUE(detail::lazy_module_loading(""));
}

cudaStream_t fake_stream(std::uintptr_t value) {
  return reinterpret_cast<cudaStream_t>(value);
}

TEST(DeferredErrors, RaisedOnceOnTheirOwnStreamOnly) {
  const cudaStream_t mine = fake_stream(0x1000), other = fake_stream(0x2000);
  defer_error(mine, std::make_shared<DeferredError>(std::make_exception_ptr(InvalidArgument("planted failure"))));
  EXPECT_EQ(deferred_error_count(), 1U);
  EXPECT_NO_THROW(raise_deferred_errors(other));
  try {
    raise_deferred_errors(mine);
    FAIL() << "the deferred error was not raised";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("planted failure"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(raise_deferred_errors(mine));  // once
  EXPECT_EQ(deferred_error_count(), 0U);
}

TEST(DeferredErrors, WhicheverPointComesFirstRaisesItAndTheOtherStaysQuiet) {
  const cudaStream_t stream = fake_stream(0x3000);
  auto error = std::make_shared<DeferredError>(std::make_exception_ptr(StateError("planted failure")));
  defer_error(stream, error);
  EXPECT_THROW(error->raise_once(), StateError);  // e.g. the object's next call
  EXPECT_TRUE(error->raised());
  EXPECT_NO_THROW(raise_deferred_errors(stream));  // the stream's point finds it raised already
  EXPECT_EQ(deferred_error_count(), 0U);
}

TEST(DeferredErrors, ErrorsOfManyThreadsAreEachRaisedExactlyOnce) {
  constexpr int threads = 8, per_thread = 64;
  std::atomic<int> raised{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const cudaStream_t stream = fake_stream(0x10000 + static_cast<std::uintptr_t>(t) * 0x100);
      for (int i = 0; i < per_thread; ++i) {
        defer_error(stream, std::make_shared<DeferredError>(std::make_exception_ptr(InvalidArgument("x"))));
        try {
          raise_deferred_errors(stream);
        } catch (const InvalidArgument&) {
          ++raised;
        }
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  EXPECT_EQ(raised.load(), threads * per_thread);
  EXPECT_EQ(deferred_error_count(), 0U);
}

}  // namespace
}  // namespace cuplan::detail

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
  EXPECT_EQ(fmt::format("{}", PlanningMode::background), "background");
  EXPECT_EQ(fmt::format("{}", PlanningMode::blocking), "blocking");
}

TEST(PlanningMode, CpuExecutionPlansOnTheCallersThreadInEitherModeWithTheSameResult) {
  plan_cache::clear();
  const std::vector<C> values = testing::random_vector<C>(6 * 40);
  const TensorView x(const_cast<C*>(values.data()), {6, 40});
  const Tensor background = fft(x, {.axes = {1}, .execution = Execution::cpu(1)});
  plan_cache::clear();
  const Tensor blocking =
      fft(x, {.axes = {1}, .execution = Execution::cpu(1), .planning_mode = PlanningMode::blocking});
  ASSERT_EQ(background.numel(), blocking.numel());
  EXPECT_EQ(std::memcmp(background.data(), blocking.data(), static_cast<std::size_t>(background.numel()) * sizeof(C)),
            0);
}

// The plan-creation fault point on the path that plans on the caller's thread: the typed error at the call, the
// cache keeps nothing of the failed call, and the next call of the same key plans and runs.
TEST(PlanningMode, APlantedPlanCreationFailureRaisesAtTheCallWhenPlanningOnTheCallersThread) {
  namespace fault = detail::fault;
  plan_cache::clear();
  std::vector<float> a(12, 1.0F), b(12, 2.0F);
  const TensorView av(a.data(), {3, 4}), bv(b.data(), {4, 3});
  std::vector<C> x(32, C(1.0F, 0.0F));
  for (int form = 0; form < 2; ++form) {
    fault::arm(fault::Site::plan, 1);
    try {
      if (form == 0)
        (void)fft(TensorView(x.data(), {32}), {.execution = Execution::cpu(1)});
      else
        (void)matmul(av, bv, {.execution = Execution::cpu(1)});
      FAIL() << "no error from the planted plan-creation failure";
    } catch (const LibraryError& e) {
      EXPECT_EQ(e.status_name(), "CUPLAN_FAULT_INJECTED");
      EXPECT_NE(std::string(e.what()).find(form == 0 ? "fft: plan creation" : "matmul: plan creation"),
                std::string::npos)
          << e.what();
    }
    fault::disarm();
  }
  const Tensor y = fft(TensorView(x.data(), {32}), {.execution = Execution::cpu(1)});
  EXPECT_EQ(y.data<C>()[0], C(32.0F, 0.0F));
  const Tensor d = matmul(av, bv, {.execution = Execution::cpu(1)});
  EXPECT_EQ(d.data<float>()[0], 8.0F);
}

}  // namespace
}  // namespace cuplan
