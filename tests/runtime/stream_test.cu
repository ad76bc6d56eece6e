// SPDX-License-Identifier: Apache-2.0
// Streams: the no-GPU behaviour, ownership and move semantics, the default and external streams, conversions, and
// the stream operations (synchronize, done, wait on another stream) observed through kernels.

#include <gtest/gtest.h>

#include <cuda_runtime.h>
#include <cuda/stream_ref>

#include <memory>
#include <string>
#include <utility>

#include "cuplan/device.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/stream.hpp"
#include "runtime/access.hpp"
#include "runtime/spin_kernel.cuh"
#include "runtime/stream_handle.hpp"
#include "runtime/stream_handoff.cuh"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using testing::cycles_for_ms;
using testing::DeviceInt;
using testing::expect_unordered_consumer_runs_ahead;
using testing::HostGate;
using testing::StreamHandoff;

unsigned int stream_flags(cudaStream_t stream) {
  unsigned int flags = 0;
  EXPECT_EQ(cudaStreamGetFlags(stream, &flags), cudaSuccess);
  return flags;
}

// Without a GPU streams are host streams (tests/runtime/host_stream_test.cpp); what needs a CUDA stream says so.
TEST(Stream, WithoutGpuCudaOnlyStreamsThrowNotSupported) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this test covers machines without a usable GPU";
  try {
    Stream stream(Device::cuda(0));
    FAIL() << "a CUDA stream was created without a GPU";
  } catch (const NotSupported& error) {
    EXPECT_NE(std::string(error.what()).find("no CUDA device: Stream on a CUDA device"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW((void)Stream::legacy_default(Device::cuda(0)), NotSupported);
  EXPECT_THROW((void)Stream::per_thread_default(Device::cuda(0)), NotSupported);
  EXPECT_THROW((void)Stream::external(nullptr), NotSupported);
}

TEST(Stream, OwningStreamIsNonBlockingOnCurrentDevice) {
  CUPLAN_REQUIRE_GPU();
  Device::cuda(0).use();
  Stream stream;
  EXPECT_TRUE(stream.owning());
  EXPECT_NE(stream.native(), nullptr);
  EXPECT_EQ(stream.device(), Device::cuda(0));
  EXPECT_EQ(stream_flags(stream.native()), static_cast<unsigned int>(cudaStreamNonBlocking));

  Stream blocking(Device::cuda(0), 0, false);
  EXPECT_EQ(stream_flags(blocking.native()), static_cast<unsigned int>(cudaStreamDefault));
  EXPECT_NE(blocking.native(), stream.native());
}

TEST(Stream, RejectsCpuAndOutOfRangeDevices) {
  CUPLAN_REQUIRE_GPU();
  try {
    Stream stream(Device::cpu());
    FAIL() << "a stream was created on the CPU";
  } catch (const InvalidArgument& error) {
    EXPECT_EQ(std::string(error.what()), "Stream device: expected a CUDA device, got cpu");
  }
  EXPECT_THROW(Stream(Device::cuda(cuda_device_count())), InvalidArgument);
  EXPECT_THROW((void)Stream::legacy_default(Device::cpu()), InvalidArgument);
}

TEST(Stream, PriorityIsClampedToDeviceRange) {
  CUPLAN_REQUIRE_GPU();
  int least = 0, greatest = 0;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  EXPECT_EQ(Stream(Device::cuda(0), greatest - 100).priority(), greatest);
  EXPECT_EQ(Stream(Device::cuda(0), least + 100).priority(), least);
  EXPECT_EQ(Stream(Device::cuda(0), greatest).priority(), greatest);
  EXPECT_EQ(Stream().priority(), 0);
}

TEST(Stream, MoveTransfersTheStream) {
  CUPLAN_REQUIRE_GPU();
  Stream first;
  const cudaStream_t handle = first.native();
  Stream second(std::move(first));
  EXPECT_EQ(second.native(), handle);
  EXPECT_TRUE(second.owning());
  // NOLINTNEXTLINE(bugprone-use-after-move): moved-from state is what is tested
  EXPECT_FALSE(first.valid());
  EXPECT_FALSE(first.owning());
  EXPECT_THROW((void)first.native(), StateError);  // it refers to no stream, not to the legacy default stream
  try {
    first.synchronize();
    FAIL() << "a moved-from stream was synchronised";
  } catch (const StateError& error) {
    EXPECT_NE(std::string(error.what()).find("moved from"), std::string::npos) << error.what();
  }
  EXPECT_THROW((void)first.record(), StateError);
  EXPECT_THROW(first.use(), StateError);
  EXPECT_THROW((void)first.done(), StateError);
  EXPECT_THROW((void)first.priority(), StateError);
  EXPECT_THROW(first.wait(second), StateError);

  Stream third;
  third = std::move(second);  // the stream third owned before is released here
  EXPECT_EQ(third.native(), handle);
  EXPECT_THROW(second.synchronize(), StateError);  // NOLINT(bugprone-use-after-move)
  EXPECT_NO_THROW(third.synchronize());
  EXPECT_TRUE(third.done());

  first = std::move(third);  // a moved-from stream can be assigned again
  EXPECT_EQ(first.native(), handle);
  EXPECT_NO_THROW(first.synchronize());
}

// Tensors keep the streams they used through the stream's shared owner: the CUDA stream must outlive the Stream
// object as long as an owner reference exists, and be destroyed with the last one.
TEST(Stream, SharedOwnerKeepsTheStreamAlive) {
  CUPLAN_REQUIRE_GPU();
  std::shared_ptr<detail::StreamHandle> keep;
  cudaStream_t handle = nullptr;
  {
    Stream stream;
    handle = stream.native();
    ASSERT_TRUE(stream.ref().owning());
    keep = detail::Access::retain(stream.ref());
    EXPECT_EQ(keep->native(), handle);
    EXPECT_EQ(keep->device(), stream.device().index());
  }
  EXPECT_EQ(cudaStreamQuery(handle), cudaSuccess);  // still a live stream
  testing::spin_kernel<<<1, 1, 0, handle>>>(1000);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(handle), cudaSuccess);
  EXPECT_EQ(keep.use_count(), 1);
  keep.reset();  // destroys the stream; its handle must not be used any more
}

TEST(Stream, DefaultStreamsUseExplicitHandles) {
  CUPLAN_REQUIRE_GPU();
  Device::cuda(0).use();
  const Stream legacy = Stream::legacy_default();
  const Stream per_thread = Stream::per_thread_default(Device::cuda(0));
  EXPECT_EQ(legacy.native(), cudaStreamLegacy);
  EXPECT_EQ(per_thread.native(), cudaStreamPerThread);
  EXPECT_FALSE(legacy.owning());
  EXPECT_FALSE(per_thread.owning());
  EXPECT_EQ(legacy.device(), Device::cuda(0));
  EXPECT_EQ(per_thread.device(), Device::cuda(0));
  EXPECT_NO_THROW(legacy.synchronize());
  EXPECT_NO_THROW(per_thread.synchronize());
  EXPECT_TRUE(per_thread.done());
}

TEST(Stream, ExternalStreamIsWrappedNotDestroyed) {
  CUPLAN_REQUIRE_GPU();
  cudaStream_t raw = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking), cudaSuccess);
  {
    Stream wrapped = Stream::external(raw);
    EXPECT_FALSE(wrapped.owning());
    EXPECT_EQ(wrapped.native(), raw);
    EXPECT_EQ(wrapped.device(), Device::current());
    testing::spin_kernel<<<1, 1, 0, wrapped.native()>>>(1000);
    EXPECT_NO_THROW(wrapped.synchronize());
  }
  // Still a valid stream after the wrapper is gone: cuplan must not have destroyed it.
  EXPECT_EQ(cudaStreamQuery(raw), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(raw), cudaSuccess);
}

