// SPDX-License-Identifier: Apache-2.0
// Events: the `after` list (no GPU needed), the no-GPU behaviour, recording and ordering across streams (with a
// control proving the ordering test is sensitive), completion, timing, and move semantics.

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include "cuplan/device.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/stream.hpp"
#include "runtime/spin_kernel.cuh"
#include "runtime/stream_handoff.cuh"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using testing::cycles_for_ms;
using testing::DeviceInt;
using testing::expect_unordered_consumer_runs_ahead;
using testing::HostGate;
using testing::StreamHandoff;

// Distinct fake handles: EventList only stores them, it never passes them to CUDA.
EventRef fake_event(std::uintptr_t id) {
  return EventRef(reinterpret_cast<cudaEvent_t>(id));
}

std::string message_of(auto&& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.what();
  }
  return "(no exception)";
}

TEST(EventList, HoldsUpToCapacityInOrder) {
  const EventList empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.size(), 0U);
  EXPECT_EQ(empty.begin(), empty.end());

  const EventList full = {fake_event(1), fake_event(2), fake_event(3), fake_event(4),
                          fake_event(5), fake_event(6), fake_event(7), fake_event(8)};
  ASSERT_EQ(full.size(), EventList::capacity);
  std::uintptr_t expected = 1;
  for (const EventRef& event : full) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(event.native()), expected++);
}

TEST(EventList, RejectsMoreThanCapacity) {
  const std::string message = message_of([] {
    const EventList list = {fake_event(1), fake_event(2), fake_event(3), fake_event(4), fake_event(5),
                            fake_event(6), fake_event(7), fake_event(8), fake_event(9)};
    (void)list;
  });
  EXPECT_EQ(message, "after: expected at most 8 events, got 9");
}

// Without a GPU events are host events (tests/runtime/host_stream_test.cpp); one on a CUDA device says why not.
TEST(Event, WithoutGpuCudaEventsThrowNotSupported) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this test covers machines without a usable GPU";
  EXPECT_NE(message_of([] { Event event(Device::cuda(0), true); }).find("no CUDA device: Event on a CUDA device"),
            std::string::npos);
}

TEST(Event, CreatedWithOrWithoutTiming) {
  CUPLAN_REQUIRE_GPU();
  const Event plain;
  const Event timed(true);
  const Event on_device(Device::cuda(0), true);
  EXPECT_FALSE(plain.timing());
  EXPECT_TRUE(timed.timing());
  EXPECT_TRUE(on_device.timing());
  EXPECT_FALSE(plain.recorded());
  EXPECT_NE(plain.native(), nullptr);
  EXPECT_EQ(message_of([] { Event event(Device::cpu(), false); }), "Event device: expected a CUDA device, got cpu");
  EXPECT_THROW(Event(Device::cuda(cuda_device_count()), false), InvalidArgument);
}

TEST(Event, NeverRecordedEventIsRejectedEverywhere) {
  CUPLAN_REQUIRE_GPU();
  Event plain;
  Event timed(true);
  EXPECT_NE(message_of([&] { plain.synchronize(); }).find("never recorded"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)plain.done(); }).find("never recorded"), std::string::npos);
  EXPECT_THROW(plain.synchronize(), StateError);
  EXPECT_THROW((void)plain.done(), StateError);
  EXPECT_THROW(EventRef ref(plain), StateError);
  EXPECT_THROW((EventList{EventRef(plain)}), StateError);
  Stream stream;
  timed.record(stream);
  Event timed_unrecorded(true);
  EXPECT_NE(message_of([&] { (void)Event::elapsed_ms(timed_unrecorded, timed); }).find("start event was never"),
            std::string::npos);
  EXPECT_NE(message_of([&] { (void)Event::elapsed_ms(timed, timed_unrecorded); }).find("stop event was never"),
            std::string::npos);
}

// The consumer waits on an event recorded after the producer's write, while the host still holds the producer:
// the consumer must see the written value.
TEST(Event, RecordedEventOrdersTwoStreams) {
  CUPLAN_REQUIRE_GPU();
  StreamHandoff handoff;
  handoff.produce();
  Event written;
  written.record(handoff.producer);
  handoff.consumer.wait(written);
  handoff.consume();
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_TRUE(written.recorded());
  EXPECT_FALSE(written.done());
  EXPECT_FALSE(handoff.consumer.done());
  handoff.gate.open();
  EXPECT_EQ(handoff.seen_by_consumer(), StreamHandoff::kWritten);
  EXPECT_TRUE(written.done());
  EXPECT_FALSE(handoff.gate.timed_out());
}

// Control: the same work with no event lets the consumer read before the held producer writes.
TEST(Event, WithoutEventConsumerRunsAhead) {
  CUPLAN_REQUIRE_GPU();
  expect_unordered_consumer_runs_ahead();
}

