// SPDX-License-Identifier: Apache-2.0
// The ordering checker's rules (OrderingTracker, no CUDA needed: completion marks are plain flags) and its public
// switch. The GPU half, with real streams, spin kernels and FFT/Matmul/copy, is ordering_checker_gpu_test.cu.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>

#include <memory>
#include <string>
#include <vector>

#include "cuplan/checking.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/tensor.hpp"
#include "plan/ordering/ordering_checker.hpp"

namespace cuplan::detail {
namespace {

class FlagMark final : public CompletionMark {
 public:
  bool pending() const override { return !done; }
  bool done = false;
};

// Opaque stream and event keys: distinct addresses.
int s1_token, s2_token, s3_token, e1_token, e2_token;
const void* const s1 = &s1_token;
const void* const s2 = &s2_token;
const void* const s3 = &s3_token;
const void* const e1 = &e1_token;
const void* const e2 = &e2_token;

using Range = OrderingTracker::Range;

Range read(std::uintptr_t begin, std::uintptr_t end, const char* name = "x") {
  return Range{begin, end, name, false, true};
}
Range write(std::uintptr_t begin, std::uintptr_t end, const char* name = "out") {
  return Range{begin, end, name, true, true};
}

class TrackerTest : public ::testing::Test {
 protected:
  std::shared_ptr<FlagMark> record(const void* stream, std::vector<Range> ranges) {
    auto mark = std::make_shared<FlagMark>();
    tracker.record(stream, ranges, mark);
    return mark;
  }
  void check(const void* stream, std::vector<Range> ranges) { tracker.check(stream, ranges, "FFT", "execute"); }
  OrderingTracker tracker;
};

TEST_F(TrackerTest, PendingWriteOnAnotherStreamWithoutEdgeThrowsNamingOperandStreamsAndFix) {
  record(s1, {write(1000, 2000)});
  try {
    check(s2, {read(1500, 1600, "operand")});
    FAIL() << "expected OrderingError";
  } catch (const OrderingError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("FFT.execute: operand"), std::string::npos) << message;
    EXPECT_NE(message.find("written"), std::string::npos) << message;
    EXPECT_NE(message.find(fmt::format("{}", fmt::ptr(s1))), std::string::npos) << message;
    EXPECT_NE(message.find(fmt::format("{}", fmt::ptr(s2))), std::string::npos) << message;
    EXPECT_NE(message.find(".after = {event}"), std::string::npos) << message;
    EXPECT_NE(message.find("stream.wait(event)"), std::string::npos) << message;
  }
}

TEST_F(TrackerTest, SameStreamDisjointAndCompletedNeedNoEdge) {
  auto mark = record(s1, {write(1000, 2000)});
  EXPECT_NO_THROW(check(s1, {write(1000, 2000)}));
  EXPECT_NO_THROW(check(s2, {read(2000, 3000)}));  // touches the end, shares no byte
  EXPECT_THROW(check(s2, {read(1999, 3000)}), OrderingError);
  mark->done = true;
  EXPECT_NO_THROW(check(s2, {write(1000, 2000)}));
}

TEST_F(TrackerTest, EventRecordedAfterTheWriteAndWaitedForIsAnEdge) {
  record(s1, {write(0, 64)});
  tracker.recorded(e1, s1);
  EXPECT_THROW(check(s2, {read(0, 64)}), OrderingError);
  tracker.waited(s2, e1);
  EXPECT_NO_THROW(check(s2, {read(0, 64)}));
  EXPECT_THROW(check(s3, {read(0, 64)}), OrderingError);  // the edge is s2's only
}

TEST_F(TrackerTest, EventRecordedBeforeTheWriteIsNoEdge) {
  tracker.recorded(e1, s1);
  record(s1, {write(0, 64)});
  tracker.waited(s2, e1);
  EXPECT_THROW(check(s2, {read(0, 64)}), OrderingError);
}

TEST_F(TrackerTest, EdgesAreTransitive) {
  record(s1, {write(0, 64)});
  tracker.recorded(e1, s1);
  tracker.waited(s2, e1);
  tracker.recorded(e2, s2);
  tracker.waited(s3, e2);
  EXPECT_NO_THROW(check(s3, {read(0, 64)}));
}

TEST_F(TrackerTest, WriteAfterPendingReadThrowsReadAfterReadDoesNot) {
  record(s1, {read(0, 64, "a")});
  EXPECT_NO_THROW(check(s2, {read(0, 64)}));
  try {
    check(s2, {write(32, 40, "out")});
    FAIL() << "expected OrderingError";
  } catch (const OrderingError& e) {
    EXPECT_NE(std::string(e.what()).find("out (bytes [0x20, 0x28)) was last read"), std::string::npos) << e.what();
  }
}

TEST_F(TrackerTest, AFreshResultIsRecordedNotChecked) {
  record(s1, {write(0, 64)});
  Range fresh = write(0, 64);
  fresh.check = false;
  EXPECT_NO_THROW(check(s2, {fresh}));
}

TEST_F(TrackerTest, AssumeOrderedSilencesOnlyTheStreamNamed) {
  record(s1, {write(0, 64)});
  tracker.assume_ordered(0, 64, s2);
  EXPECT_NO_THROW(check(s2, {write(0, 64)}));
  EXPECT_THROW(check(s3, {write(0, 64)}), OrderingError);
}

TEST_F(TrackerTest, FreedMemoryIsForgotten) {
  record(s1, {write(0, 64)});
  tracker.forget(0, 64);
  EXPECT_NO_THROW(check(s2, {write(0, 64)}));
  EXPECT_EQ(tracker.ranges_tracked(), 0u);
}

TEST_F(TrackerTest, ALaterWriteReplacesTheRangesItCovers) {
  record(s1, {write(0, 16), write(16, 32)});
  tracker.recorded(e1, s1);
  tracker.waited(s2, e1);
  record(s2, {write(0, 64)});
  EXPECT_EQ(tracker.ranges_tracked(), 1u);
  EXPECT_THROW(check(s3, {read(8, 9)}), OrderingError);  // now s2's pending write
}

TEST_F(TrackerTest, CompletedRangesArePrunedAsTheTableGrows) {
  std::vector<std::shared_ptr<FlagMark>> marks;
  for (std::uintptr_t i = 0; i < 2048; ++i) {
    marks.push_back(record(s1, {write(i * 64, i * 64 + 64)}));
    marks.back()->done = true;
  }
  EXPECT_LT(tracker.ranges_tracked(), 1024u);
}

TEST(OrderingCheckerSwitch, OnOffAndAHostStreamCopyNeverThrows) {
  const bool before = checking();
  set_checking(true);
  EXPECT_TRUE(checking());
  // Host streams (and host memory) run at the call: nothing is ever pending, nothing is thrown.
  Tensor a = Tensor::empty(Shape{64}, f32, Device::cpu());
  Tensor b = Tensor::empty(Shape{64}, f32, Device::cpu());
  // A host stream without a GPU, a CUDA stream with one (host memory still runs at the call).
  std::optional<Stream> s_b;
  if (cuda_available())
    s_b.emplace();
  else
    s_b.emplace(Device::cpu());
  EXPECT_NO_THROW(copy(a, b));
  EXPECT_NO_THROW(copy(b, a));
  EXPECT_NO_THROW(assume_ordered(a.view(), *s_b));
  set_checking(false);
  EXPECT_FALSE(checking());
  EXPECT_NO_THROW(copy(a, b));
  set_checking(before);
}

}  // namespace
}  // namespace cuplan::detail
