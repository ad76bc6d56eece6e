// SPDX-License-Identifier: Apache-2.0
// The timeout's arithmetic and the watchdog's list of waits, with a fake clock and fake completion (CPU only).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "distributed/exchange/watch_list.hpp"

namespace {

using cuplan::detail::dist::deadline_after;
using cuplan::detail::dist::poll_interval;
using cuplan::detail::dist::WatchList;
using std::chrono::milliseconds;

// A clock the test moves by hand.
struct FakeClock {
  using rep = std::int64_t;
  using period = std::milli;
  using duration = std::chrono::duration<rep, period>;
  using time_point = std::chrono::time_point<FakeClock>;
  static constexpr bool is_steady = true;
};
using TimePoint = FakeClock::time_point;

// A wait that is done once `done` is set (an event that completed).
struct FakeWork {
  int name = 0;
  const bool* done = nullptr;
};

// Whether a fake wait has completed: what the watchdog asks of each wait it polls.
bool is_done(const FakeWork& w) {
  return *w.done;
}

// Each test starts from an empty list, with a flag for waits that never complete.
class WatchListTest : public ::testing::Test {
 protected:
  WatchList<FakeClock, FakeWork> list;
  bool never = false;
};

TEST(DeadlineTest, AddsTheTimeoutToNow) {
  const TimePoint now{milliseconds(1000)};
  EXPECT_EQ(deadline_after<FakeClock>(now, milliseconds(2000)), TimePoint{milliseconds(3000)});
  EXPECT_EQ(deadline_after<FakeClock>(now, milliseconds(1)), TimePoint{milliseconds(1001)});
}

TEST(DeadlineTest, ZeroOrNegativeMeansForever) {
  const TimePoint now{milliseconds(5)};
  EXPECT_EQ(deadline_after<FakeClock>(now, milliseconds(0)), TimePoint::max());
  EXPECT_EQ(deadline_after<FakeClock>(now, milliseconds(-7)), TimePoint::max());
}

TEST(DeadlineTest, SaturatesInsteadOfOverflowing) {
  const TimePoint late = TimePoint::max() - milliseconds(10);
  EXPECT_EQ(deadline_after<FakeClock>(late, milliseconds(11)), TimePoint::max());
  EXPECT_EQ(deadline_after<FakeClock>(late, milliseconds(10)), TimePoint::max());
  EXPECT_EQ(deadline_after<FakeClock>(late, milliseconds(9)), TimePoint::max() - milliseconds(1));
  // The real clock's duration is finer than milliseconds: the sum is converted, not truncated.
  using Steady = std::chrono::steady_clock;
  const Steady::time_point t0{};
  EXPECT_EQ(deadline_after<Steady>(t0, milliseconds(3)) - t0,
            std::chrono::duration_cast<Steady::duration>(milliseconds(3)));
  // Timeouts longer than the real clock's nanoseconds can hold (about 292 years) wait forever instead of
  // overflowing in the conversion (UBSan): milliseconds::max(), as a caller may write for "very long".
  EXPECT_EQ(deadline_after<Steady>(Steady::now(), milliseconds::max()), Steady::time_point::max());
  const auto longest = std::chrono::duration_cast<milliseconds>(Steady::duration::max());
  EXPECT_EQ(deadline_after<Steady>(t0, longest), Steady::time_point::max());
  EXPECT_EQ(deadline_after<Steady>(t0, longest - milliseconds(1)) - t0,
            std::chrono::duration_cast<Steady::duration>(longest - milliseconds(1)));
}

TEST(DeadlineTest, PollIntervalIsATwentiethWithinBounds) {
  EXPECT_EQ(poll_interval(milliseconds(2000)), milliseconds(100));
  EXPECT_EQ(poll_interval(milliseconds(1000)), milliseconds(50));
  EXPECT_EQ(poll_interval(milliseconds(600000)), milliseconds(100));
  EXPECT_EQ(poll_interval(milliseconds(5)), milliseconds(1));
  EXPECT_EQ(poll_interval(milliseconds(0)), milliseconds(100));
}

TEST_F(WatchListTest, DoneWaitsLeaveWithTheirTokens) {
  bool first_done = false, second_done = false;
  list.add(TimePoint{milliseconds(100)}, "first", {1, &first_done});
  list.add(TimePoint{milliseconds(200)}, "second", {2, &second_done});
  std::vector<FakeWork> finished;
  EXPECT_FALSE(list.poll(TimePoint{milliseconds(50)}, is_done, finished).has_value());
  EXPECT_TRUE(finished.empty());
  EXPECT_EQ(list.size(), 2u);
  second_done = true;
  EXPECT_FALSE(list.poll(TimePoint{milliseconds(60)}, is_done, finished).has_value());
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].name, 2);
  EXPECT_EQ(list.size(), 1u);
}

