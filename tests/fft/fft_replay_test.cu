// SPDX-License-Identifier: Apache-2.0
// FFT executes replayed as CUDA graphs: a replay transforms the operand's current values with the planned
// normalisation, in stream order, for each direction and output it has seen, and a caller's own capture still works.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fft/fft_test_util.hpp"
#include "runtime/spin_kernel.cuh"

namespace cuplan::testing {
namespace {

const std::vector<std::int64_t> kShape{8, 64};
const std::vector<int> kAxis{1};
constexpr double kTol = 1e-4;

/// Fresh random c64 values copied into `x` (same memory every time), in `s`'s order.
std::vector<cd> refill(const Tensor& x, StreamRef s) {
  auto host = HostArray<std::complex<float>>::random(kShape);
  copy(host.view(), x.view(), s);
  return host.dense();
}

/// `y` filled with NaN bits, in `s`'s order.
void poison(const Tensor& y, StreamRef s) {
  CUPLAN_TEST_CUDA(cudaMemsetAsync(y.data(), 0xff, static_cast<std::size_t>(y.numel()) * y.dtype().size(), s.native()));
}

Tensor device_c64(Stream& s, int device = 0) {
  return Tensor::empty(Shape(std::span<const std::int64_t>(kShape)), c64, Device::cuda(device), s);
}

TEST(FftReplay, RepeatedExecutesTransformTheOperandsCurrentValues) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  Tensor x = device_c64(s), y = device_c64(s);
  FFT plan(x, {.axes = kAxis, .normalization = Normalization::ortho});
  plan.plan(s);
  for (int i = 0; i < 4; ++i) {  // the second and later calls are replays, scaling kernel included
    const auto values = refill(x, s);
    poison(y, s);
    (void)plan.execute({.stream = s, .out = y.view()});
    s.synchronize();
    const auto expected = scaled(reference_dft(values, kShape, kAxis, -1), 1.0 / std::sqrt(64.0));
    EXPECT_LT(relative_error(to_dense(y.view()), expected), kTol) << "call " << i;
  }
}

TEST(FftReplay, BothDirectionsAndTwoOutputsEachReplayTheirOwnWork) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  Tensor x = device_c64(s), f = device_c64(s), b = device_c64(s);
  FFT plan(x, {.axes = kAxis, .normalization = Normalization::inverse});
  plan.plan(s);
  for (int i = 0; i < 4; ++i) {
    const auto values = refill(x, s);
    poison(f, s);
    poison(b, s);
    (void)plan.execute({.direction = Direction::forward, .stream = s, .out = f.view()});
    (void)plan.execute({.direction = Direction::inverse, .stream = s, .out = b.view()});
    s.synchronize();
    EXPECT_LT(relative_error(to_dense(f.view()), reference_dft(values, kShape, kAxis, -1)), kTol) << "call " << i;
    EXPECT_LT(relative_error(to_dense(b.view()), scaled(reference_dft(values, kShape, kAxis, +1), 1.0 / 64.0)), kTol)
        << "call " << i;
  }
}

TEST(FftReplay, RealToComplexRepeated) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  Tensor x = Tensor::empty(Shape(std::span<const std::int64_t>(kShape)), f32, Device::cuda(0), s);
  Tensor y = Tensor::empty({kShape[0], kShape[1] / 2 + 1}, c64, Device::cuda(0), s);
  FFT plan(x, {.axes = kAxis, .normalization = Normalization::forward});
  plan.plan(s);
  for (int i = 0; i < 3; ++i) {
    auto host = HostArray<float>::random(kShape);
    copy(host.view(), x.view(), s);
    poison(y, s);
    (void)plan.execute({.stream = s, .out = y.view()});
    s.synchronize();
    const auto full = scaled(reference_dft(host.dense(), kShape, kAxis, -1), 1.0 / 64.0);
    EXPECT_LT(relative_error(to_dense(y.view()), truncate_axis(full, kShape, 1, kShape[1] / 2 + 1)), kTol)
        << "call " << i;
  }
}

TEST(FftReplay, ACallersOwnGraphCaptureRecordsTheTransform) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  Tensor x = device_c64(s), y = device_c64(s);
  FFT plan(x, {.axes = kAxis});
  plan.plan(s);
  (void)refill(x, s);
  (void)plan.execute({.stream = s, .out = y.view()});
  (void)plan.execute({.stream = s, .out = y.view()});  // replayed from here on
  s.synchronize();
  cudaGraph_t graph = nullptr;
  CUPLAN_TEST_CUDA(cudaStreamBeginCapture(s.native(), cudaStreamCaptureModeThreadLocal));
  (void)plan.execute({.stream = s, .out = y.view()});
  CUPLAN_TEST_CUDA(cudaStreamEndCapture(s.native(), &graph));
  cudaGraphExec_t exec = nullptr;
  CUPLAN_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  const auto values = refill(x, s);
  poison(y, s);
  CUPLAN_TEST_CUDA(cudaGraphLaunch(exec, s.native()));
  s.synchronize();
  EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(values, kShape, kAxis, -1)), kTol);
  CUPLAN_TEST_CUDA(cudaGraphExecDestroy(exec));
  CUPLAN_TEST_CUDA(cudaGraphDestroy(graph));
}

TEST(FftReplay, AnObjectOnTheSecondDeviceReplaysThereWhileTheFirstIsCurrent) {
  CUPLAN_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs; this machine has " << cuda_device_count();
  DeviceScope on_second(Device::cuda(1));
  Stream s;  // of device 1
  Tensor x = device_c64(s, 1), y = device_c64(s, 1);
  FFT plan(x, {.axes = kAxis});
  plan.plan(s);
  for (int i = 0; i < 4; ++i) {
    const auto values = refill(x, s);
    poison(y, s);
    {
      DeviceScope caller(Device::cuda(0));  // execute makes device 1 current for its work, capture included
      (void)plan.execute({.stream = s, .out = y.view()});
      int current = -1;
      CUPLAN_TEST_CUDA(cudaGetDevice(&current));
      EXPECT_EQ(current, 0);
    }
    s.synchronize();
    EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(values, kShape, kAxis, -1)), kTol) << "call " << i;
  }
}

TEST(FftReplay, FunctionFormAndReplayOffGiveTheSameResults) {
  CUPLAN_REQUIRE_GPU();
  Stream s;
  Tensor x = device_c64(s), y = device_c64(s), z = device_c64(s);
  FFT direct(x, {.axes = kAxis, .graph_replay = false});
  direct.plan(s);
  for (int i = 0; i < 3; ++i) {
    const auto values = refill(x, s);
    poison(y, s);
    poison(z, s);
    fft(x, y.view(), {.axes = kAxis, .normalization = Normalization::ortho, .stream = s});
    (void)direct.execute({.stream = s, .out = z.view()});
    s.synchronize();
    const auto expected = reference_dft(values, kShape, kAxis, -1);
    EXPECT_LT(relative_error(to_dense(y.view()), scaled(expected, 1.0 / std::sqrt(64.0))), kTol) << "call " << i;
    EXPECT_LT(relative_error(to_dense(z.view()), expected), kTol) << "call " << i;
  }
}

}  // namespace
}  // namespace cuplan::testing