TEST(Stream, ConversionsKeepTheHandle) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  const cudaStream_t handle = stream;
  const cuda::stream_ref cccl_ref = stream;
  EXPECT_EQ(handle, stream.native());
  EXPECT_EQ(cccl_ref.get(), stream.native());

  const StreamRef from_stream = stream;
  const StreamRef from_handle = handle;
  const StreamRef from_cccl = cccl_ref;
  EXPECT_EQ(from_stream, from_handle);
  EXPECT_EQ(from_stream, from_cccl);
  EXPECT_EQ(from_stream, stream.ref());
  EXPECT_EQ(detail::Access::owner(from_stream), detail::Access::owner(stream.ref()));
  EXPECT_TRUE(from_stream.owning());
  EXPECT_FALSE(from_handle.owning());                // a raw handle carries no owner
  EXPECT_EQ(from_handle.device(), stream.device());  // found by asking CUDA
  EXPECT_EQ(static_cast<cuda::stream_ref>(from_handle).get(), handle);
  EXPECT_EQ(StreamRef().native(), nullptr);
}

TEST(Stream, SynchronizeWaitsForEnqueuedWork) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  DeviceInt value(0);
  testing::spin_then_write<<<1, 1, 0, stream.native()>>>(value.get(), 7, cycles_for_ms(50.0));
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  stream.synchronize();
  EXPECT_TRUE(stream.done());
  // Read on another stream with no ordering of its own: only correct if synchronize() really waited.
  Stream reader;
  EXPECT_EQ(value.read(reader.native()), 7);
}

