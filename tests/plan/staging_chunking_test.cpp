// SPDX-License-Identifier: Apache-2.0
// The staging engine's chunk arithmetic and host copy pool (CPU only): counts, remainders, the memory limit and
// its errors, and parallel strided copies against the serial reference.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "cuplan/errors.hpp"
#include "plan/staging/chunking.hpp"
#include "plan/staging/host_copy_pool.hpp"
#include "support/misuse_table.hpp"

namespace cuplan::detail::staging {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

ChunkRequest request(std::int64_t units, std::size_t unit_bytes, std::size_t limit, std::size_t fixed = 0) {
  ChunkRequest r;
  r.units = units;
  r.unit_bytes = unit_bytes;
  r.limit = limit;
  r.fixed_bytes = fixed;
  r.who = "FFT";
  return r;
}

// Every unit is covered exactly once, chunks are contiguous and within the limit.
void expect_consistent(const ChunkPlan& plan, const ChunkRequest& r) {
  std::int64_t covered = 0;
  for (std::int64_t i = 0; i < plan.count; ++i) {
    EXPECT_EQ(plan.begin(i), covered);
    EXPECT_GE(plan.size(i), 1);
    EXPECT_LE(plan.size(i), plan.chunk);
    covered += plan.size(i);
  }
  EXPECT_EQ(covered, r.units);
  EXPECT_LE(plan.device_bytes(r), r.limit);
  EXPECT_GE(plan.slots, 1);
  EXPECT_LE(plan.slots, max_slots);
}

TEST(StagingChunking, SmallOperandIsOneChunk) {
  const auto r = request(64, 1024, std::size_t{1} << 30);
  const ChunkPlan plan = plan_chunks(r);
  EXPECT_EQ(plan.count, 1);
  EXPECT_EQ(plan.chunk, 64);
  EXPECT_EQ(plan.last, 64);
  EXPECT_EQ(plan.slots, 1);
  expect_consistent(plan, r);
}

TEST(StagingChunking, LargeOperandSplitsNearTheTarget) {
  // 16384 rows of 64 KiB (in + out): 1 GiB, target 32 MiB per slot -> 512 rows per chunk, 32 chunks.
  auto r = request(16384, 64 * 1024, std::size_t{8} << 30);
  r.target_bytes = 32 * MiB;
  const ChunkPlan plan = plan_chunks(r);
  EXPECT_EQ(plan.chunk, 512);
  EXPECT_EQ(plan.count, 32);
  EXPECT_EQ(plan.last, 512);
  EXPECT_EQ(plan.slots, max_slots);
  expect_consistent(plan, r);
}

TEST(StagingChunking, RemainderIsBalanced) {
  // 10 units, room for 3 slots of 4 units: 3 chunks of 4, 4, 2 -> balanced to 4, 4, 2 (ceil(10 / 3) = 4).
  const auto r = request(10, MiB, 12 * MiB);
  ChunkRequest small_target = r;
  small_target.target_bytes = 4 * MiB;
  const ChunkPlan plan = plan_chunks(small_target);
  EXPECT_EQ(plan.count, 3);
  EXPECT_EQ(plan.chunk, 4);
  EXPECT_EQ(plan.last, 2);
  expect_consistent(plan, small_target);
  // 9 units under the same limit: three even chunks of 3, not 4 + 4 + 1.
  small_target.units = 9;
  const ChunkPlan even = plan_chunks(small_target);
  EXPECT_EQ(even.count, 3);
  EXPECT_EQ(even.chunk, 3);
  EXPECT_EQ(even.last, 3);
  expect_consistent(even, small_target);
}

TEST(StagingChunking, LimitBoundsTheChunkAndTheSlots) {
  // Room for 5 units in all: 3 slots cannot hold 2 each, so 3 slots of 1 unit.
  auto r = request(100, MiB, 5 * MiB + 100);
  ChunkPlan plan = plan_chunks(r);
  EXPECT_EQ(plan.chunk, 1);
  EXPECT_EQ(plan.count, 100);
  EXPECT_EQ(plan.slots, 3);
  expect_consistent(plan, r);
  // Room for one unit only: one slot, serialised chunks.
  r.limit = MiB + MiB / 2;
  plan = plan_chunks(r);
  EXPECT_EQ(plan.chunk, 1);
  EXPECT_EQ(plan.slots, 1);
  expect_consistent(plan, r);
}

TEST(StagingChunking, FixedBytesCountAgainstTheLimit) {
  const auto r = request(1000, MiB, 40 * MiB, 10 * MiB);  // 30 MiB room, 3 slots -> 10 units per chunk
  const ChunkPlan plan = plan_chunks(r);
  EXPECT_EQ(plan.chunk, 10);
  EXPECT_EQ(plan.count, 100);
  expect_consistent(plan, r);
  EXPECT_EQ(minimum_limit(r), 11 * MiB);
}

TEST(StagingChunking, LimitTooSmallNamesTheSmallestThatWorks) {
  const auto r = request(8, 3000, 4000, 2000);
  cuplan::testing::check_row({"limit_too_small",
                              [&] { (void)plan_chunks(r); },
                              cuplan::testing::Expect::invalid_argument,
                              {"FFT", "device_memory_limit", "4000", "5000"}});  // 3000 per unit + 2000 fixed
}

TEST(StagingChunking, BadRequestsAreRejected) {
  EXPECT_THROW((void)plan_chunks(request(-1, 8, MiB)), InvalidArgument);
  EXPECT_THROW((void)plan_chunks(request(4, 0, MiB)), InvalidArgument);
  const ChunkPlan none = plan_chunks(request(0, 8, MiB));
  EXPECT_EQ(none.count, 0);
}

TEST(StagingChunking, DefaultLimitIsHalfTheFreeMemory) {
  EXPECT_EQ(default_limit(std::size_t{80} << 30), std::size_t{40} << 30);
  EXPECT_EQ(default_limit(0), 0u);
}

TEST(HostCopyPool, RunsEveryTaskOnce) {
  std::vector<int> hits(1000, 0);
  HostCopyPool::instance().parallel_for(static_cast<std::int64_t>(hits.size()), [&](std::int64_t i) { ++hits[i]; });
  for (int h : hits) EXPECT_EQ(h, 1);
}

TEST(HostCopyPool, ParallelStridedCopyMatchesTheSerialCopy) {
  // A transposing copy large enough to be split: [1024, 600] int32, source column-major, destination row-major.
  const std::int64_t rows = 1024, cols = 600;
  std::vector<std::int32_t> src(rows * cols), dst(rows * cols, -1), reference(rows * cols, -2);
  std::iota(src.begin(), src.end(), 0);
  const Shape shape{rows, cols};
  const CopyGeometry g = reduce_copy(shape, Strides{1, rows}, Strides{cols, 1});
  parallel_copy_strided(g, src.data(), dst.data(), sizeof(std::int32_t));
  copy_strided_host(g, src.data(), reference.data(), sizeof(std::int32_t));
  EXPECT_EQ(dst, reference);
  EXPECT_EQ(dst[1 * cols + 0], src[1]);  // dst[1][0] = src(1, 0) at column-major offset 1
}

TEST(HostCopyPool, ParallelContiguousCopy) {
  std::vector<std::uint8_t> src(5 * MiB + 3), dst(src.size(), 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 1);
  const Shape shape{static_cast<std::int64_t>(src.size())};
  parallel_copy_strided(reduce_copy(shape, Strides{1}, Strides{1}), src.data(), dst.data(), 1);
  EXPECT_EQ(dst, src);
}

TEST(HostCopyPool, BlocksFollowTheSplitSideAndEachEndsOnce) {
  // Dense on both sides: blocks of about 1 MiB of a 5 MiB + 16 row copy, capped at 8.
  const std::int64_t rows = 1283, cols = 1024;  // int32 rows of 4 KiB
  const CopyGeometry dense = reduce_copy(Shape{rows, cols}, Strides{cols, 1}, Strides{cols, 1});
  EXPECT_EQ(contiguous_blocks(dense, 4, false, MiB, 8), 5);
  EXPECT_EQ(contiguous_blocks(dense, 4, true, MiB / 4, 8), 8);
  EXPECT_EQ(contiguous_blocks(dense, 4, true, 64 * MiB, 8), 1);
  // Transposed destination: axis 0 of the geometry is not the source's outermost, so the source is not split.
  const CopyGeometry transposed = reduce_copy(Shape{rows, cols}, Strides{cols, 1}, Strides{1, rows});
  EXPECT_EQ(contiguous_blocks(transposed, 4, true, MiB, 8), 1);
  EXPECT_GT(contiguous_blocks(transposed, 4, false, MiB, 8), 1);  // the destination is dense along axis 0

  std::vector<std::int32_t> src(static_cast<std::size_t>(rows * cols)), dst(src.size(), -1);
  std::iota(src.begin(), src.end(), 0);
  for (const CopyGeometry& g : {dense, transposed}) {
    std::fill(dst.begin(), dst.end(), -1);
    std::vector<std::int32_t> reference(dst.size(), -1);
    const int blocks = 5;
    std::vector<std::atomic<int>> ended(blocks), begun(blocks);
    std::atomic<bool> copied_after_end{false};
    parallel_copy_blocks(
        g, src.data(), dst.data(), sizeof(std::int32_t), blocks,
        [&](int b) {
          begun[static_cast<std::size_t>(b)].fetch_add(1);
          if (ended[static_cast<std::size_t>(b)].load() != 0) copied_after_end = true;
        },
        [&](int b) { ended[static_cast<std::size_t>(b)].fetch_add(1); });
    copy_strided_host(g, src.data(), reference.data(), sizeof(std::int32_t));
    EXPECT_EQ(dst, reference);
    EXPECT_FALSE(copied_after_end);
    std::int64_t covered = 0;
    for (int b = 0; b < blocks; ++b) {
      EXPECT_EQ(ended[static_cast<std::size_t>(b)].load(), 1) << "block " << b;
      EXPECT_GE(begun[static_cast<std::size_t>(b)].load(), 1) << "block " << b;
      const auto [first, last] = block_rows(g, blocks, b);
      EXPECT_EQ(first, covered);
      covered = last;
    }
    EXPECT_EQ(covered, g.shape[0]);
  }
}

TEST(HostCopyPool, MoreBlocksThanRowsAndSmallCopies) {
  // No more blocks than the geometry's axis 0 has rows (5: the destination's outermost axis); a copy below the parallel
  // threshold still calls both callbacks per block.
  std::vector<std::int32_t> src(3 * 5), dst(src.size(), -1);
  std::iota(src.begin(), src.end(), 1);
  const CopyGeometry g = reduce_copy(Shape{3, 5}, Strides{5, 1}, Strides{1, 3});
  std::atomic<int> ends{0};
  parallel_copy_blocks(g, src.data(), dst.data(), sizeof(std::int32_t), 8, {}, [&](int) { ends.fetch_add(1); });
  ASSERT_EQ(g.shape[0], 5);
  EXPECT_EQ(ends.load(), 5);
  std::vector<std::int32_t> reference(dst.size(), -1);
  copy_strided_host(g, src.data(), reference.data(), sizeof(std::int32_t));
  EXPECT_EQ(dst, reference);
}

TEST(HostCopyPool, StartedJobRunsWhileTheCallerWorksAndANestedJobRunsAlone) {
  // A started job holds the pool until its join; a job asked for meanwhile (here by the same thread, as the staging
  // engine's caller could) runs on the asking thread alone. Every task of both runs once.
  std::vector<std::atomic<int>> outer(256), inner(64);
  const std::function<void(std::int64_t)> outer_task = [&](std::int64_t i) {
    outer[static_cast<std::size_t>(i)].fetch_add(1);
  };
  {
    HostCopyPool::Job job;
    HostCopyPool::instance().start(job, static_cast<std::int64_t>(outer.size()), outer_task);
    HostCopyPool::instance().parallel_for(static_cast<std::int64_t>(inner.size()),
                                          [&](std::int64_t i) { inner[static_cast<std::size_t>(i)].fetch_add(1); });
    for (const auto& hit : inner) EXPECT_EQ(hit.load(), 1);
    job.join();
    for (const auto& hit : outer) EXPECT_EQ(hit.load(), 1);
    job.join();  // idempotent
  }
  for (const auto& hit : outer) EXPECT_EQ(hit.load(), 1);
  // The pool is free again: a later job runs every task once.
  std::vector<std::atomic<int>> later(100);
  HostCopyPool::instance().parallel_for(static_cast<std::int64_t>(later.size()),
                                        [&](std::int64_t i) { later[static_cast<std::size_t>(i)].fetch_add(1); });
  for (const auto& hit : later) EXPECT_EQ(hit.load(), 1);
}

TEST(HostCopyPool, BlockCopyStartedAndJoinedLaterMatchesTheSerialCopy) {
  // The staging engine starts a chunk's pack, enqueues other work, then joins: the copy is whole after join() (or
  // after the destructor, which joins), and each block's end callback runs once, also for a copy below the parallel
  // threshold.
  const std::int64_t rows = 1283, cols = 1024;
  const CopyGeometry dense = reduce_copy(Shape{rows, cols}, Strides{cols, 1}, Strides{cols, 1});
  const CopyGeometry tiny = reduce_copy(Shape{3, 5}, Strides{5, 1}, Strides{1, 3});
  std::vector<std::int32_t> src(static_cast<std::size_t>(rows * cols));
  std::iota(src.begin(), src.end(), 7);
  for (const CopyGeometry& g : {dense, tiny}) {
    for (const bool by_destructor : {false, true}) {
      std::vector<std::int32_t> dst(static_cast<std::size_t>(g.numel), -1), reference(dst.size(), -1);
      std::vector<std::atomic<int>> ended(4);
      {
        BlockCopy copy(g, src.data(), dst.data(), sizeof(std::int32_t), 4, {},
                       [&](int b) { ended[static_cast<std::size_t>(b)].fetch_add(1); });
        if (!by_destructor) copy.join();
      }
      copy_strided_host(g, src.data(), reference.data(), sizeof(std::int32_t));
      EXPECT_EQ(dst, reference) << "rows " << g.shape[0] << (by_destructor ? ", joined by the destructor" : "");
      const int blocks = static_cast<int>(std::min<std::int64_t>(4, g.shape[0]));  // one end per block, small too
      for (int b = 0; b < 4; ++b)
        EXPECT_EQ(ended[static_cast<std::size_t>(b)].load(), b < blocks ? 1 : 0) << "block " << b;
    }
  }
}

TEST(HostCopyPool, StreamingStoresCopyTheSameBytesAtAnyAlignment) {
  // The unpack into the caller's memory writes with non-temporal stores: a contiguous copy split over the pool,
  // destinations 0 to 17 bytes past an alignment boundary, lengths that do not divide by 16 or 64, a tiny one too.
  std::vector<unsigned char> src((std::size_t{3} << 20) + 77);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (const std::size_t bytes : {src.size(), std::size_t{100}}) {
    for (const std::size_t shift : {0, 1, 8, 15, 17}) {
      std::vector<unsigned char> dst(bytes + 64, 0xAB);
      const CopyGeometry g = reduce_copy(Shape{static_cast<std::int64_t>(bytes)}, Strides{1}, Strides{1});
      std::atomic<int> ends{0};
      BlockCopy(
          g, src.data(), dst.data() + shift, 1, 4, {}, [&](int) { ends.fetch_add(1); }, Stores::streaming)
          .join();
      EXPECT_TRUE(std::equal(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(bytes),
                             dst.begin() + static_cast<std::ptrdiff_t>(shift)))
          << bytes << " bytes at offset " << shift;
      for (std::size_t i = 0; i < shift; ++i) EXPECT_EQ(dst[i], 0xAB) << "before the destination, byte " << i;
      for (std::size_t i = shift + bytes; i < dst.size(); ++i) EXPECT_EQ(dst[i], 0xAB) << "past the end, byte " << i;
      EXPECT_EQ(ends.load(), 4);
    }
  }
}

TEST(HostCopyPool, WidthFollowsTheAffinityMaskAndTheEnvironment) {
  bool valid = false;
  // Default: the CPUs this process may use, at most 16.
  EXPECT_EQ(host_copy_width(nullptr, 4, &valid), 4);
  EXPECT_TRUE(valid);
  EXPECT_EQ(host_copy_width(nullptr, 64, &valid), 16);
  EXPECT_EQ(host_copy_width(nullptr, 0, &valid), 1);
  EXPECT_EQ(host_copy_width("", 8, &valid), 8);
  EXPECT_TRUE(valid);
  // A valid setting wins, above the default cap too.
  EXPECT_EQ(host_copy_width("1", 8, &valid), 1);
  EXPECT_TRUE(valid);
  EXPECT_EQ(host_copy_width("32", 8, &valid), 32);
  EXPECT_EQ(host_copy_width("256", 8, &valid), 256);
  // Anything else is reported and the default used.
  for (const char* bad : {"0", "-3", "257", "4x", "x", " 4", "99999999999999999999", "1.5"}) {
    EXPECT_EQ(host_copy_width(bad, 6, &valid), 6) << bad;
    EXPECT_FALSE(valid) << bad;
  }
  EXPECT_GE(HostCopyPool::instance().width(), 1);
}

}  // namespace
}  // namespace cuplan::detail::staging
