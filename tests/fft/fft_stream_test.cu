// SPDX-License-Identifier: Apache-2.0
// The stream contract on the GPU, one test per scenario of the stream-semantics reference and of the FFT samples.
// Each puts a ~50 ms spin kernel on the producing stream before the dependency, so a missing ordering edge would
// let the consumer run first and read unwritten or recycled memory: the numerical check would then fail.

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "fft/fft_test_util.hpp"
#include "runtime/spin_kernel.cuh"

namespace cuplan::testing {
namespace {

constexpr double kSpinMs = 50.0;

void spin(StreamRef stream) {
  spin_kernel<<<1, 1, 0, stream.native()>>>(cycles_for_ms(kSpinMs));
  CUPLAN_TEST_CUDA(cudaGetLastError());
}

const std::vector<std::int64_t> kShape{16, 32, 24};
constexpr double kN = 16.0 * 32.0;  // axes {0, 1}

TEST(FftStreams, StatelessDeviceDataOrderedToASecondStreamWithAnEvent) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  auto host = HostArray<std::complex<double>>::random(kShape);
  Operand a = to_space(host, Space::cuda, s1);
  s1.synchronize();
  spin(s1);
  Tensor b = fft(a.view, {.axes = {0, 1}, .stream = s1});  // returns at once, runs after the spin
  Event e1 = s1.record();
  Tensor c = ifft(b, {.axes = {0, 1}, .stream = s2, .after = {e1}});
  s2.synchronize();
  EXPECT_LT(relative_error(to_dense(c.view()), scaled(host.dense(), kN)), 1e-12);

  // The same ordering written with Stream::wait.
  spin(s1);
  Tensor b2 = fft(a.view, {.axes = {0, 1}, .stream = s1});
  s2.wait(s1.record());
  Tensor c2 = ifft(b2, {.axes = {0, 1}, .stream = s2});
  s2.synchronize();
  EXPECT_LT(relative_error(to_dense(c2.view()), scaled(host.dense(), kN)), 1e-12);
}

TEST(FftStreams, StatefulExecuteOnS1ThenResetOperandAndExecuteOnS2IsOrderedByTheObject) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  auto host = HostArray<std::complex<double>>::random(kShape);
  Operand x = to_space(host, Space::cuda, s1);
  FFT f(x.view, {.axes = {0, 1}, .stream = s1});
  f.plan(s1);
  spin(s1);
  Tensor y = f.execute({.stream = s1});  // y is written after the spin
  // No user ordering: reset_operand(y, s2) orders s2 after the object's last phase on s1.
  f.reset_operand(y, s2);
  Tensor z = f.execute({.direction = Direction::inverse, .stream = s2});
  s2.synchronize();
  EXPECT_LT(relative_error(to_dense(z.view()), scaled(host.dense(), kN)), 1e-12);
}

TEST(FftStreams, OperandAllocatedOnOneStreamAndReleasedWhileAnotherStillReadsIt) {
  CUPLAN_REQUIRE_GPU();
  Stream s_alloc, s_exec;
  auto host = HostArray<std::complex<float>>::random({64, 128});
  const auto expected = reference_dft(host.dense(), {64, 128}, {0, 1}, -1);
  Tensor x = Tensor::empty({64, 128}, c64, Device::cuda(0), s_alloc);
  copy(host.view(), x.view(), s_alloc);
  FFT f(x, {.axes = {0, 1}, .stream = s_alloc});
  f.plan(s_alloc);
  spin(s_exec);
  Tensor y = f.execute({.stream = s_exec});  // the object orders s_exec after plan() on s_alloc
  // Drop every reference to x while s_exec (held by the spin) has not read it yet. Its memory goes back to the
  // pool on s_alloc only after s_exec's recorded work; a new block on s_alloc, overwritten at once, must not be it.
  f.release_operand();
  x = Tensor{};
  Tensor recycled = Tensor::empty({64, 128}, c64, Device::cuda(0), s_alloc);
  CUPLAN_TEST_CUDA(cudaMemsetAsync(recycled.data(), 0xFF, 64 * 128 * sizeof(std::complex<float>), s_alloc));
  s_exec.synchronize();
  EXPECT_LT(relative_error(to_dense(y.view()), expected), tolerance(f32, 64 * 128));
  s_alloc.synchronize();
}

