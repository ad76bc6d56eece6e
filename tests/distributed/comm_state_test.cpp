// SPDX-License-Identifier: Apache-2.0
// The state machine of a communicator's abort and its watchdog, on a state without a NCCL communicator (CPU only):
// a host wait that outlives the timeout is aborted by the watchdog thread and raises TimeoutError, naming the rank,
// the operation, the timeout and what it waited for; every later call raises too; abort() raises StateError.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "cuplan/errors.hpp"
#include "distributed/exchange/nccl/comm_state.hpp"
#include "support/test_support.hpp"

namespace {

using cuplan::detail::dist::CommState;
using cuplan::detail::dist::PeerWait;
using cuplan::testing::message_of;
using namespace std::chrono_literals;

// Waits until `state` is aborted; false after `limit` (the test then fails rather than hangs).
bool wait_for_abort(const CommState& state, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!state.aborted()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(CommStateTest, AWaitPastItsTimeoutAbortsAndRaisesTimeoutError) {
  CommState state;
  state.rank = 1;
  state.size = 2;
  state.set_timeout(50ms);
  PeerWait wait(state, "DistributedFFT::plan", "the agreement all-gather");
  EXPECT_FALSE(state.aborted());
  ASSERT_TRUE(wait_for_abort(state, 30s)) << "the watchdog did not abort within 30 s";
  const std::string message = message_of<cuplan::TimeoutError>([&] { wait.check(); });
  EXPECT_NE(message.find("DistributedFFT::plan on rank 1 of 2"), std::string::npos) << message;
  EXPECT_NE(message.find("50 ms"), std::string::npos) << message;
  EXPECT_NE(message.find("the agreement all-gather"), std::string::npos) << message;
  EXPECT_EQ(message.find("earlier"), std::string::npos) << message;
  EXPECT_EQ(state.reason(), message);
  // Every later call over the communicator raises the same type, saying it happened earlier.
  const std::string later = message_of<cuplan::TimeoutError>([&] { (void)state.live("DistributedFFT::execute"); });
  EXPECT_NE(later.find("DistributedFFT::execute: the communicator was aborted earlier"), std::string::npos) << later;
  EXPECT_THROW(PeerWait(state, "Redistribute::plan", "x"), cuplan::TimeoutError);
  // A NCCL call that failed because of the abort raises the abort's error, not the NCCL status.
  const std::string failed = message_of<cuplan::TimeoutError>(
      [&] { state.fail(ncclInternalError, "ncclAllGather(...)", __FILE__, __LINE__); });
  EXPECT_EQ(failed, message);
  // Aborting again changes nothing.
  EXPECT_FALSE(state.abort(CommState::Cause::user, "again"));
  EXPECT_EQ(state.reason(), message);
}

TEST(CommStateTest, AWaitThatEndsInTimeLeavesTheCommunicatorAlive) {
  CommState state;
  state.size = 2;
  state.set_timeout(60s);
  {
    PeerWait wait(state, "DistributedMatmul::plan", "the final barrier");
    wait.check();
  }
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(state.aborted());
  EXPECT_NO_THROW(state.check("DistributedMatmul::execute"));
  EXPECT_EQ(state.live("DistributedMatmul::execute"), nullptr);
}

TEST(CommStateTest, NoTimeoutWatchesNothing) {
  CommState state;
  state.size = 2;
  EXPECT_EQ(state.timeout(), 0ms);
  {
    PeerWait wait(state, "DistributedFFT::plan", "the final barrier");
    std::this_thread::sleep_for(20ms);
    wait.check();
  }
  EXPECT_FALSE(state.aborted());
}

TEST(CommStateTest, UserAbortRaisesStateErrorEverywhere) {
  CommState state;
  state.size = 2;
  EXPECT_TRUE(state.abort(CommState::Cause::user, "Communicator::abort() was called on rank 0 of 2"));
  EXPECT_TRUE(state.aborted());
  const std::string message = message_of<cuplan::StateError>([&] { state.check("Redistribute::execute"); });
  EXPECT_NE(message.find("Redistribute::execute"), std::string::npos) << message;
  EXPECT_NE(message.find("abort() was called"), std::string::npos) << message;
  EXPECT_THROW(PeerWait(state, "DistributedFFT::plan", "x"), cuplan::StateError);
  EXPECT_THROW(state.fail(ncclRemoteError, "ncclSend(...)", __FILE__, __LINE__), cuplan::StateError);
}

TEST(CommStateTest, AFailedCallOfALiveCommunicatorIsALibraryError) {
  CommState state;
  state.size = 2;
  try {
    state.fail(ncclInvalidUsage, "ncclSend(...)", __FILE__, __LINE__);
    FAIL() << "expected LibraryError";
  } catch (const cuplan::LibraryError& e) {
    EXPECT_EQ(e.library(), "NCCL");
    EXPECT_EQ(e.status(), static_cast<int>(ncclInvalidUsage));
  }
  EXPECT_FALSE(state.aborted());
  EXPECT_FALSE(state.check_async_error());  // no NCCL communicator: nothing to ask
}

// Abort actions (copy-engine exchanges register one to release the stream waits no peer will satisfy): each runs
// once, at the first abort, by whichever thread aborts (here the watchdog); a removed one never runs.
TEST(CommStateTest, AbortRunsEachRegisteredActionOnceAndNotRemovedOnes) {
  CommState state;
  state.size = 2;
  state.set_timeout(20ms);
  std::atomic<int> kept{0}, removed{0};
  const std::uint64_t first = state.on_abort([&]() noexcept { kept.fetch_add(1); });
  const std::uint64_t second = state.on_abort([&]() noexcept { removed.fetch_add(1); });
  EXPECT_NE(first, second);
  state.remove_abort_action(second);
  state.remove_abort_action(12345);  // unknown ids are ignored
  {
    PeerWait wait(state, "DistributedMatmul::execute", "a block that never arrives");
    ASSERT_TRUE(wait_for_abort(state, 30s)) << "the watchdog did not abort within 30 s";
  }
  EXPECT_EQ(kept.load(), 1);
  EXPECT_EQ(removed.load(), 0);
  EXPECT_FALSE(state.abort(CommState::Cause::user, "again"));
  EXPECT_EQ(kept.load(), 1);  // not again
}

}  // namespace
