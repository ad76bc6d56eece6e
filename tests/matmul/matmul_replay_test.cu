// SPDX-License-Identifier: Apache-2.0
// Matmul executes replayed as CUDA graphs: a replay computes with the operands' current values, in stream order,
// and anything that changes the work (other operands, scalars, algorithm order, a caller's own capture) is honoured.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "base/cuda_check.hpp"
#include "cuplan/cuplan.hpp"
#include "matmul/matmul_test_kernels.cuh"
#include "support/test_support.hpp"

namespace cuplan::testing {
namespace {

constexpr std::int64_t n = 192;

void fill_tensor(const Tensor& t, float v, cudaStream_t s) {
  launch_fill(t.data<float>(), t.numel(), v, s);
}

std::vector<float> to_host(const Tensor& t, StreamRef s) {
  std::vector<float> h(static_cast<std::size_t>(t.numel()));
  CUPLAN_CUDA_CHECK(cudaMemcpyAsync(h.data(), t.data(), h.size() * sizeof(float), cudaMemcpyDeviceToHost, s.native()));
  CUPLAN_CUDA_CHECK(cudaStreamSynchronize(s.native()));
  return h;
}

/// Expects every element of `d` to be `value` (products of constant matrices are exact in f32 at this size).
void expect_all(const Tensor& d, float value, StreamRef s) {
  for (float v : to_host(d, s)) ASSERT_EQ(v, value);
}

Tensor constant(float value, Stream& s, int device = 0) {
  Tensor t = Tensor::empty({n, n}, f32, Device::cuda(device), s);
  fill_tensor(t, value, s.native());
  return t;
}

/// Fills A (of `mm`, with B all ones) with `value`, poisons `d`, executes into `d` on `s` and expects every element
/// of the product to be value * n.
void execute_with_a_of(Matmul& mm, float value, const Tensor& a, const Tensor& d, Stream& s) {
  fill_tensor(a, value, s.native());
  fill_tensor(d, -1.0f, s.native());  // poison
  (void)mm.execute({.stream = s, .out = d.view()});
  expect_all(d, value * n, s);
}

TEST(MatmulReplay, RepeatedExecutesReadTheOperandsCurrentValues) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  Tensor a = constant(1.0f, s), b = constant(1.0f, s), d = constant(-1.0f, s);
  Matmul mm(a, b);
  mm.plan({.stream = s});
  for (int i = 1; i <= 5; ++i) {  // the second and later executes are replays
    execute_with_a_of(mm, static_cast<float>(i), a, d, s);
  }
}

TEST(MatmulReplay, PingPongOutputsEachGetTheirProduct) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  Tensor a = constant(1.0f, s), b = constant(1.0f, s), d0 = constant(0.0f, s), d1 = constant(0.0f, s);
  Matmul mm(a, b);
  mm.plan({.stream = s});
  for (int i = 1; i <= 8; ++i) {  // from the third call on, both outputs have a graph
    const Tensor& d = i % 2 == 0 ? d0 : d1;
    execute_with_a_of(mm, static_cast<float>(i), a, d, s);
  }
}

TEST(MatmulReplay, RandomOperandsMatchTheFloat64Reference) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  const std::int64_t m = 67, k = 45, cols = 29;  // not multiples of 8
  Tensor a = Tensor::empty({m, k}, f32, Device::cuda(0), s), b = Tensor::empty({k, cols}, f32, Device::cuda(0), s);
  Tensor d = Tensor::empty({m, cols}, f32, Device::cuda(0), s);
  Matmul mm(a, b);
  mm.plan({.stream = s});
  for (int round = 0; round < 3; ++round) {
    const auto ha = random_vector<float>(static_cast<std::size_t>(m * k));
    const auto hb = random_vector<float>(static_cast<std::size_t>(k * cols));
    copy(TensorView(ha.data(), {m, k}), a, s);
    copy(TensorView(hb.data(), {k, cols}), b, s);
    fill_tensor(d, std::nanf(""), s.native());
    (void)mm.execute({.stream = s, .out = d.view()});
    const std::vector<float> hd = to_host(d, s);
    std::vector<double> ref(static_cast<std::size_t>(m * cols), 0.0);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        for (std::int64_t p = 0; p < k; ++p)
          ref[static_cast<std::size_t>(i * cols + j)] +=
              static_cast<double>(ha[static_cast<std::size_t>(i * k + p)]) *
              static_cast<double>(hb[static_cast<std::size_t>(p * cols + j)]);
    EXPECT_LT(relative_error(hd, ref), 1e-5) << "round " << round;
  }
}