TEST(FftStreams, OptionsStreamIsTheDefaultOfExecuteAndResetOperand) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  auto host = HostArray<std::complex<double>>::random(kShape);
  Operand source = to_space(host, Space::cuda, s1);
  Operand next = to_space(host, Space::cuda, s1);
  Tensor x = Tensor::empty(Shape{16, 32, 24}, c128, Device::cuda(0), s1);
  CUPLAN_TEST_CUDA(cudaMemsetAsync(x.data(), 0, static_cast<std::size_t>(x.numel()) * 16, s1));
  s1.synchronize();
  FFT f(x, {.axes = {0, 1}, .stream = s2});
  f.plan();
  const auto expected = reference_dft(host.dense(), kShape, {0, 1}, -1);
  // The producer runs on s2 (the options' stream) after a spin: execute without a stream runs there, after it.
  spin(s2);
  copy(source.view, x.view(), s2);
  Tensor y = f.execute();
  s2.synchronize();
  EXPECT_LT(relative_error(to_dense(y.view()), expected), 1e-12);
  // Reset without a stream orders s2 after the last phase, an execute on s1 that starts late: clearing the old
  // operand on s2 afterwards cannot reach that execute.
  spin(s1);
  Tensor y1 = f.execute({.stream = s1});
  f.reset_operand(next.view);
  CUPLAN_TEST_CUDA(cudaMemsetAsync(x.data(), 0, static_cast<std::size_t>(x.numel()) * 16, s2));
  s1.synchronize();
  s2.synchronize();
  EXPECT_LT(relative_error(to_dense(y1.view()), expected), 1e-12);
  Tensor y2 = f.execute();
  s2.synchronize();
  EXPECT_LT(relative_error(to_dense(y2.view()), expected), 1e-12);
}

TEST(FftStreams, ExecuteWithoutAStreamUsesTheCurrentStreamOfTheScope) {
  CUPLAN_REQUIRE_GPU();
  Stream s1;
  auto host = HostArray<std::complex<double>>::random(kShape);
  Operand source = to_space(host, Space::cuda, s1);
  Tensor x = Tensor::empty(Shape{16, 32, 24}, c128, Device::cuda(0), s1);
  CUPLAN_TEST_CUDA(cudaMemsetAsync(x.data(), 0, static_cast<std::size_t>(x.numel()) * 16, s1));
  s1.synchronize();
  FFT f(x, {.axes = {0, 1}});
  f.plan();  // on the legacy default stream (no scope yet)
  s1.wait(current_stream());
  {
    StreamScope scope(s1);
    spin(s1);
    copy(source.view, x.view(), s1);  // the producer runs on s1 after the spin
    Tensor y = f.execute();           // no stream given: s1, so it reads what the copy wrote
    s1.synchronize();
    EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(host.dense(), kShape, {0, 1}, -1)), 1e-12);
  }
}

TEST(FftStreams, BlockingAlwaysReturnsWithTheWorkDone) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  auto host = HostArray<std::complex<float>>::random({8, 256});
  Operand x = to_space(host, Space::cuda, s);
  spin(s);
  Tensor y = fft(x.view, {.axes = {1}, .blocking = Blocking::always, .stream = s});
  EXPECT_TRUE(s.done());
  EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(host.dense(), {8, 256}, {1}, -1)), tolerance(f32, 256));
}

