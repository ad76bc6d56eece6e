// SPDX-License-Identifier: Apache-2.0
// PhaseOrder and DeviceBuffer on the GPU: a phase on another stream must wait for the previous phase, and the
// caller's `after` events are honoured. Each test puts a long spin kernel before the dependency, so it would read
// the unwritten value if the edge were missing.

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <thread>

#include "base/cuda_check.hpp"
#include "plan/stateful.hpp"
#include "support/test_support.hpp"

namespace cuplan::detail {
namespace {

__global__ void spin_then_store(int* target, int value, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  *target = value;
}

__global__ void load(const int* source, int* destination) {
  *destination = *source;
}

constexpr long long kSpinCycles = 100'000'000;  // ~50 ms at 2 GHz

class PhaseOrderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CUPLAN_REQUIRE_GPU();
    CUPLAN_CUDA_CHECK(cudaMalloc(&values_, 2 * sizeof(int)));
    CUPLAN_CUDA_CHECK(cudaMemset(values_, 0, 2 * sizeof(int)));
  }
  void TearDown() override {
    if (values_ != nullptr) cudaFree(values_);
  }
  // One phase on `stream` that stores `value` to values_[0] after a long spin.
  void store_phase(PhaseOrder& order, StreamRef stream, int value) {
    order.begin(stream, {}, 0);
    spin_then_store<<<1, 1, 0, stream.native()>>>(values_, value, kSpinCycles);
    CUPLAN_CUDA_CHECK(cudaGetLastError());
    order.end(stream);
  }
  // One phase on `stream`, after the events `after`, that copies values_[0] to values_[1] (read by read_result).
  void load_phase(PhaseOrder& order, StreamRef stream, const EventList& after = {}) {
    order.begin(stream, after, 0);
    load<<<1, 1, 0, stream.native()>>>(values_, values_ + 1);
    CUPLAN_CUDA_CHECK(cudaGetLastError());
    order.end(stream);
  }
  int read_result() {
    int host = -1;
    CUPLAN_CUDA_CHECK(cudaMemcpy(&host, values_ + 1, sizeof(int), cudaMemcpyDeviceToHost));
    return host;
  }
  int* values_ = nullptr;
};

// cudaStreamPerThread on two threads is two streams: a phase on the second thread's must wait for the first's.
TEST_F(PhaseOrderTest, PerThreadDefaultStreamOfAnotherThreadIsAnotherStream) {
  const Stream per_thread = Stream::per_thread_default();
  PhaseOrder order;
  std::thread first([&] { store_phase(order, per_thread, 42); });
  first.join();
  load_phase(order, per_thread);  // this thread's per-thread default stream
  CUPLAN_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  EXPECT_EQ(read_result(), 42);
}

TEST_F(PhaseOrderTest, PhaseOnAnotherStreamWaitsForThePreviousPhase) {
  Stream s1, s2;
  PhaseOrder order;
  store_phase(order, s1, 42);

  load_phase(order, s2);
  s2.synchronize();
  EXPECT_EQ(read_result(), 42);
  ASSERT_TRUE(order.last_stream().has_value());
  EXPECT_EQ(order.last_stream()->native(), s2.native());
}

TEST_F(PhaseOrderTest, RawStreamDestroyedAfterItsPhaseStillOrdersTheNext) {
  // A stream made elsewhere may be destroyed right after the phase: its event must already be recorded.
  cudaStream_t raw = nullptr;
  CUPLAN_CUDA_CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
  PhaseOrder order;
  store_phase(order, raw, 11);
  CUPLAN_CUDA_CHECK(cudaStreamDestroy(raw));  // legal with work pending; the work still completes

  Stream s2;
  load_phase(order, s2);
  s2.synchronize();
  EXPECT_EQ(read_result(), 11);
}

TEST_F(PhaseOrderTest, CuplanStreamDroppedAfterItsPhaseIsKeptAliveForTheLazyRecord) {
  PhaseOrder order;
  {
    Stream s1;
    store_phase(order, s1, 13);
  }  // the Stream object is gone; the order keeps the stream until it records on it
  Stream s2;
  load_phase(order, s2);
  s2.synchronize();
  EXPECT_EQ(read_result(), 13);
}

TEST_F(PhaseOrderTest, AfterEventsAreWaitedFor) {
  Stream producer, consumer;
  spin_then_store<<<1, 1, 0, producer.native()>>>(values_, 7, kSpinCycles);
  CUPLAN_CUDA_CHECK(cudaGetLastError());
  Event produced = producer.record();
  PhaseOrder order;
  load_phase(order, consumer, {produced});
  order.synchronize();
  EXPECT_EQ(read_result(), 7);
}

TEST_F(PhaseOrderTest, SynchronizeWaitsForTheLastPhase) {
  Stream s1;
  PhaseOrder order;
  order.synchronize();  // no phase yet: returns at once
  store_phase(order, s1, 5);
  order.synchronize();
  int host = -1;
  CUPLAN_CUDA_CHECK(cudaMemcpyAsync(&host, values_, sizeof(int), cudaMemcpyDeviceToHost, Stream().native()));
  CUPLAN_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(host, 5);
}

TEST_F(PhaseOrderTest, DeviceBufferGrowsAndKeepsItsBlockWhenLargeEnough) {
  Stream s1, s2;
  DeviceBuffer buffer;
  EXPECT_TRUE(buffer.empty());
  void* first = buffer.ensure(1024, 0, s1);
  ASSERT_NE(first, nullptr);
  EXPECT_GE(buffer.size(), 1024u);
  EXPECT_EQ(buffer.ensure(512, 0, s2), first);  // reused on another stream: recorded, not reallocated
  void* grown = buffer.ensure(1 << 20, 0, s2);
  ASSERT_NE(grown, nullptr);
  EXPECT_GE(buffer.size(), std::size_t{1} << 20);
  buffer.release();
  EXPECT_TRUE(buffer.empty());
  CUPLAN_CUDA_CHECK(cudaDeviceSynchronize());
}

TEST_F(PhaseOrderTest, StreamOfAnotherDeviceIsRejected) {
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two CUDA devices; this machine has " << cuda_device_count();
  Stream other(Device::cuda(1));
  EXPECT_THROW(check_stream_device(other, 0, "FFT", "execute"), InvalidArgument);
}

}  // namespace
}  // namespace cuplan::detail
