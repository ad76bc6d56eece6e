// SPDX-License-Identifier: Apache-2.0
// The shared stream-contract mechanism: execution/blocking resolution, lifecycle states, alignment checks.
// The parts that enqueue GPU work (PhaseOrder, DeviceBuffer) are exercised on the GPU below and by the FFT and
// Matmul stream tests.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "cuplan/errors.hpp"
#include "plan/stateful.hpp"
#include "support/test_support.hpp"

namespace cuplan::detail {
namespace {

TEST(RecordedStream, RemembersALastingStreamUntilForgotten) {
  Stream s1, s2;  // owning streams (host streams without a GPU): lasting
  RecordedStream recorded;
  EXPECT_FALSE(recorded.covers(s1)) << "nothing is recorded yet";
  recorded.remember(s1);
  EXPECT_TRUE(recorded.covers(s1));
  EXPECT_FALSE(recorded.covers(s2));
  recorded.remember(s2);
  EXPECT_FALSE(recorded.covers(s1)) << "only the last stream is remembered";
  EXPECT_TRUE(recorded.covers(s2));
  recorded.forget();
  EXPECT_FALSE(recorded.covers(s2)) << "another operand or block: record again";
  // The legacy default stream's handle is null, and still one stream for the process's life.
  const StreamRef legacy(cudaStream_t{});
  recorded.remember(legacy);
  EXPECT_TRUE(recorded.covers(legacy));
}

TEST(RecordedStream, ForgetsHandlesThatMayNameAnotherStream) {
  RecordedStream recorded;
  // A raw handle made elsewhere may be destroyed and its value reused by a new stream.
  const StreamRef raw(reinterpret_cast<cudaStream_t>(std::uintptr_t{0x1000}));
  recorded.remember(raw);
  EXPECT_FALSE(recorded.covers(raw));
  // The per-thread default handle names the calling thread's own stream.
  const StreamRef per_thread(cudaStreamPerThread);
  recorded.remember(per_thread);
  EXPECT_FALSE(recorded.covers(per_thread));
}

TEST(ResolveExecution, HostOperandsOnTheCpuBlock) {
  std::vector<float> a(16), b(16);
  TensorView va(a.data(), {4, 4}), vb(b.data(), {4, 4});
  const TensorView ops[] = {va, vb};
  const char* names[] = {"a", "b"};
  auto target = resolve_execution(Execution::cpu(3), Blocking::automatic, ops, names, "matmul");
  EXPECT_FALSE(target.cuda);
  EXPECT_TRUE(target.host_operands);
  EXPECT_TRUE(target.blocking);
  // Clamped to the hardware concurrency (docs/getting-started.md).
  EXPECT_EQ(target.cpu_threads, std::min(3, static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))));
}

TEST(ResolveExecution, AutomaticUsesTheCpuWithoutAGpu) {
  if (cuda_available()) GTEST_SKIP() << "this machine has a GPU: automatic picks CUDA (covered by the GPU test)";
  std::vector<float> a(4);
  const TensorView ops[] = {TensorView(a.data(), {4})};
  auto target = resolve_execution(Execution::automatic(), Blocking::automatic, ops, {}, "fft");
  EXPECT_FALSE(target.cuda);
  EXPECT_TRUE(target.blocking);
}

TEST(ResolveExecution, AutomaticUsesCudaWithAGpuAndHostOperandsBlock) {
  CUPLAN_REQUIRE_GPU();
  std::vector<float> a(4);
  const TensorView ops[] = {TensorView(a.data(), {4})};
  auto target = resolve_execution(Execution::automatic(), Blocking::automatic, ops, {}, "fft");
  EXPECT_TRUE(target.cuda);
  EXPECT_TRUE(target.host_operands);
  EXPECT_TRUE(target.blocking);
}

TEST(ResolveExecution, CudaWithoutAGpuIsNotSupported) {
  if (cuda_available()) GTEST_SKIP() << "this machine has a GPU";
  std::vector<float> a(4);
  const TensorView ops[] = {TensorView(a.data(), {4})};
  try {
    resolve_execution(Execution::cuda(), Blocking::automatic, ops, {}, "fft");
    FAIL() << "expected NotSupported";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
}

TEST(ResolveExecution, DeviceOperandsDoNotBlockUnlessAsked) {
  CUPLAN_REQUIRE_GPU();
  auto t = Tensor::empty({8}, f32, Device::cuda(0));
  const TensorView ops[] = {t.view()};
  auto target = resolve_execution(Execution::automatic(), Blocking::automatic, ops, {}, "fft");
  EXPECT_TRUE(target.cuda);
  EXPECT_FALSE(target.blocking);
  EXPECT_EQ(target.device, 0);
  target = resolve_execution(Execution::automatic(), Blocking::always, ops, {}, "fft");
  EXPECT_TRUE(target.blocking);
}

TEST(ResolveExecution, MixedHostAndDeviceOperandsAreRejectedByName) {
  CUPLAN_REQUIRE_GPU();
  auto device = Tensor::empty({8}, f32, Device::cuda(0));
  std::vector<float> host(8);
  const TensorView ops[] = {TensorView(host.data(), {8}), device.view()};
  const char* names[] = {"a", "b"};
  try {
    resolve_execution(Execution::automatic(), Blocking::automatic, ops, names, "matmul");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("a is in host memory"), std::string::npos) << message;
    EXPECT_NE(message.find("b is on cuda:0"), std::string::npos) << message;
  }
}

TEST(ObjectState, MessagesNameTheTypeTheMethodAndWhatWasExpected) {
  ObjectState state("FFT");
  try {
    state.require_planned("execute");
    FAIL();
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("FFT.execute"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("call plan() first"), std::string::npos);
  }
  state.set_planned(true);
  state.set_operand(true);
  EXPECT_NO_THROW(state.require_planned("execute"));
  EXPECT_NO_THROW(state.require_operand("execute"));
  state.set_freed();
  EXPECT_THROW(state.require_alive("plan"), StateError);
  EXPECT_THROW(state.require_operand("execute"), StateError);
  try {
    state.require_planned("execute");
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("free() was called"), std::string::npos) << e.what();
  }
}

TEST(CheckAlignment, RejectsMisalignedPointersWithTheOffset) {
  alignas(16) unsigned char buffer[64] = {};
  EXPECT_NO_THROW(check_alignment(buffer, 16, "x", "fft"));
  try {
    check_alignment(buffer + 4, 8, "x", "fft");
    FAIL();
  } catch (const InvalidArgument& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("x must be aligned to 8 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("4 bytes past"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace cuplan::detail