TEST(FftStreams, HostOperandWithCudaExecutionBlocksOnAnyStream) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  auto host = HostArray<std::complex<double>>::random(kShape);
  const auto expected = reference_dft(host.dense(), kShape, {0, 1}, -1);
  spin(s1);
  Tensor r1 = fft(host.view(), {.axes = {0, 1}, .execution = Execution::cuda(), .stream = s1});
  EXPECT_TRUE(r1.view().on_host());
  EXPECT_LT(relative_error(to_dense(r1.view()), expected), 1e-12);  // usable at once
  host.buffer[0] += 1.0;                                            // "some other operation modifies a in place"
  spin(s2);
  Tensor r2 = fft(host.view(), {.axes = {0, 1}, .execution = Execution::cuda(), .stream = s2});
  EXPECT_LT(relative_error(to_dense(r2.view()), reference_dft(host.dense(), kShape, {0, 1}, -1)), 1e-12);
}

TEST(FftStreams, StatefulHostOperandsBlockAndResetOnAStream) {
  CUPLAN_REQUIRE_GPU();
  Stream s1;
  auto a = HostArray<std::complex<double>>::random(kShape);
  auto b = HostArray<std::complex<double>>::random(kShape);
  FFT f(a.view(), {.axes = {0, 1}, .execution = Execution::cuda()});
  f.plan();
  EXPECT_LT(relative_error(to_dense(f.execute().view()), reference_dft(a.dense(), kShape, {0, 1}, -1)), 1e-12);
  f.reset_operand(b.view(), s1);
  spin(s1);
  Tensor r2 = f.execute({.stream = s1});
  EXPECT_LT(relative_error(to_dense(r2.view()), reference_dft(b.dense(), kShape, {0, 1}, -1)), 1e-12);
}

TEST(FftStreams, FunctionFormOnTwoStreamsSharesItsCachedPlanSafely) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  // Strides (2, 9) do not nest: the cached plan stages both operands through one internal buffer on both streams.
  auto a = HostArray<std::complex<float>>::random({8, 10}, {2, 9});
  auto b = HostArray<std::complex<float>>::random({8, 10}, {2, 9});
  Operand xa = to_space(a, Space::cuda, s1), xb = to_space(b, Space::cuda, s2);
  s1.synchronize();
  s2.synchronize();
  std::vector<Tensor> ya, yb;
  for (int i = 0; i < 4; ++i) {
    spin(s1);
    ya.push_back(fft(xa.view, {.axes = {0, 1}, .stream = s1}));
    yb.push_back(fft(xb.view, {.axes = {0, 1}, .stream = s2}));
  }
  s1.synchronize();
  s2.synchronize();
  const auto ref_a = reference_dft(a.dense(), {8, 10}, {0, 1}, -1);
  const auto ref_b = reference_dft(b.dense(), {8, 10}, {0, 1}, -1);
  for (int i = 0; i < 4; ++i) {
    EXPECT_LT(relative_error(to_dense(ya[i].view()), ref_a), tolerance(f32, 80));
    EXPECT_LT(relative_error(to_dense(yb[i].view()), ref_b), tolerance(f32, 80));
  }
}

// The per-thread default stream is one handle naming a different stream on each thread. A function-form plan that
// passes from one thread to another through the cache must order the second thread's stream after the first's.
TEST(FftStreams, ACachedPlanPassedBetweenThreadsPerThreadDefaultStreamsIsOrdered) {
  CUPLAN_REQUIRE_GPU();
  plan_cache::clear();
  HostGate gate;
  auto a = HostArray<std::complex<float>>::random({32, 64});
  auto b = HostArray<std::complex<float>>::random({32, 64});
  Tensor ya, yb;
  // The first thread lives until its work is done: its per-thread stream is its own, and it waits for it itself.
  std::promise<void> enqueued;
  std::promise<void> checked;
  std::thread first([&] {
    const Stream own = Stream::per_thread_default();
    Operand xa = to_space(a, Space::cuda, own);
    (void)fft(xa.view, {.axes = {1}, .stream = own});  // plans first: making a cuFFT plan may wait for the device
    own.synchronize();
    gate.hold(own.native());
    ya = fft(xa.view, {.axes = {1}, .stream = own});  // queued behind the gate
    enqueued.set_value();
    checked.get_future().wait();
    own.synchronize();
  });
  enqueued.get_future().wait();
  const Stream own = Stream::per_thread_default();  // this thread's: another stream, the same handle
  Operand xb = to_space(b, Space::cuda, own);
  own.synchronize();
  yb = fft(xb.view, {.axes = {1}, .stream = own});  // the same cached plan and workspace
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(cudaStreamQuery(own.native()), cudaErrorNotReady)
      << "the second thread's transform ran while the first thread's, on the same plan, waited behind the gate";
  (void)cudaGetLastError();
  gate.open();
  checked.set_value();
  first.join();
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_FALSE(gate.timed_out());
  EXPECT_LT(relative_error(to_dense(ya.view()), reference_dft(a.dense(), {32, 64}, {1}, -1)), tolerance(f32, 64));
  EXPECT_LT(relative_error(to_dense(yb.view()), reference_dft(b.dense(), {32, 64}, {1}, -1)), tolerance(f32, 64));
}

