// SPDX-License-Identifier: Apache-2.0
// The pinned host cache's bookkeeping (docs/staging.md), on plain heap memory: reuse of a fitting block, rounding,
// the bound on how much larger a reused block may be, the cap on idle bytes with least-recently-freed eviction,
// trimming, and the retry after a failed allocation.

#include "runtime/pinned_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <set>

namespace cuplan::testing {
namespace {

constexpr std::size_t KiB = std::size_t{1} << 10;
constexpr std::size_t MiB = std::size_t{1} << 20;

// Raw allocations of the fake backend: live pointers, and a switch that makes the next allocations fail.
std::set<void*> g_live;
int g_fail_next = 0;

void* fake_allocate(std::size_t bytes) {
  if (g_fail_next > 0) {
    --g_fail_next;
    return nullptr;
  }
  void* p = std::malloc(bytes);
  g_live.insert(p);
  return p;
}

void fake_free(void* p) noexcept {
  g_live.erase(p);
  std::free(p);
}

class PinnedCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_live.clear();
    g_fail_next = 0;
  }
  void TearDown() override { EXPECT_TRUE(g_live.empty()) << g_live.size() << " raw blocks leaked"; }
};

TEST_F(PinnedCacheTest, RoundsSmallRequestsToPagesAndLargeOnesTo2MiB) {
  EXPECT_EQ(detail::PinnedBlockCache::rounded(1), 4 * KiB);
  EXPECT_EQ(detail::PinnedBlockCache::rounded(4 * KiB + 1), 8 * KiB);
  EXPECT_EQ(detail::PinnedBlockCache::rounded(MiB), 2 * MiB);
  EXPECT_EQ(detail::PinnedBlockCache::rounded(3 * MiB), 4 * MiB);
  EXPECT_EQ(detail::PinnedBlockCache::rounded(4 * MiB), 4 * MiB);
}

TEST_F(PinnedCacheTest, ASecondRequestOfTheSameSizeReusesTheFreedBlock) {
  detail::PinnedBlockCache cache(&fake_allocate, &fake_free, 64 * MiB);
  void* first = cache.acquire(10 * MiB);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(cache.stats().live_bytes, 10 * MiB);
  cache.release(first);
  EXPECT_EQ(cache.stats().idle_bytes, 10 * MiB);
  EXPECT_EQ(cache.stats().live_bytes, 0u);
  void* second = cache.acquire(10 * MiB - 100);  // rounds to the same 10 MiB
  EXPECT_EQ(second, first);
  EXPECT_EQ(cache.stats().allocations, 1u);
  EXPECT_EQ(cache.stats().reuses, 1u);
  EXPECT_EQ(cache.stats().idle_bytes, 0u);
  cache.release(second);
  cache.trim();
  EXPECT_EQ(cache.stats().idle_bytes, 0u);
  EXPECT_EQ(cache.stats().frees, 1u);
}

TEST_F(PinnedCacheTest, PicksTheSmallestFittingBlockAndNeverOneMoreThanTwiceTheRequest) {
  detail::PinnedBlockCache cache(&fake_allocate, &fake_free, 256 * MiB);
  void* big = cache.acquire(64 * MiB);
  void* mid = cache.acquire(16 * MiB);
  void* small = cache.acquire(4 * MiB);
  for (void* p : {big, mid, small}) cache.release(p);
  EXPECT_EQ(cache.acquire(12 * MiB), mid);  // 16 fits and is the smallest that does; 4 is too small
  void* fresh = cache.acquire(20 * MiB);    // only 64 MiB is idle and fits, but more than twice 20: a new block
  EXPECT_NE(fresh, big);
  EXPECT_EQ(cache.stats().allocations, 4u);
  EXPECT_EQ(cache.acquire(40 * MiB), big);  // 64 <= 2 * 40
  EXPECT_EQ(cache.stats().reuses, 2u);
  for (void* p : {mid, fresh, big}) cache.release(p);
  cache.trim();
}

TEST_F(PinnedCacheTest, IdleBytesStayWithinTheCapLeastRecentlyFreedFirst) {
  detail::PinnedBlockCache cache(&fake_allocate, &fake_free, 20 * MiB);
  void* a = cache.acquire(8 * MiB);
  void* b = cache.acquire(8 * MiB);
  void* c = cache.acquire(8 * MiB);
  cache.release(a);
  cache.release(b);
  EXPECT_EQ(cache.stats().idle_bytes, 16 * MiB);
  EXPECT_EQ(cache.stats().frees, 0u);
  cache.release(c);  // 24 MiB idle > 20: `a`, freed first, goes
  EXPECT_EQ(cache.stats().idle_bytes, 16 * MiB);
  EXPECT_EQ(cache.stats().frees, 1u);
  EXPECT_EQ(g_live.count(a), 0u);
  EXPECT_EQ(g_live.count(b), 1u);
  EXPECT_EQ(g_live.count(c), 1u);
  cache.set_limit(8 * MiB);  // lowering the cap trims at once
  EXPECT_EQ(cache.stats().idle_bytes, 8 * MiB);
  EXPECT_EQ(g_live.count(c), 1u);
  EXPECT_EQ(cache.stats().idle_blocks, 1u);
  cache.trim();
  EXPECT_EQ(cache.stats().idle_blocks, 0u);
}

TEST_F(PinnedCacheTest, ABlockLargerThanTheCapIsFreedWhenReleased) {
  detail::PinnedBlockCache cache(&fake_allocate, &fake_free, 4 * MiB);
  void* p = cache.acquire(6 * MiB);
  ASSERT_NE(p, nullptr);
  cache.release(p);
  EXPECT_EQ(cache.stats().idle_bytes, 0u);
  EXPECT_EQ(cache.stats().frees, 1u);
}

TEST_F(PinnedCacheTest, AFailedAllocationTrimsTheIdleBlocksAndRetriesOnce) {
  detail::PinnedBlockCache cache(&fake_allocate, &fake_free, 64 * MiB);
  void* idle = cache.acquire(2 * MiB);
  cache.release(idle);
  g_fail_next = 1;
  void* p = cache.acquire(32 * MiB);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(cache.stats().idle_bytes, 0u);  // trimmed before the retry
  EXPECT_EQ(cache.stats().frees, 1u);
  g_fail_next = 2;
  EXPECT_EQ(cache.acquire(32 * MiB), nullptr);  // fails twice: null, the caller throws OutOfMemory
  cache.release(p);
  cache.trim();
}

TEST_F(PinnedCacheTest, ARequestTooLargeToRoundIsRefused) {
  detail::PinnedBlockCache cache(&fake_allocate, &fake_free, 64 * MiB);
  EXPECT_EQ(cache.acquire(std::numeric_limits<std::size_t>::max() - 5), nullptr);
  EXPECT_EQ(cache.stats().allocations, 0u);
}

TEST_F(PinnedCacheTest, ReleaseOfMemoryTheCacheDidNotHandOutIsIgnored) {
  detail::PinnedBlockCache cache(&fake_allocate, &fake_free, 64 * MiB);
  int other = 0;
  cache.release(&other);
  cache.release(nullptr);
  EXPECT_EQ(cache.stats().idle_bytes, 0u);
  EXPECT_EQ(cache.stats().idle_blocks, 0u);
}

}  // namespace
}  // namespace cuplan::testing
