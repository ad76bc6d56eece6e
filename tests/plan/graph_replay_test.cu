// SPDX-License-Identifier: Apache-2.0
// GraphReplay: when it captures, replays and falls back to direct launches, and that a replay keeps stream order.
// The replayed work is a memset of a known byte, so whether it ran, and which one ran, shows in the memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "cuplan/errors.hpp"
#include "plan/graph_replay.hpp"
#include "runtime/spin_kernel.cuh"
#include "support/test_support.hpp"

namespace cuplan::testing {
namespace {

constexpr std::size_t bytes = 4096;

/// A device buffer, a non-blocking stream, and a memset "work" that counts how often the host enqueued it.
struct Fixture {
  unsigned char* buffer = nullptr;
  cudaStream_t stream = nullptr;
  int enqueued = 0;
  Fixture() {
    CUPLAN_TEST_CUDA(cudaMalloc(reinterpret_cast<void**>(&buffer), bytes));
    CUPLAN_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  ~Fixture() {
    (void)cudaStreamSynchronize(stream);
    (void)cudaStreamDestroy(stream);
    (void)cudaFree(buffer);
  }
  /// Runs the memset of `value` through `replay` under the key {buffer, value}.
  void run(detail::GraphReplay& replay, int value, cudaStream_t on = nullptr) {
    detail::ReplayKey key;
    key.add(buffer).add(value);
    replay.run(key, 0, on != nullptr ? on : stream, [&](cudaStream_t s) {
      ++enqueued;
      CUPLAN_TEST_CUDA(cudaMemsetAsync(buffer, value, bytes, s));
    });
  }
  /// Runs the memset of `value` twice through `replay`: the second call captures it. True when a graph is held then.
  bool capture(detail::GraphReplay& replay, int value) {
    run(replay, value);
    run(replay, value);
    return replay.holds_graph();
  }
  void clear() { CUPLAN_TEST_CUDA(cudaMemsetAsync(buffer, 0, bytes, stream)); }
  /// Clears the buffer and waits until it is cleared.
  void clear_and_wait() {
    clear();
    CUPLAN_TEST_CUDA(cudaStreamSynchronize(stream));
  }
  /// Every byte of the buffer, read in the stream's order.
  bool all_equal(int value) {
    std::vector<unsigned char> host(bytes);
    CUPLAN_TEST_CUDA(cudaMemcpyAsync(host.data(), buffer, bytes, cudaMemcpyDeviceToHost, stream));
    CUPLAN_TEST_CUDA(cudaStreamSynchronize(stream));
    for (unsigned char b : host)
      if (b != static_cast<unsigned char>(value)) return false;
    return true;
  }
};

TEST(GraphReplay, CapturesOnTheSecondIdenticalCallAndThenReplays) {
  CUPLAN_REQUIRE_GPU();
  Fixture f;
  detail::GraphReplay replay;
  f.run(replay, 7);
  EXPECT_EQ(f.enqueued, 1);
  EXPECT_FALSE(replay.holds_graph());
  EXPECT_TRUE(f.all_equal(7));
  f.clear();
  f.run(replay, 7);  // same key: captured (the work is enqueued once, on the private stream) and launched
  EXPECT_EQ(f.enqueued, 2);
  EXPECT_TRUE(replay.holds_graph());
  EXPECT_TRUE(f.all_equal(7));
  f.clear();
  f.run(replay, 7);  // replayed: the host does not enqueue the work again, yet the memory is written
  EXPECT_EQ(f.enqueued, 2);
  EXPECT_TRUE(f.all_equal(7));
}

TEST(GraphReplay, AnotherKeyRunsDirectlyAndTheCapturedKeyStillReplays) {
  CUPLAN_REQUIRE_GPU();
  Fixture f;
  detail::GraphReplay replay;
  ASSERT_TRUE(f.capture(replay, 3));
  f.run(replay, 9);
  EXPECT_EQ(f.enqueued, 3);
  EXPECT_TRUE(f.all_equal(9));
  f.run(replay, 3);  // the graph for 3 is still held
  EXPECT_EQ(f.enqueued, 3);
  EXPECT_TRUE(f.all_equal(3));
  // Ping-pong: 9 came before, so its second appearance is captured; from then on both keys replay.
  f.run(replay, 9);
  EXPECT_EQ(f.enqueued, 4);
  EXPECT_EQ(replay.graph_count(), 2);
  for (int i = 0; i < 4; ++i) {
    f.run(replay, i % 2 == 0 ? 3 : 9);
    EXPECT_TRUE(f.all_equal(i % 2 == 0 ? 3 : 9));
  }
  EXPECT_EQ(f.enqueued, 4);
}

TEST(GraphReplay, KeepsTheMostRecentlyUsedGraphs) {
  CUPLAN_REQUIRE_GPU();
  Fixture f;
  detail::GraphReplay replay;
  const int keys = detail::GraphReplay::max_graphs + 1;
  for (int k = 1; k <= keys; ++k) {
    f.run(replay, k);
    f.run(replay, k);  // captured
  }
  EXPECT_EQ(f.enqueued, 2 * keys);
  EXPECT_EQ(replay.graph_count(), detail::GraphReplay::max_graphs);
  for (int k = 2; k <= keys; ++k) {  // key 1 was used least recently and is gone; the others replay
    f.run(replay, k);
    EXPECT_TRUE(f.all_equal(k));
  }
  EXPECT_EQ(f.enqueued, 2 * keys);
  f.run(replay, 1);  // still in the recent-key history: captured again, evicting the least recent (key 2)
  EXPECT_EQ(f.enqueued, 2 * keys + 1);
  EXPECT_TRUE(f.all_equal(1));
  EXPECT_EQ(replay.graph_count(), detail::GraphReplay::max_graphs);
}

TEST(GraphReplay, KeysThatKeepEvictingEachOtherStopBeingCaptured) {
  CUPLAN_REQUIRE_GPU();
  Fixture f;
  detail::GraphReplay replay;
  // More keys in rotation than graphs, fewer than the history: each capture would evict the next key's graph.
  const int keys = detail::GraphReplay::max_graphs + 2, rounds = 20;
  int captured = 0;
  for (int r = 0; r < rounds; ++r)
    for (int k = 1; k <= keys; ++k) {
      detail::ReplayKey key;
      key.add(k);
      replay.run(key, 0, f.stream, [&](cudaStream_t s) {
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        CUPLAN_TEST_CUDA(cudaStreamIsCapturing(s, &status));
        captured += status != cudaStreamCaptureStatusNone ? 1 : 0;
        CUPLAN_TEST_CUDA(cudaMemsetAsync(f.buffer, k, bytes, s));
      });
      ASSERT_TRUE(f.all_equal(k)) << "round " << r << " key " << k;
    }
  EXPECT_LE(captured, 8 + rounds * keys / 16);
  EXPECT_GE(captured, 1);
}

TEST(GraphReplay, AReplayWaitsForEarlierWorkOnTheCallersStream) {
  CUPLAN_REQUIRE_GPU();
  Fixture f;
  detail::GraphReplay replay;
  ASSERT_TRUE(f.capture(replay, 5));
  f.clear_and_wait();
  HostGate gate;
  cudaStream_t other = nullptr;
  CUPLAN_TEST_CUDA(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  gate.hold(f.stream);
  f.run(replay, 5);  // replayed behind the held kernel
  EXPECT_EQ(f.enqueued, 2);
  // Read on another stream while f.stream is held: the replay must not have run yet.
  std::vector<unsigned char> early(bytes);
  CUPLAN_TEST_CUDA(cudaMemcpyAsync(early.data(), f.buffer, bytes, cudaMemcpyDeviceToHost, other));
  CUPLAN_TEST_CUDA(cudaStreamSynchronize(other));
  EXPECT_EQ(early[0], 0);
  gate.open();
  EXPECT_TRUE(f.all_equal(5));
  EXPECT_FALSE(gate.timed_out());
  CUPLAN_TEST_CUDA(cudaStreamDestroy(other));
}

TEST(GraphReplay, WorkThatFailsUnderCaptureTurnsReplayOffAndStillRuns) {
  CUPLAN_REQUIRE_GPU();
  Fixture f;
  detail::GraphReplay replay;
  detail::ReplayKey key;
  key.add(1);
  int direct = 0;
  auto work = [&](cudaStream_t s) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    CUPLAN_TEST_CUDA(cudaStreamIsCapturing(s, &status));
    if (status != cudaStreamCaptureStatusNone) throw std::runtime_error("this work cannot be captured");
    ++direct;
    CUPLAN_TEST_CUDA(cudaMemsetAsync(f.buffer, 4, bytes, s));
  };
  replay.run(key, 0, f.stream, work);
  replay.run(key, 0, f.stream, work);  // the capture fails: the same call runs the work directly
  EXPECT_FALSE(replay.holds_graph());
  EXPECT_EQ(direct, 2);
  replay.run(key, 0, f.stream, work);  // replay stays off: no new capture attempt
  EXPECT_EQ(direct, 3);
  EXPECT_TRUE(f.all_equal(4));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // the failed capture leaves no error behind
}

TEST(GraphReplay, ACallerStreamUnderCaptureGetsTheDirectWork) {
  CUPLAN_REQUIRE_GPU();
  Fixture f;
  detail::GraphReplay replay;
  ASSERT_TRUE(f.capture(replay, 6));
  f.clear_and_wait();
  // The caller records its own graph: the work must be enqueued into that capture, not launched now.
  CUPLAN_TEST_CUDA(cudaStreamBeginCapture(f.stream, cudaStreamCaptureModeThreadLocal));
  f.run(replay, 6);
  cudaGraph_t graph = nullptr;
  CUPLAN_TEST_CUDA(cudaStreamEndCapture(f.stream, &graph));
  EXPECT_EQ(f.enqueued, 3);
  EXPECT_TRUE(f.all_equal(0));  // nothing ran during the caller's capture
  cudaGraphExec_t exec = nullptr;
  CUPLAN_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CUPLAN_TEST_CUDA(cudaGraphLaunch(exec, f.stream));
  EXPECT_TRUE(f.all_equal(6));
  CUPLAN_TEST_CUDA(cudaGraphExecDestroy(exec));
  CUPLAN_TEST_CUDA(cudaGraphDestroy(graph));
}

TEST(GraphReplay, DisabledAndResetRunEveryCallDirectly) {
  CUPLAN_REQUIRE_GPU();
  Fixture f;
  detail::GraphReplay replay;
  replay.set_enabled(false);
  for (int i = 0; i < 3; ++i) f.run(replay, 2);
  EXPECT_EQ(f.enqueued, 3);
  EXPECT_FALSE(replay.holds_graph());
  replay.set_enabled(true);
  f.run(replay, 2);  // the key repeats the previous (direct) call's: captured now
  EXPECT_EQ(f.enqueued, 4);
  EXPECT_TRUE(replay.holds_graph());
  f.run(replay, 2);
  EXPECT_EQ(f.enqueued, 4);
  replay.reset();
  EXPECT_FALSE(replay.holds_graph());
  f.run(replay, 2);  // history dropped too: the first call after reset is direct
  EXPECT_EQ(f.enqueued, 5);
  EXPECT_FALSE(replay.holds_graph());
  EXPECT_TRUE(f.all_equal(2));
}

TEST(GraphReplay, InvalidateDropsTheGraphsSoTheSameKeyRunsDirectly) {
  CUPLAN_REQUIRE_GPU();
  Fixture f;
  detail::GraphReplay replay;
  ASSERT_TRUE(f.capture(replay, 4));
  replay.invalidate();  // the plan behind the key changed: the graph would replay stale work
  EXPECT_FALSE(replay.holds_graph());
  f.clear();
  f.run(replay, 4);
  EXPECT_EQ(f.enqueued, 3) << "the first call after invalidate must enqueue the work itself";
  EXPECT_TRUE(f.all_equal(4));
}

TEST(ReplayKey, KeysDifferInAnyWordAndOverflowIsRejected) {
  int x = 0;
  detail::ReplayKey a, b, c;
  a.add(&x).add(2.5).add(3);
  b.add(&x).add(2.5).add(3);
  c.add(&x).add(2.5).add(4);
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);
  detail::ReplayKey shorter, zero_ended;
  shorter.add(&x).add(2.5);
  zero_ended.add(&x).add(2.5).add(0);
  EXPECT_FALSE(shorter == zero_ended) << "a key with a trailing zero word differs from the shorter key";
  detail::ReplayKey full;
  for (std::size_t i = 0; i < detail::ReplayKey::capacity; ++i) full.add(i);
  EXPECT_THROW(full.add(1), InvalidArgument);
}

TEST(GraphReplay, WithoutAGpuNothingIsCalled) {
  // Constructing, resetting and destroying an object that never ran makes no CUDA call (runs everywhere).
  detail::GraphReplay replay;
  replay.reset();
  EXPECT_FALSE(replay.holds_graph());
}

}  // namespace
}  // namespace cuplan::testing