TEST(FftStreams, AThreadEndsWhileItsPerThreadStreamStillHasATransformQueued) {
  CUPLAN_REQUIRE_GPU();
  auto a = HostArray<std::complex<float>>::random({32, 64});
  Tensor ya;
  std::thread worker([&] {
    const Stream own = Stream::per_thread_default();
    Operand xa = to_space(a, Space::cuda, own);
    spin_kernel<<<1, 1, 0, own.native()>>>(cycles_for_ms(200));
    ya = fft(xa.view, {.axes = {1}, .stream = own});  // queued behind the spin when the thread ends
  });
  // The driver's cleanup of a thread that used the stream-ordered allocator and ends with work queued on its
  // per-thread stream never returns; cuplan drains that stream first (docs/streams.md). A hang fails here.
  testing::join_or_exit(worker, std::chrono::seconds(30),
                        "a thread that ended with an fft queued on its per-thread default stream");
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_LT(relative_error(to_dense(ya.view()), reference_dft(a.dense(), {32, 64}, {1}, -1)), tolerance(f32, 64));
}

TEST(FftStreams, DestroyingACachedPlanWaitsForItsPendingTransform) {
  CUPLAN_REQUIRE_GPU();
  plan_cache::clear();
  Stream s(Device::cuda(0));
  Tensor x = Tensor::empty({64, 128}, c64, Device::cuda(0), s);
  CUPLAN_TEST_CUDA(cudaMemsetAsync(x.data(), 0, static_cast<std::size_t>(x.numel()) * 8, s.native()));
  (void)fft(x, {.axes = {1}, .stream = s});  // plans first: making a cuFFT plan may wait for the device
  s.synchronize();
  spin_kernel<<<1, 1, 0, s.native()>>>(cycles_for_ms(300));
  CUPLAN_TEST_CUDA(cudaGetLastError());
  Tensor y = fft(x, {.axes = {1}, .stream = s});  // the cached plan's transform, queued behind the spin
  ASSERT_EQ(cudaStreamQuery(s.native()), cudaErrorNotReady) << "the spin kernel ended too early to test anything";
  (void)cudaGetLastError();  // "not ready" is an answer, not an error to leave for a later check
  plan_cache::clear();       // destroys the idle plan, whose transform is still queued
  EXPECT_EQ(cudaStreamQuery(s.native()), cudaSuccess) << "the plan was destroyed while its transform was queued";
  s.synchronize();
}

TEST(FftStreams, ReleasedWorkspaceIsReallocatedOnTheNextStream) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  auto host = HostArray<std::complex<float>>::random({8, 4096});
  Operand x = to_space(host, Space::cuda, s1);
  FFT f(x.view, {.axes = {1}});
  f.plan(s1);
  spin(s1);
  Tensor y1 = f.execute({.stream = s1, .release_workspace = true});
  Tensor y2 = f.execute({.stream = s2});
  s2.synchronize();
  s1.synchronize();
  const auto expected = reference_dft(host.dense(), {8, 4096}, {1}, -1);
  EXPECT_LT(relative_error(to_dense(y1.view()), expected), tolerance(f32, 4096));
  EXPECT_LT(relative_error(to_dense(y2.view()), expected), tolerance(f32, 4096));
}

}  // namespace
}  // namespace cuplan::testing
