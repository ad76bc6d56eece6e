// SPDX-License-Identifier: Apache-2.0
#pragma once
// The two-stream handoff that the stream and event ordering tests observe, and its control.

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <functional>

#include "cuplan/stream.hpp"
#include "runtime/spin_kernel.cuh"

namespace cuplan::testing {

/// A producer stream, held at the host gate, writes kWritten to `value`; a consumer stream copies `value` to
/// `seen`. The consumer sees kWritten only when it was ordered after the producer, and the initial 0 when it ran
/// ahead. The buffers are allocated before any stream is held (DeviceInt's note).
struct StreamHandoff {
  static constexpr int kWritten = 42;

  Stream producer, consumer;
  DeviceInt value{0}, seen{-1};
  HostGate gate;

  /// Holds the producer at the gate and enqueues the write behind it.
  void produce() {
    gate.hold(producer.native());
    write_value<<<1, 1, 0, producer.native()>>>(value.get(), kWritten);
  }
  /// Enqueues the copy on the consumer.
  void consume() { copy_value<<<1, 1, 0, consumer.native()>>>(value.get(), seen.get()); }
  /// The value the consumer copied, read in the consumer's order.
  int seen_by_consumer() const { return seen.read(consumer.native()); }
};

/// The control of the ordering tests: with no ordering between the two streams the consumer copies the initial
/// value while the producer is still held, which proves an ordering test would fail if its edge were missing.
/// `while_held` runs before the gate opens, for a test's own checks.
inline void expect_unordered_consumer_runs_ahead(const std::function<void(StreamHandoff&)>& while_held = {}) {
  StreamHandoff handoff;
  handoff.produce();
  handoff.consume();
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(handoff.seen_by_consumer(), 0);  // returns while the producer is still held
  if (while_held) while_held(handoff);
  handoff.gate.open();
  handoff.producer.synchronize();
  EXPECT_FALSE(handoff.gate.timed_out());
}

}  // namespace cuplan::testing
