// SPDX-License-Identifier: Apache-2.0
// The plan cache's byte bound, on plans that report their memory as FFT and Matmul plans do (held_bytes,
// release_idle_memory), so that the accounting runs without a GPU: bytes held stay within the limit over 200
// shapes, idle plans release their memory least recently used first, plans in use keep theirs, and byte pressure
// never costs a hit (plans stay cached; only their memory goes).

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "cuplan/execution.hpp"
#include "plan/cache/plan_cache.hpp"
#include "runtime/memory_uses.hpp"

namespace cuplan::detail {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

std::mutex g_released_mutex;
std::vector<int> g_released;  // ids of plans whose memory was released, in order

// A plan that holds `bytes` from its making (a planned work area) and again after each call that used it.
struct MemoryPlan : CachedPlan {
  MemoryPlan(int plan_id, std::size_t plan_bytes) : id(plan_id), bytes(plan_bytes), held(plan_bytes) {}
  std::size_t held_bytes() const noexcept override { return held; }
  int memory_device() const noexcept override { return 0; }
  void release_idle_memory() noexcept override {
    held = 0;
    std::lock_guard lock(g_released_mutex);
    g_released.push_back(id);
  }
  void run() { held = bytes; }  // an execute allocates what it needs again
  int id;
  std::size_t bytes;
  std::size_t held;
};

PlanKey key_for(int shape) {
  return PlanKey(PlanKind::fft).add(shape).add(Dims{shape, 3});
}

// One function-form call of `shape`: a hit runs the cached plan, a miss makes one; true for a hit.
bool call(int shape, std::size_t bytes) {
  PlanLease lease = acquire_plan(key_for(shape), [&] { return std::make_unique<MemoryPlan>(shape, bytes); });
  static_cast<MemoryPlan*>(lease.get())->run();
  return lease.hit();
}

class PlanCacheBytesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_cache::clear();
    plan_cache::set_capacity(64);
    plan_cache::set_byte_limit(plan_cache::no_byte_limit);
    plan_cache::reset_stats();
    std::lock_guard lock(g_released_mutex);
    g_released.clear();
  }
  void TearDown() override {
    plan_cache::clear();
    plan_cache::set_capacity(64);
    plan_cache::set_byte_limit(plan_cache::no_byte_limit);
  }
};

TEST_F(PlanCacheBytesTest, TwoHundredShapesStayWithinTheByteLimit) {
  plan_cache::set_capacity(256);
  const std::size_t limit = 64 * MiB;
  plan_cache::set_byte_limit(limit);
  std::size_t most = 0;
  for (int shape = 0; shape < 200; ++shape) {
    EXPECT_FALSE(call(shape, MiB * static_cast<std::size_t>(1 + shape % 9)));
    const PlanCacheStats stats = plan_cache::stats();
    EXPECT_LE(stats.bytes, limit) << "after shape " << shape;
    most = std::max(most, stats.bytes);
  }
  const PlanCacheStats stats = plan_cache::stats();
  EXPECT_EQ(stats.size, 200u);  // byte pressure released memory, it destroyed no plan
  EXPECT_EQ(stats.evictions, 0u);
  EXPECT_EQ(stats.byte_limit, limit);
  EXPECT_GT(stats.work_areas_released, 100u);
  EXPECT_GT(most, limit - 9 * MiB);  // the limit is used, not just respected
  // Without a limit the same calls hold the sum of every plan's memory.
  plan_cache::clear();
  plan_cache::set_byte_limit(plan_cache::no_byte_limit);
  std::size_t sum = 0;
  for (int shape = 0; shape < 200; ++shape) {
    call(shape, MiB * static_cast<std::size_t>(1 + shape % 9));
    sum += MiB * static_cast<std::size_t>(1 + shape % 9);
  }
  EXPECT_EQ(plan_cache::stats().bytes, sum);
}

