// SPDX-License-Identifier: Apache-2.0
// Stream contract of Matmul on the GPU. Each test delays the producer side with a long spin kernel, so a missing
// ordering edge shows up as a wrong result instead of passing by luck.
#include <gtest/gtest.h>

#include <vector>

#include "base/cuda_check.hpp"
#include "cuplan/cuplan.hpp"
#include "matmul/matmul_test_kernels.cuh"
#include "support/test_support.hpp"

namespace cuplan::testing {
namespace {

std::vector<float> to_host(const Tensor& t) {
  std::vector<float> h(static_cast<std::size_t>(t.numel()));
  CUPLAN_CUDA_CHECK(cudaMemcpy(h.data(), t.data(), h.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// Products of constant matrices: every element of D = k * a * b.
constexpr std::int64_t n = 256;

/// An n x n f32 matrix on cuda:0, allocated on `s` and filled with `value` there.
Tensor constant(float value, StreamRef s) {
  Tensor t = Tensor::empty({n, n}, f32, Device::cuda(0), s);
  launch_fill(t.data<float>(), n * n, value, s);
  return t;
}

/// A producer that finishes late: after a spin of `cycles` on `s`, fills every element of `t` with `value` there.
void fill_late(const Tensor& t, float value, StreamRef s, long long cycles = long_spin) {
  spin<<<1, 1, 0, s.native()>>>(cycles);
  launch_fill(t.data<float>(), t.numel(), value, s.native());
}

TEST(MatmulStream, AfterEventsOrderTheProducer) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  Tensor a = constant(1.0f, s1), b = constant(1.0f, s1);
  Matmul mm(a, b);
  mm.plan({.stream = s2});
  s2.synchronize();
  s1.synchronize();
  // The producer on s1 writes A late; execute on s2 waits for it only through `after`.
  fill_late(a, 2.0f, s1);
  Event produced;
  produced.record(s1);
  Tensor d = mm.execute({.stream = s2, .after = {produced}});
  s2.synchronize();
  for (float v : to_host(d)) ASSERT_EQ(v, 2.0f * n);
}

TEST(MatmulStream, ObjectOptionsGiveTheDefaultStreamAndTheFirstPlanWaitsForTheirEvents) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  Tensor a = Tensor::empty({n, n}, f32, Device::cuda(0), s1), b = Tensor::empty({n, n}, f32, Device::cuda(0), s1);
  launch_fill(b.data<float>(), n * n, 1.0f, s1);
  // Longer than usual: plan() below may create the library handle and query heuristics before execute is enqueued.
  fill_late(a, 4.0f, s1, 10 * long_spin);
  Event produced;
  produced.record(s1);
  // No stream on plan or execute: both run on s2 (the object's stream), after `produced`.
  Matmul mm(a, b, {.stream = s2, .after = {produced}});
  mm.plan();
  Tensor d = mm.execute();
  s2.synchronize();
  for (float v : to_host(d)) ASSERT_EQ(v, 4.0f * n);
}

TEST(MatmulStream, ResetOnAnotherStreamIsOrderedAfterTheLastExecute) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  Tensor a = constant(3.0f, s1), b = constant(1.0f, s1), a2 = constant(5.0f, s1);
  Matmul mm(a, b);
  mm.plan({.stream = s1});
  spin<<<1, 1, 0, s1>>>(long_spin);  // the execute below starts late
  Tensor d = mm.execute({.stream = s1});
  // Reset from s2: the library makes s2 wait for the execute, so overwriting the old A on s2 is safe.
  mm.reset_operand(MatmulOperand::a, a2, s2);
  launch_fill(a.data<float>(), n * n, -100.0f, s2);
  s2.synchronize();
  s1.synchronize();
  for (float v : to_host(d)) ASSERT_EQ(v, 3.0f * n);
  Tensor d2 = mm.execute({.stream = s2});
  s2.synchronize();
  for (float v : to_host(d2)) ASSERT_EQ(v, 5.0f * n);
}

TEST(MatmulStream, OptionsStreamIsTheDefaultOfExecuteAndResetOperand) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  Tensor a = constant(2.0f, s1), b = constant(1.0f, s1), b2 = constant(3.0f, s1);
  s1.synchronize();
  Matmul mm(a, b, {.stream = s2});
  mm.plan();
  // A producer on s2 rewrites B late: execute without a stream runs on s2 (the options' stream), after it.
  fill_late(b, 4.0f, s2);
  Tensor d = mm.execute();
  s2.synchronize();
  for (float v : to_host(d)) ASSERT_EQ(v, 2.0f * 4.0f * n);
  // Reset without a stream orders s2 (not the current stream) after the last phase, an execute on s1 that starts
  // late: overwriting the old B on s2 afterwards is safe.
  spin<<<1, 1, 0, s1>>>(long_spin);
  Tensor d1 = mm.execute({.stream = s1});
  mm.reset_operand(MatmulOperand::b, b2);
  launch_fill(b.data<float>(), n * n, -100.0f, s2);
  s1.synchronize();
  s2.synchronize();
  for (float v : to_host(d1)) ASSERT_EQ(v, 2.0f * 4.0f * n);
  Tensor d2 = mm.execute();
  s2.synchronize();
  for (float v : to_host(d2)) ASSERT_EQ(v, 2.0f * 3.0f * n);
}

TEST(MatmulStream, ExecuteOnAnotherStreamWaitsForThePreviousPhase) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  Tensor a = constant(1.0f, s1), b = constant(1.0f, s1);
  s1.synchronize();
  Matmul mm(a, b, {.epilog = Epilog::relu});
  mm.plan({.stream = s1});
  spin<<<1, 1, 0, s1>>>(long_spin);
  Tensor d1 = mm.execute({.stream = s1});
  // Both executes share the object's workspace: the second, on s2, must not overlap the first.
  Tensor d2 = mm.execute({.stream = s2});
  // A write to A on s2 after the second execute must not be seen by the first.
  launch_fill(a.data<float>(), n * n, -1.0f, s2);
  s2.synchronize();
  s1.synchronize();
  for (float v : to_host(d1)) ASSERT_EQ(v, float(n));
  for (float v : to_host(d2)) ASSERT_EQ(v, float(n));
}

TEST(MatmulStream, HostOperandsBlockAndDeviceOperandsDoNot) {
  CUPLAN_REQUIRE_GPU();
  Stream s1;
  std::vector<float> ha(n * n, 1.0f), hb(n * n, 0.5f);
  Tensor host_result = matmul(TensorView(ha.data(), {n, n}), TensorView(hb.data(), {n, n}), {.stream = s1});
  ASSERT_TRUE(host_result.view().on_host());
  for (std::int64_t i = 0; i < host_result.numel(); ++i) ASSERT_EQ(host_result.data<float>()[i], 0.5f * n);
  Tensor a = constant(1.0f, s1), b = constant(1.0f, s1);
  // Warm up: handle creation and planning (which may allocate) happen here, not behind the spin kernel.
  (void)matmul(a, b, {.stream = s1});
  s1.synchronize();
  spin<<<1, 1, 0, s1>>>(long_spin);
  Tensor d = matmul(a, b, {.stream = s1});
  EXPECT_FALSE(s1.done()) << "a device-operand matmul returned only after the work finished";
  s1.synchronize();
  for (float v : to_host(d)) ASSERT_EQ(v, float(n));
}

}  // namespace
}  // namespace cuplan::testing