TEST_F(WatchListTest, AWaitDoneAfterItsDeadlineIsNotExpired) {
  // The work completed, only the poll came late: no abort.
  bool done_flag = true;
  list.add(TimePoint{milliseconds(100)}, "late poll", {7, &done_flag});
  std::vector<FakeWork> finished;
  EXPECT_FALSE(list.poll(TimePoint{milliseconds(500)}, is_done, finished));
  EXPECT_EQ(finished.size(), 1u);
  EXPECT_TRUE(list.empty());
}

TEST_F(WatchListTest, TheEarliestExpiredWaitIsReturnedOnce) {
  list.add(TimePoint{milliseconds(300)}, "later", {1, &never});
  list.add(TimePoint{milliseconds(100)}, "earliest", {2, &never});
  list.add(TimePoint{milliseconds(900)}, "not yet", {3, &never});
  std::vector<FakeWork> finished;
  EXPECT_FALSE(list.poll(TimePoint{milliseconds(99)}, is_done, finished).has_value());
  auto expired = list.poll(TimePoint{milliseconds(100)}, is_done, finished);
  ASSERT_TRUE(expired.has_value());
  EXPECT_EQ(expired->description, "earliest");
  EXPECT_EQ(expired->token.name, 2);
  expired = list.poll(TimePoint{milliseconds(400)}, is_done, finished);
  ASSERT_TRUE(expired.has_value());
  EXPECT_EQ(expired->description, "later");
  EXPECT_FALSE(list.poll(TimePoint{milliseconds(400)}, is_done, finished).has_value());
  EXPECT_EQ(list.size(), 1u);
  EXPECT_TRUE(finished.empty());
}

TEST_F(WatchListTest, AForeverWaitNeverExpires) {
  list.add(deadline_after<FakeClock>(TimePoint{milliseconds(1)}, milliseconds(0)), "forever", {1, &never});
  std::vector<FakeWork> finished;
  EXPECT_FALSE(list.poll(TimePoint::max() - milliseconds(1), is_done, finished).has_value());
  EXPECT_EQ(list.size(), 1u);
}

TEST_F(WatchListTest, RemoveReturnsTheTokenOnlyWhileWatched) {
  const std::uint64_t a = list.add(TimePoint{milliseconds(10)}, "a", {1, &never});
  const std::uint64_t b = list.add(TimePoint{milliseconds(20)}, "b", {2, &never});
  EXPECT_NE(a, b);
  const auto removed = list.remove(a);
  ASSERT_TRUE(removed.has_value());
  EXPECT_EQ(removed->name, 1);
  EXPECT_FALSE(list.remove(a).has_value());
  // An expired wait is gone: its scope's removal finds nothing.
  std::vector<FakeWork> finished;
  ASSERT_TRUE(list.poll(TimePoint{milliseconds(20)}, is_done, finished));
  EXPECT_FALSE(list.remove(b).has_value());
  EXPECT_TRUE(list.empty());
}

TEST_F(WatchListTest, TakeAllEmptiesTheList) {
  list.add(TimePoint{milliseconds(10)}, "a", {1, &never});
  list.add(TimePoint{milliseconds(20)}, "b", {2, &never});
  const std::vector<FakeWork> all = list.take_all();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name + all[1].name, 3);
  EXPECT_TRUE(list.empty());
  EXPECT_TRUE(list.take_all().empty());
}

}  // namespace