TEST_F(PlanCacheBytesTest, HitsAreUnchangedForAWorkingSetThatFits) {
  // The same sequence of calls without and with a limit the working set fits in: same hits, nothing released.
  auto run_sequence = [] {
    plan_cache::reset_stats();
    for (int round = 0; round < 50; ++round)
      for (int shape = 0; shape < 8; ++shape) call(1000 + shape, 2 * MiB);
    return plan_cache::stats();
  };
  const PlanCacheStats unbounded = run_sequence();
  plan_cache::clear();
  plan_cache::set_byte_limit(16 * MiB);  // exactly the working set
  const PlanCacheStats bounded = run_sequence();
  EXPECT_EQ(bounded.hits, unbounded.hits);
  EXPECT_EQ(bounded.misses, unbounded.misses);
  EXPECT_EQ(bounded.hits, 8u * 49u);
  EXPECT_EQ(bounded.work_areas_released, 0u);
  EXPECT_EQ(bounded.bytes, 16 * MiB);
  // A working set twice the limit keeps its hits as well: idle plans give their memory back, not their place.
  plan_cache::clear();
  plan_cache::set_byte_limit(8 * MiB);
  const PlanCacheStats tight = run_sequence();
  EXPECT_EQ(tight.hits, unbounded.hits);
  EXPECT_GT(tight.work_areas_released, 0u);
  EXPECT_LE(tight.bytes, 8 * MiB);
}

TEST_F(PlanCacheBytesTest, IdlePlansReleaseTheirMemoryLeastRecentlyUsedFirst) {
  plan_cache::set_byte_limit(9 * MiB);
  call(0, 4 * MiB);
  call(1, 4 * MiB);
  call(2, 4 * MiB);  // 12 MiB: the least recently used, 0, releases
  {
    std::lock_guard lock(g_released_mutex);
    EXPECT_EQ(g_released, std::vector<int>({0}));
  }
  EXPECT_EQ(plan_cache::stats().bytes, 8 * MiB);
  EXPECT_TRUE(call(0, 4 * MiB));  // still cached: a hit, which allocates again; now 1 is the oldest
  {
    std::lock_guard lock(g_released_mutex);
    EXPECT_EQ(g_released, std::vector<int>({0, 1}));
  }
  EXPECT_EQ(plan_cache::stats().bytes, 8 * MiB);
}

TEST_F(PlanCacheBytesTest, PlansInUseKeepTheirMemoryUntilTheyComeBack) {
  plan_cache::set_byte_limit(4 * MiB);
  PlanLease busy = acquire_plan(key_for(7), [] { return std::make_unique<MemoryPlan>(7, 16 * MiB); });
  call(8, 2 * MiB);  // over the limit: the idle plan 8 gives its memory back, the busy one keeps running with its own
  EXPECT_EQ(plan_cache::stats().bytes, 16 * MiB);
  EXPECT_EQ(static_cast<MemoryPlan*>(busy.get())->held, 16 * MiB);
  {
    std::lock_guard lock(g_released_mutex);
    EXPECT_EQ(g_released, std::vector<int>({8}));
  }
  busy = PlanLease();  // back and idle: now it releases too
  EXPECT_EQ(plan_cache::stats().bytes, 0u);
  EXPECT_EQ(plan_cache::stats().size, 2u);
  std::lock_guard lock(g_released_mutex);
  EXPECT_EQ(g_released, std::vector<int>({8, 7}));
}

TEST_F(PlanCacheBytesTest, LoweringTheLimitReleasesAtOnceAndClearForgetsTheBytes) {
  for (int shape = 0; shape < 4; ++shape) call(shape, 3 * MiB);
  EXPECT_EQ(plan_cache::stats().bytes, 12 * MiB);
  plan_cache::set_byte_limit(6 * MiB);
  EXPECT_EQ(plan_cache::stats().bytes, 6 * MiB);
  EXPECT_EQ(plan_cache::stats().work_areas_released, 2u);
  // The memory report's count (the plans report device 0): four plans, the bytes they hold.
  EXPECT_EQ(memory_use(MemoryUse::cached_plan, 0).items, 4u);
  EXPECT_EQ(memory_use(MemoryUse::cached_plan, 0).bytes, 6 * MiB);
  plan_cache::clear();
  EXPECT_EQ(plan_cache::stats().bytes, 0u);
  EXPECT_EQ(plan_cache::stats().size, 0u);
  EXPECT_EQ(memory_use(MemoryUse::cached_plan, 0).items, 0u);
  EXPECT_EQ(memory_use(MemoryUse::cached_plan, 0).bytes, 0u);
}

}  // namespace
}  // namespace cuplan::detail