TEST(Stream, DoneIsFalseWhileWorkIsHeld) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  HostGate gate;
  gate.hold(stream.native());
  EXPECT_FALSE(stream.done());
  EXPECT_FALSE(stream.ref().done());
  gate.open();
  stream.synchronize();
  EXPECT_FALSE(gate.timed_out());
  EXPECT_TRUE(stream.done());
}

// The consumer stream waits on the producer stream: the value it copies must be the producer's, although the
// producer is held by the host until after the consumer's work was enqueued.
TEST(Stream, WaitOnStreamOrdersLaterWork) {
  CUPLAN_REQUIRE_GPU();
  StreamHandoff handoff;
  handoff.produce();
  handoff.consumer.wait(handoff.producer);
  handoff.consume();
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_FALSE(handoff.consumer.done());  // held behind the producer
  handoff.gate.open();
  EXPECT_EQ(handoff.seen_by_consumer(), StreamHandoff::kWritten);
  EXPECT_FALSE(handoff.gate.timed_out());
}

// Control for the test above: without the wait the consumer runs while the producer is still held, so it copies
// the initial value. This proves the ordering test would fail if wait() did nothing.
TEST(Stream, WithoutWaitConsumerRunsAhead) {
  CUPLAN_REQUIRE_GPU();
  expect_unordered_consumer_runs_ahead([](StreamHandoff& handoff) { EXPECT_FALSE(handoff.producer.done()); });
}

TEST(Stream, WaitOnItselfIsANoOp) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  EXPECT_NO_THROW(stream.wait(stream));
  EXPECT_NO_THROW(stream.wait(Stream::legacy_default()));
  EXPECT_NO_THROW(stream.synchronize());
}

TEST(Stream, WaitRejectsUnrecordedAndMovedFromEvents) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  Event never_recorded;
  try {
    stream.wait(never_recorded);
    FAIL() << "a stream waited on an event that was never recorded";
  } catch (const StateError& error) {
    EXPECT_NE(std::string(error.what()).find("never recorded"), std::string::npos) << error.what();
  }
  Event recorded = stream.record();
  Event taken(std::move(recorded));
  EXPECT_THROW(stream.wait(recorded), StateError);  // NOLINT(bugprone-use-after-move)
  EXPECT_NO_THROW(stream.wait(taken));
}

TEST(Stream, RecordReturnsARecordedEventOfTheStream) {
  CUPLAN_REQUIRE_GPU();
  Stream stream;
  HostGate gate;
  gate.hold(stream.native());
  Event event = stream.record();
  EXPECT_TRUE(event.recorded());
  EXPECT_FALSE(event.timing());
  EXPECT_FALSE(event.done());  // captured the held work of this stream
  gate.open();
  event.synchronize();
  EXPECT_TRUE(event.done());
  EXPECT_FALSE(gate.timed_out());
}

TEST(Stream, StreamsOfSecondDeviceKnowTheirDevice) {
  CUPLAN_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has one";
  Device::cuda(0).use();
  Stream stream(Device::cuda(1));
  EXPECT_EQ(stream.device(), Device::cuda(1));
  EXPECT_EQ(StreamRef(stream.native()).device(), Device::cuda(1));
  EXPECT_EQ(Device::current(), Device::cuda(0));  // creating it did not change the current device
  EXPECT_EQ(Stream::legacy_default(Device::cuda(1)).device(), Device::cuda(1));
  EXPECT_NO_THROW(Stream::legacy_default(Device::cuda(1)).synchronize());
}

}  // namespace
}  // namespace cuplan
