// SPDX-License-Identifier: Apache-2.0
// The current stream: default, StreamScope nesting and restoring (also by exception), Stream::use(), per thread and
// per device, the CUPLAN_PER_THREAD_DEFAULT_STREAM environment variable, and keeping a used stream alive.

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <barrier>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cuplan/device.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/stream.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

cudaStream_t expected_default_handle() {
  const char* value = std::getenv("CUPLAN_PER_THREAD_DEFAULT_STREAM");
  return value != nullptr && std::strcmp(value, "1") == 0 ? cudaStreamPerThread : cudaStreamLegacy;
}

// Leaves the calling thread with no use() slot content worth keeping: tests that call use() end with this.
void use_default_stream() {
  Stream::legacy_default().use();
}

TEST(CurrentStream, CpuDeviceIsRejected) {
  if (!cuda_available()) GTEST_SKIP() << "no GPU: the CPU's current stream is the host stream (HostStream tests)";
  try {
    (void)current_stream(Device::cpu());
    FAIL() << "current_stream accepted the CPU";
  } catch (const InvalidArgument& error) {
    EXPECT_EQ(std::string(error.what()), "current_stream: expected a CUDA device, got cpu");
  }
}

TEST(CurrentStream, WithoutGpuIsTheDefaultHandleUntilAScope) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this test covers machines without a usable GPU";
  EXPECT_EQ(current_stream().native(), expected_default_handle());
  EXPECT_EQ(current_stream(Device::cuda(0)).native(), expected_default_handle());
  EXPECT_FALSE(current_stream().owning());
  {
    StreamScope scope(StreamRef(cudaStreamLegacy));
    EXPECT_EQ(current_stream().native(), cudaStreamLegacy);
  }
  EXPECT_EQ(current_stream().native(), expected_default_handle());
}