TEST(Event, SynchronizeWaitsForCapturedWork) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  DeviceInt value(0);
  testing::spin_then_write<<<1, 1, 0, stream.native()>>>(value.get(), 9, cycles_for_ms(50.0));
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  Event event;
  event.record(stream);
  event.synchronize();
  EXPECT_TRUE(event.done());
  Stream reader;  // no ordering with `stream`: the value is there only if synchronize() waited
  EXPECT_EQ(value.read(reader.native()), 9);
}

// With no stream given, record() uses the current stream: a scope's held stream keeps the event pending, whereas
// an event on the legacy default stream would complete at once (the scope's stream is non-blocking).
TEST(Event, RecordWithoutStreamUsesCurrentStream) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  HostGate gate;
  gate.hold(stream.native());
  Event event;
  {
    StreamScope scope(stream);
    event.record();
  }
  EXPECT_FALSE(event.done());
  gate.open();
  event.synchronize();
  EXPECT_FALSE(gate.timed_out());

  Event on_default;
  on_default.record();  // no scope: the default stream, which has no work
  on_default.synchronize();
  EXPECT_TRUE(on_default.done());
}

TEST(Event, ReRecordingCapturesNewWork) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  Event event;
  event.record(stream);
  event.synchronize();
  EXPECT_TRUE(event.done());
  HostGate gate;
  gate.hold(stream.native());
  event.record(stream);
  EXPECT_FALSE(event.done());
  gate.open();
  event.synchronize();
  EXPECT_TRUE(event.done());
  EXPECT_FALSE(gate.timed_out());
}

TEST(Event, ElapsedTimeCoversTheWorkBetweenEvents) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  Event start(true), stop(true);
  start.record(stream);
  testing::spin_kernel<<<1, 1, 0, stream.native()>>>(cycles_for_ms(20.0));
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  stop.record(stream);
  // elapsed_ms waits for the events itself; no synchronize needed.
  const float milliseconds = Event::elapsed_ms(start, stop);
  EXPECT_GT(milliseconds, 0.0F);  // a sanity check that the spin is inside the interval, not a performance bound

  Event plain;
  plain.record(stream);
  EXPECT_EQ(message_of([&] { (void)Event::elapsed_ms(start, plain); }),
            "Event::elapsed_ms: the stop event was created without timing; construct it with Event(true)");
  EXPECT_EQ(message_of([&] { (void)Event::elapsed_ms(plain, stop); }),
            "Event::elapsed_ms: the start event was created without timing; construct it with Event(true)");
}

TEST(Event, MoveTransfersTheEvent) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  Event first(true);
  first.record(stream);
  const cudaEvent_t handle = first.native();
  Event second(std::move(first));
  EXPECT_EQ(second.native(), handle);
  EXPECT_TRUE(second.recorded());
  EXPECT_TRUE(second.timing());
  EXPECT_EQ(first.native(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from state is what is tested
  EXPECT_FALSE(first.recorded());
  EXPECT_NE(message_of([&] { first.record(stream); }).find("moved from"), std::string::npos);
  EXPECT_THROW(first.synchronize(), StateError);

  Event third;
  third = std::move(second);  // releases third's own event
  EXPECT_EQ(third.native(), handle);
  EXPECT_TRUE(third.recorded());
  EXPECT_NO_THROW(third.synchronize());
  first = std::move(third);  // a moved-from event can be assigned again
  EXPECT_EQ(first.native(), handle);
  EXPECT_NO_THROW(first.record(stream));
}

TEST(Event, EventRefAndListTakeRecordedEvents) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  const Event a = stream.record();
  const Event b = stream.record();
  const EventList after = {a, b};
  ASSERT_EQ(after.size(), 2U);
  EXPECT_EQ(after.begin()[0].native(), a.native());
  EXPECT_EQ(after.begin()[1].native(), b.native());
}

TEST(Event, RecordOnStreamOfAnotherDeviceIsRejected) {
  CUPLAN_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has one";
  Event on_first(Device::cuda(0), false);
  Stream on_second(Device::cuda(1));
  EXPECT_EQ(message_of([&] { on_first.record(on_second); }),
            "Event::record: the stream must belong to the event's device: expected a stream of cuda:0, got a "
            "stream of cuda:1");
  EXPECT_FALSE(on_first.recorded());
  Event on_second_device(Device::cuda(1), false);
  EXPECT_NO_THROW(on_second_device.record(on_second));
  Stream waiter(Device::cuda(0));
  EXPECT_NO_THROW(waiter.wait(on_second_device));  // waiting across devices is allowed
  EXPECT_NO_THROW(waiter.synchronize());
}

}  // namespace
}  // namespace cuplan