TEST(MatmulReplay, AReplayedExecuteOnAnotherStreamWaitsForTheProducerEvent) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  Tensor a = constant(1.0f, s1), b = constant(1.0f, s1), d = constant(0.0f, s1);
  s1.synchronize();
  Matmul mm(a, b);
  mm.plan({.stream = s2});
  (void)mm.execute({.stream = s2, .out = d.view()});
  (void)mm.execute({.stream = s2, .out = d.view()});  // captured from here on
  s2.synchronize();
  spin<<<1, 1, 0, s1.native()>>>(long_spin);
  fill_tensor(a, 3.0f, s1.native());
  Event produced;
  produced.record(s1);
  (void)mm.execute({.stream = s2, .after = {produced}, .out = d.view()});
  expect_all(d, 3.0f * n, s2);
}

TEST(MatmulReplay, NewOperandsScalarsAndAutotuneAreHonoured) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  Tensor a = constant(1.0f, s), b = constant(2.0f, s), a2 = constant(5.0f, s), d = constant(0.0f, s);
  Matmul mm(a, b);
  mm.plan({.stream = s});
  for (int i = 0; i < 3; ++i) (void)mm.execute({.stream = s, .out = d.view()});
  expect_all(d, 2.0f * n, s);
  mm.reset_operand(MatmulOperand::a, a2, s);
  (void)mm.execute({.stream = s, .out = d.view()});
  expect_all(d, 10.0f * n, s);
  mm.reset_operand(MatmulOperand::a, a, s);
  (void)mm.execute({.stream = s, .out = d.view()});  // the graph captured for `a` replays again
  expect_all(d, 2.0f * n, s);
  mm.autotune({.iterations = 3, .stream = s});
  fill_tensor(d, -1.0f, s.native());
  (void)mm.execute({.stream = s, .out = d.view()});
  (void)mm.execute({.stream = s, .out = d.view()});
  expect_all(d, 2.0f * n, s);
}

TEST(MatmulReplay, FunctionFormWithNewScalarsOnTheSameTensors) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  Tensor a = constant(1.0f, s), b = constant(1.0f, s), c = constant(4.0f, s);
  for (float alpha : {2.0f, 2.0f, 2.0f, 3.0f, 3.0f, 0.5f}) {
    Tensor d = matmul(a, b, {.c = c, .alpha = alpha, .beta = 0.25, .stream = s});
    expect_all(d, alpha * n + 1.0f, s);
  }
}

TEST(MatmulReplay, ACallersOwnGraphCaptureRecordsTheProduct) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  Tensor a = constant(1.0f, s), b = constant(1.0f, s), d = constant(0.0f, s);
  Matmul mm(a, b);
  mm.plan({.stream = s});
  (void)mm.execute({.stream = s, .out = d.view()});
  (void)mm.execute({.stream = s, .out = d.view()});
  s.synchronize();
  // The caller captures its own time step: fill A, then the product.
  cudaGraph_t graph = nullptr;
  CUPLAN_CUDA_CHECK(cudaStreamBeginCapture(s.native(), cudaStreamCaptureModeThreadLocal));
  fill_tensor(a, 7.0f, s.native());
  (void)mm.execute({.stream = s, .out = d.view()});
  CUPLAN_CUDA_CHECK(cudaStreamEndCapture(s.native(), &graph));
  cudaGraphExec_t exec = nullptr;
  CUPLAN_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  fill_tensor(d, -1.0f, s.native());
  CUPLAN_CUDA_CHECK(cudaGraphLaunch(exec, s.native()));
  expect_all(d, 7.0f * n, s);
  CUPLAN_CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUPLAN_CUDA_CHECK(cudaGraphDestroy(graph));
  // And the object still works outside the capture.
  fill_tensor(a, 2.0f, s.native());
  (void)mm.execute({.stream = s, .out = d.view()});
  expect_all(d, 2.0f * n, s);
}

