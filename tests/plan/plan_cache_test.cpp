// SPDX-License-Identifier: Apache-2.0
// The shared plan cache: hits, misses, LRU eviction, busy plans, clear() while in use, many threads.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "cuplan/execution.hpp"
#include "plan/cache/plan_cache.hpp"

namespace cuplan::detail {
namespace {

std::atomic<int> g_live_plans{0};

struct CountingPlan : CachedPlan {
  explicit CountingPlan(int plan_id) : id(plan_id) { ++g_live_plans; }
  ~CountingPlan() override { --g_live_plans; }
  int id;
};

PlanKey key_for(int value) {
  return PlanKey(PlanKind::fft).add(value).add(Dims{4, 8});
}

class PlanCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_cache::clear();
    plan_cache::set_capacity(64);
    plan_cache::reset_stats();
  }
  void TearDown() override {
    plan_cache::clear();
    plan_cache::set_capacity(64);
  }
};

TEST_F(PlanCacheTest, KeysCompareByEveryWord) {
  EXPECT_EQ(key_for(1), key_for(1));
  EXPECT_EQ(key_for(1).hash(), key_for(1).hash());
  EXPECT_FALSE(key_for(1) == key_for(2));
  EXPECT_FALSE(PlanKey(PlanKind::fft).add(1) == PlanKey(PlanKind::matmul).add(1));
  // The length is part of the key: {4} then {8} differs from {4, 8}.
  EXPECT_FALSE(PlanKey(PlanKind::fft).add(Dims{4}).add(Dims{8}) == PlanKey(PlanKind::fft).add(Dims{4, 8}));
}

TEST_F(PlanCacheTest, SecondAcquireOfSameKeyIsAHitWithTheSamePlan) {
  int made = 0;
  auto make = [&] { return std::make_unique<CountingPlan>(++made); };
  CachedPlan* first = nullptr;
  {
    PlanLease lease = acquire_plan(key_for(7), make);
    EXPECT_FALSE(lease.hit());
    first = lease.get();
  }
  {
    PlanLease lease = acquire_plan(key_for(7), make);
    EXPECT_TRUE(lease.hit());
    EXPECT_EQ(lease.get(), first);
  }
  EXPECT_EQ(made, 1);
  auto stats = plan_cache::stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.size, 1u);
}

TEST_F(PlanCacheTest, BusyPlanIsNotSharedBetweenTwoLeases) {
  int made = 0;
  auto make = [&] { return std::make_unique<CountingPlan>(++made); };
  PlanLease a = acquire_plan(key_for(3), make);
  PlanLease b = acquire_plan(key_for(3), make);
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(made, 2);
}

TEST_F(PlanCacheTest, LeastRecentlyUsedIdlePlansAreEvictedBeyondCapacity) {
  plan_cache::set_capacity(2);
  for (int i = 0; i < 3; ++i) acquire_plan(key_for(i), [&] { return std::make_unique<CountingPlan>(i); });
  auto stats = plan_cache::stats();
  EXPECT_EQ(stats.size, 2u);
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(g_live_plans.load(), 2);
  // Key 0 was the least recently used: it was evicted, 1 and 2 are hits.
  EXPECT_TRUE(try_acquire_plan(key_for(2)).hit());
  EXPECT_TRUE(try_acquire_plan(key_for(1)).hit());
  EXPECT_EQ(try_acquire_plan(key_for(0)).get(), nullptr);
}

TEST_F(PlanCacheTest, ClearDestroysIdlePlansAndPlansInUseWhenReturned) {
  PlanLease busy = acquire_plan(key_for(1), [] { return std::make_unique<CountingPlan>(1); });
  acquire_plan(key_for(2), [] { return std::make_unique<CountingPlan>(2); });
  EXPECT_EQ(g_live_plans.load(), 2);
  plan_cache::clear();
  EXPECT_EQ(g_live_plans.load(), 1);  // the idle one is gone, the busy one still works
  ASSERT_NE(busy.get(), nullptr);
  busy = PlanLease();
  EXPECT_EQ(g_live_plans.load(), 0);
  EXPECT_EQ(plan_cache::stats().size, 0u);
}

TEST_F(PlanCacheTest, DiscardedPlanIsNotReturned) {
  {
    PlanLease lease = acquire_plan(key_for(5), [] { return std::make_unique<CountingPlan>(5); });
    lease.discard();
  }
  EXPECT_EQ(g_live_plans.load(), 0);
  EXPECT_EQ(try_acquire_plan(key_for(5)).get(), nullptr);
}

TEST_F(PlanCacheTest, ManyThreadsNeverShareAPlanAtOnce) {
  std::atomic<int> made{0};
  std::atomic<bool> shared{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        PlanLease lease = acquire_plan(key_for(i % 3), [&] { return std::make_unique<CountingPlan>(++made); });
        auto* plan = static_cast<CountingPlan*>(lease.get());
        // Mark the plan in use; finding the mark already set means two threads hold one plan.
        if (plan->id < 0) shared = true;
        plan->id = -plan->id;
        std::this_thread::yield();
        plan->id = -plan->id;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(shared.load());
  EXPECT_LE(made.load(), 8 * 3);
  auto stats = plan_cache::stats();
  EXPECT_EQ(stats.hits + stats.misses, 16000u);
}

}  // namespace
}  // namespace cuplan::detail