// The environment is read once per process, so each case runs in a fresh child process.
TEST(CurrentStream, PerThreadDefaultFromEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("CUPLAN_PER_THREAD_DEFAULT_STREAM", "1", 1);
        std::exit(current_stream().native() == cudaStreamPerThread ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        setenv("CUPLAN_PER_THREAD_DEFAULT_STREAM", "0", 1);
        std::exit(current_stream().native() == cudaStreamLegacy ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        unsetenv("CUPLAN_PER_THREAD_DEFAULT_STREAM");
        std::exit(current_stream().native() == cudaStreamLegacy ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(CurrentStream, DefaultIsTheDefaultStreamOfTheDevice) {
  CUPLAN_REQUIRE_GPU();
  Device::cuda(0).use();
  const StreamRef current = current_stream();
  EXPECT_EQ(current.native(), expected_default_handle());
  EXPECT_EQ(current.device(), Device::cuda(0));
  EXPECT_FALSE(current.owning());
  EXPECT_EQ(current_stream(Device::cuda(0)), current);
  EXPECT_THROW((void)current_stream(Device::cuda(cuda_device_count())), InvalidArgument);
}

TEST(StreamScope, NestsAndRestores) {
  CUPLAN_REQUIRE_GPU();
  Stream outer_stream, inner_stream;
  const StreamRef before = current_stream();
  {
    StreamScope outer(outer_stream);
    EXPECT_EQ(current_stream(), outer_stream.ref());
    EXPECT_EQ(current_stream(), outer_stream.ref());
    EXPECT_TRUE(current_stream().owning());
    {
      StreamScope inner(inner_stream);
      EXPECT_EQ(current_stream(), inner_stream.ref());
      EXPECT_EQ(current_stream(Device::cuda(0)), inner_stream.ref());
      {
        StreamScope same_again(inner_stream);
        EXPECT_EQ(current_stream(), inner_stream.ref());
      }
      EXPECT_EQ(current_stream(), inner_stream.ref());
    }
    EXPECT_EQ(current_stream(), outer_stream.ref());
  }
  EXPECT_EQ(current_stream(), before);
}

TEST(StreamScope, RestoresOnException) {
  CUPLAN_REQUIRE_GPU();
  Stream outer_stream, inner_stream;
  StreamScope outer(outer_stream);
  try {
    StreamScope inner(inner_stream);
    throw std::runtime_error("leaves the scope early");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(current_stream(), outer_stream.ref());
}

TEST(StreamScope, AcceptsExternalAndDefaultStreams) {
  CUPLAN_REQUIRE_GPU();
  cudaStream_t raw = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking), cudaSuccess);
  {
    StreamScope scope(raw);
    EXPECT_EQ(current_stream().native(), raw);
    EXPECT_EQ(current_stream().device(), Device::cuda(0));
    StreamScope per_thread(Stream::per_thread_default());
    EXPECT_EQ(current_stream().native(), cudaStreamPerThread);
  }
  EXPECT_EQ(cudaStreamDestroy(raw), cudaSuccess);
}

TEST(StreamUse, PersistsAndScopesOverrideIt) {
  CUPLAN_REQUIRE_GPU();
  Stream used, scoped;
  used.use();
  EXPECT_EQ(current_stream(), used.ref());
  {
    StreamScope scope(scoped);
    EXPECT_EQ(current_stream(), scoped.ref());
  }
  EXPECT_EQ(current_stream(), used.ref());  // the scope restores what use() set
  {
    // use() inside a scope lasts until the scope ends, which restores what was current before it (as in CuPy).
    StreamScope scope(scoped);
    Stream inside;
    inside.use();
    EXPECT_EQ(current_stream(), inside.ref());
  }
  EXPECT_EQ(current_stream(), used.ref());
  use_default_stream();
  EXPECT_EQ(current_stream().native(), cudaStreamLegacy);
}

// A Stream destroyed while it is the current stream must stay valid as long as it is current: work enqueued on
// current_stream() afterwards runs on a live stream.
TEST(StreamUse, CurrentStreamOutlivesTheStreamObject) {
  CUPLAN_REQUIRE_GPU();
  cudaStream_t handle = nullptr;
  {
    Stream temporary;
    handle = temporary.native();
    temporary.use();
  }
  const StreamRef current = current_stream();
  EXPECT_EQ(current.native(), handle);
  ASSERT_TRUE(current.owning());
  EXPECT_EQ(cudaStreamQuery(current.native()), cudaSuccess);  // a destroyed stream would be an invalid handle
  EXPECT_NO_THROW(current.synchronize());
  EXPECT_TRUE(current.done());
  use_default_stream();  // releases the stream
}

// Each thread has its own current stream; scopes nest independently in concurrent threads.
TEST(StreamScope, IsPerThread) {
  CUPLAN_REQUIRE_GPU();
  Stream main_stream;
  StreamScope main_scope(main_stream);
  constexpr int kThreads = 4;
  std::vector<Stream> outer_streams, inner_streams;
  for (int i = 0; i < kThreads; ++i) {
    outer_streams.emplace_back();
    inner_streams.emplace_back();
  }
  std::barrier sync_point(kThreads);
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      Device::cuda(0).use();
      // A new thread starts with the default stream, whatever other threads have set.
      if (current_stream().native() != expected_default_handle()) ++failures[i];
      StreamScope outer(outer_streams[i]);
      sync_point.arrive_and_wait();  // every thread has its outer scope open
      if (current_stream() != outer_streams[i].ref()) ++failures[i];
      {
        StreamScope inner(inner_streams[i]);
        sync_point.arrive_and_wait();  // every thread has its inner scope open
        if (current_stream() != inner_streams[i].ref()) ++failures[i];
      }
      sync_point.arrive_and_wait();  // every thread has closed its inner scope
      if (current_stream() != outer_streams[i].ref()) ++failures[i];
    });
  }
  for (auto& thread : threads) thread.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(failures[i], 0) << "thread " << i;
  EXPECT_EQ(current_stream(), main_stream.ref());
}

TEST(StreamScope, IsPerDevice) {
  CUPLAN_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has one";
  Device::cuda(0).use();
  Stream first(Device::cuda(0)), second(Device::cuda(1));
  StreamScope on_first(first);
  {
    StreamScope on_second(second);
    EXPECT_EQ(current_stream(), first.ref());  // the current device is still 0
    EXPECT_EQ(current_stream(Device::cuda(1)), second.ref());
    EXPECT_EQ(Device::current(), Device::cuda(0));  // a scope does not change the current device
  }
  EXPECT_EQ(current_stream(Device::cuda(1)).native(), expected_default_handle());
  EXPECT_EQ(current_stream(Device::cuda(1)).device(), Device::cuda(1));
}

}  // namespace
}  // namespace cuplan
