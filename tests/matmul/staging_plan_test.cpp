// SPDX-License-Identifier: Apache-2.0
// The chunk plan of host-operand Matmul under device_memory_limit (mm::plan_staging), on the CPU: every element of
// D is covered by exactly one tile (located by its block), every step reads blocks that exist, the device bytes of
// each plan stay within the limit, and a limit below the smallest one that works names it.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuplan/errors.hpp"
#include "matmul/routes/staging_plan.hpp"

namespace cuplan::detail::mm {
namespace {

constexpr std::size_t KiB = 1024;

StagingRequest request(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, std::size_t limit,
                       bool b_batched = false, bool c = false, bool bias = false, std::size_t element = 4) {
  return {.m = m,
          .n = n,
          .k = k,
          .batch = batch,
          .b_batched = b_batched,
          .a_element = element,
          .b_element = element,
          .d_element = element,
          .c = c,
          .bias = bias,
          .workspace = 4096,
          .limit = limit};
}

// Checks the invariants of a plan and returns it.
StagingPlan check(const StagingRequest& r) {
  const StagingPlan plan = plan_staging(r);
  EXPECT_LE(plan.device_bytes, r.limit) << to_string(plan.schedule);
  EXPECT_GE(plan.slots, 1);
  EXPECT_LE(plan.slots, staging::max_slots);
  // Each element of D is written by one tile; tiles never exceed the planned largest tile.
  std::vector<int> covered(static_cast<std::size_t>(r.batch * r.m * r.n), 0);
  bool b_ready = false;  // a resident block precedes the tiles that read it
  std::int64_t tiles = 0;
  for (const StagingStep& s : plan.steps) {
    if (s.kind != StagingStep::Kind::tile) {
      b_ready = true;
      EXPECT_GE(s.rows, 1);
      EXPECT_LE(static_cast<std::size_t>(s.rows) *
                    (s.kind == StagingStep::Kind::resident_b   ? static_cast<std::size_t>(s.cols) * r.b_element
                     : s.kind == StagingStep::Kind::resident_a ? static_cast<std::size_t>(r.k) * r.a_element
                                                               : r.d_element),
                plan.piece_bytes);
      continue;
    }
    ++tiles;
    if (plan.schedule != StagingSchedule::batches || !r.b_batched) {
      EXPECT_TRUE(b_ready) << "a tile before its block";
    }
    EXPECT_LE(s.batches, plan.batch_chunk);
    EXPECT_LE(s.rows, plan.row_chunk);
    EXPECT_LE(s.cols, plan.col_chunk);
    // The tile's place is its block (the staging engine's one description of a chunk): its elements of a
    // row-major D start at the block's offset.
    const staging::ChunkBlock block = s.block();
    const Strides d_strides{r.m * r.n, r.n, 1};
    for (std::int64_t b = 0; b < block.extent[0]; ++b)
      for (std::int64_t i = 0; i < block.extent[1]; ++i)
        for (std::int64_t j = 0; j < block.extent[2]; ++j) {
          EXPECT_TRUE(block.begin[0] + b < r.batch && block.begin[1] + i < r.m && block.begin[2] + j < r.n);
          ++covered[static_cast<std::size_t>(block.offset(d_strides) + (b * r.m + i) * r.n + j)];
        }
  }
  EXPECT_EQ(tiles, plan.tiles);
  for (int c : covered) EXPECT_EQ(c, 1) << "an element of D not covered exactly once";
  return plan;
}

TEST(MatmulStagingPlan, RowsThatDoNotDivideByTheChunk) {
  // B (20 x 24 f32, 1920 bytes) stays; 37 rows of A and D (176 bytes each) within 2 KiB of slots.
  const std::size_t limit = 4096 + 256 * 17 + 1920 + 2 * KiB;
  const StagingPlan plan = check(request(37, 24, 20, 1, limit));
  EXPECT_EQ(plan.schedule, StagingSchedule::rows);
  EXPECT_GT(plan.tiles, 1);
  EXPECT_NE(37 % plan.row_chunk, 0) << "the test wants a shorter last chunk";
}

TEST(MatmulStagingPlan, BatchThatDoesNotDivideTakesWholeEntries) {
  // 7 entries of 8 x 8 x 8 f32 with a batched B: 768 bytes per entry (A, B, D), two entries per tile.
  const std::size_t limit = 4096 + 256 * 17 + 3 * 2 * 768;
  const StagingPlan plan = check(request(8, 8, 8, 7, limit, true));
  EXPECT_EQ(plan.schedule, StagingSchedule::batches);
  EXPECT_TRUE(plan.b_in_slot);
  EXPECT_GT(plan.batch_chunk, 1);
  EXPECT_NE(7 % plan.batch_chunk, 0);
  EXPECT_EQ(plan.resident_bytes, 0u);
}

TEST(MatmulStagingPlan, BroadcastBStaysOnTheDeviceForEveryEntry) {
  const std::size_t limit = 4096 + 256 * 17 + 256 + 3 * 2 * 512;
  const StagingPlan plan = check(request(8, 8, 8, 5, limit, false));
  EXPECT_EQ(plan.schedule, StagingSchedule::batches);
  EXPECT_FALSE(plan.b_in_slot);
  EXPECT_GT(plan.resident_bytes, 0u);
  int b_uploads = 0;
  for (const StagingStep& s : plan.steps) b_uploads += s.kind == StagingStep::Kind::resident_b ? 1 : 0;
  EXPECT_GE(b_uploads, 1);
}

TEST(MatmulStagingPlan, EntryTooLargeSplitsRowsWithinIt) {
  // 3 entries of 64 x 16 x 16 f64: an entry (A 8 KiB, B 2 KiB, D 8 KiB) does not fit next to two others.
  const std::size_t limit = 4096 + 256 * 17 + 2048 + 3 * 4 * 256;
  const StagingPlan plan = check(request(64, 16, 16, 3, limit, true, false, false, 8));
  EXPECT_EQ(plan.schedule, StagingSchedule::rows);
  for (const StagingStep& s : plan.steps) EXPECT_EQ(s.batches, 1);
  int b_uploads_first_row = 0;
  for (const StagingStep& s : plan.steps)
    b_uploads_first_row += s.kind == StagingStep::Kind::resident_b && s.row_begin == 0 ? 1 : 0;
  EXPECT_EQ(b_uploads_first_row, 3) << "each entry's B is uploaded once";
}

TEST(MatmulStagingPlan, BAboveTheLimitSplitsN) {
  // B is 256 x 256 f32 (256 KiB) under a 100 KB limit.
  const StagingPlan plan = check(request(40, 256, 256, 1, 100000));
  EXPECT_TRUE(plan.schedule == StagingSchedule::b_columns || plan.schedule == StagingSchedule::a_rows);
  EXPECT_LT(plan.col_chunk, 256);
  EXPECT_GT(plan.tiles, 1);
}

TEST(MatmulStagingPlan, NSplitPicksTheScheduleThatMovesFewerBytes) {
  // With resident blocks of about the same width, keeping B's columns moves B + A x (column blocks) and keeping A's
  // rows moves A + B x (row blocks); the products of the second terms are equal, so the smaller operand wins.
  // Few rows of A (8 x 64, 2 KiB) against a wide B (64 x 4096, 1 MiB): A's rows stay, B streams past once.
  const StagingPlan wide = check(request(8, 4096, 64, 1, 200000));
  EXPECT_EQ(wide.schedule, StagingSchedule::a_rows);
  EXPECT_EQ(wide.moved_bytes, std::size_t{8 * 64 + 64 * 4096 + 8 * 4096} * 4) << "every byte moves once";
  // A tall A (8192 x 64, 2 MiB) against B (64 x 1024, 256 KiB): B's columns stay, A is re-read per block.
  const StagingPlan tall = check(request(8192, 1024, 64, 1, 200000));
  EXPECT_EQ(tall.schedule, StagingSchedule::b_columns);
}

TEST(MatmulStagingPlan, NSplitWithBatchCAndBias) {
  for (bool b_batched : {false, true})
    for (bool c : {false, true}) {
      const StagingPlan plan = check(request(33, 97, 40, 3, 4096 + 256 * 17 + 9000, b_batched, c, true, 8));
      EXPECT_TRUE(plan.schedule == StagingSchedule::b_columns || plan.schedule == StagingSchedule::a_rows);
      if (c) {
        EXPECT_GT(plan.slot_bias, plan.slot_c);
      }
    }
}

TEST(MatmulStagingPlan, EveryPlanStaysWithinItsLimit) {
  for (std::int64_t k : {1, 24})
    for (std::int64_t m : {1, 7, 64, 900})
      for (std::int64_t n : {1, 13, 200})
        for (std::int64_t batch : {1, 3})
          for (bool c : {false, true})
            for (std::size_t extra : {std::size_t{0}, std::size_t{1000}, std::size_t{50000}, std::size_t{1} << 22}) {
              StagingRequest r = request(m, n, k, batch, 0, batch > 1, c, true, 8);
              r.limit = staging_minimum_limit(r) + extra;
              SCOPED_TRACE(::testing::Message()
                           << "m " << m << " n " << n << " batch " << batch << " c " << c << " extra " << extra);
              (void)check(r);
            }
}

TEST(MatmulStagingPlan, LimitTooSmallNamesTheSmallestThatWorks) {
  StagingRequest r = request(16, 16, 1024, 2, 0, true, true, true);
  const std::size_t minimum = staging_minimum_limit(r);
  r.limit = minimum;
  (void)check(r);  // the smallest limit works
  r.limit = minimum - 1;
  try {
    (void)plan_staging(r);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("smallest limit that works is " + std::to_string(minimum)), std::string::npos) << message;
  }
}

TEST(MatmulStagingPlan, FlatBatchStride) {
  EXPECT_EQ(flat_batch_stride(Shape{2, 3}, Strides{3 * 20, 20, 5, 1}), 20);
  EXPECT_EQ(flat_batch_stride(Shape{2, 3}, Strides{0, 0, 5, 1}), 0);
  EXPECT_EQ(flat_batch_stride(Shape{2, 1}, Strides{20, 0, 5, 1}), 20);
  EXPECT_EQ(flat_batch_stride(Shape{2, 3}, Strides{20, 0, 5, 1}), -1);  // broadcast inside, batched outside
  EXPECT_EQ(flat_batch_stride(Shape{}, Strides{5, 1}), 0);
}

TEST(MatmulStagingPlan, UnsplittableProductsNameTheirReason) {
  Problem p;
  p.m = p.n = p.k = 4;
  EXPECT_EQ(unsplittable_reason(p, true), nullptr);
  for (Epilog e : {Epilog::relu, Epilog::gelu, Epilog::bias, Epilog::relu_bias, Epilog::gelu_bias}) {
    p.epilog = e;
    EXPECT_EQ(unsplittable_reason(p, true), nullptr) << to_string(e);
  }
  for (Epilog e : {Epilog::bgrada, Epilog::bgradb, Epilog::drelu_bgrad, Epilog::relu_aux, Epilog::dgelu}) {
    p.epilog = e;
    EXPECT_NE(unsplittable_reason(p, true), nullptr) << to_string(e);
  }
  p.epilog = Epilog::none;
  p.conjugate_a = true;
  EXPECT_NE(unsplittable_reason(p, true), nullptr);
  p.conjugate_a = false;
  EXPECT_NE(unsplittable_reason(p, false), nullptr);
}

}  // namespace
}  // namespace cuplan::detail::mm