TEST(MatmulReplay, ObjectsOnSeveralThreadsCaptureAndReplayIndependently) {
  CUPLAN_REQUIRE_GPU();
  constexpr int threads = 4;
  std::vector<int> failures(threads, 0);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([t, &failures] {
      try {
        Stream s;
        Tensor a = constant(1.0f, s), b = constant(static_cast<float>(t + 1), s), d = constant(0.0f, s);
        Matmul mm(a, b);
        mm.plan({.stream = s});
        for (int i = 1; i <= 6; ++i) {
          fill_tensor(a, static_cast<float>(i), s.native());
          (void)mm.execute({.stream = s, .out = d.view()});
          for (float v : to_host(d, s))
            if (v != static_cast<float>(i * (t + 1) * n)) ++failures[static_cast<std::size_t>(t)];
        }
      } catch (...) {
        failures[static_cast<std::size_t>(t)] = -1;
      }
    });
  }
  for (auto& w : workers) w.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(failures[static_cast<std::size_t>(t)], 0) << "thread " << t;
}

TEST(MatmulReplay, AnObjectOnTheSecondDeviceReplaysThereWhileTheFirstIsCurrent) {
  CUPLAN_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << cuda_device_count();
  DeviceScope on_second(Device::cuda(1));
  Stream s;  // of device 1
  Tensor a = constant(1.0f, s, 1), b = constant(1.0f, s, 1), d = constant(0.0f, s, 1);
  Matmul mm(a, b);
  mm.plan({.stream = s});
  {
    DeviceScope on_first(Device::cuda(0));  // execute makes device 1 current for its work, capture included
    for (int i = 1; i <= 4; ++i) {
      DeviceScope producer(Device::cuda(1));
      fill_tensor(a, static_cast<float>(i), s.native());
      fill_tensor(d, -1.0f, s.native());
      {
        DeviceScope caller(Device::cuda(0));
        (void)mm.execute({.stream = s, .out = d.view()});
      }
      expect_all(d, static_cast<float>(i * n), s);
    }
    int current = -1;
    CUPLAN_CUDA_CHECK(cudaGetDevice(&current));
    EXPECT_EQ(current, 0);
  }
}

TEST(MatmulReplay, ReplayOffGivesTheSameResults) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  Tensor a = constant(1.0f, s), b = constant(1.0f, s), d = constant(0.0f, s);
  Matmul mm(a, b, {.graph_replay = false});
  mm.plan({.stream = s});
  for (int i = 1; i <= 3; ++i) {
    fill_tensor(a, static_cast<float>(i), s.native());
    (void)mm.execute({.stream = s, .out = d.view()});
    expect_all(d, static_cast<float>(i * n), s);
  }
}

TEST(MatmulReplay, HostOperandsReplayWithTheirNewValues) {
  CUPLAN_REQUIRE_GPU();
  std::vector<float> a(static_cast<std::size_t>(n * n)), b(a.size(), 1.0f), d(a.size());
  Matmul mm(TensorView(a.data(), {n, n}), TensorView(b.data(), {n, n}));
  mm.plan();
  for (int i = 1; i <= 4; ++i) {  // blocking calls; the staging buffers stay, so later ones replay
    std::fill(a.begin(), a.end(), static_cast<float>(i));
    std::fill(d.begin(), d.end(), -1.0f);
    (void)mm.execute({.out = TensorView(d.data(), {n, n})});
    for (float v : d) ASSERT_EQ(v, static_cast<float>(i * n));
  }
}

}  // namespace
}  // namespace cuplan::testing
