// SPDX-License-Identifier: Apache-2.0
// One rule for FFT and Matmul: CPU execution of device operands copies them to the host, computes, and gives the
// result back on the operands' device (docs/getting-started.md, the blocking rule). An `out` must be device memory.
// The options' `after` events order the operands' producers before the first phase on the CPU route as on the GPU.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <complex>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "fft/fft_test_util.hpp"
#include "plan/plan_test_values.hpp"

namespace cuplan::testing {
namespace {

// A producer that is still running when the object is made and planned: after 200 ms it writes the operand's values
// into its (pinned host) memory, from a host function on a stream; an event recorded after it marks them ready.
struct LateFill {
  void* target;
  const void* values;
  std::size_t bytes;
};
void CUDART_CB sleep_then_fill(void* data) {
  const auto* fill = static_cast<const LateFill*>(data);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::memcpy(fill->target, fill->values, fill->bytes);
}

class CpuExecutionOfDeviceOperands : public ::testing::Test {
 protected:
  void SetUp() override {
    CUPLAN_REQUIRE_GPU();
    stream_.emplace(Device::cuda(0));
  }
  std::optional<Stream> stream_;  // made in SetUp, once a GPU is known to exist

  /// A pinned host tensor holding zeros now and `values` once the returned event completes (about 200 ms later).
  Tensor filled_late(const Tensor& values, LateFill& fill, Event& ready) const {
    Tensor x = Tensor::empty(values.shape(), values.dtype(), Device::cpu(), {}, HostMemory::pinned);
    const std::size_t bytes = static_cast<std::size_t>(values.numel()) * values.dtype().size();
    std::memset(x.data(), 0, bytes);
    fill = {x.data(), values.data(), bytes};
    EXPECT_EQ(cudaLaunchHostFunc(stream_->native(), sleep_then_fill, &fill), cudaSuccess);
    ready.record(*stream_);
    return x;
  }

  /// Fills a device output with NaN bytes on the test's stream, so a result that is never written cannot pass.
  void poison(const Tensor& out) const {
    ASSERT_EQ(cudaMemsetAsync(out.data(), 0xff, static_cast<std::size_t>(out.numel()) * out.dtype().size(),
                              stream_->native()),
              cudaSuccess);
  }
};

TEST_F(CpuExecutionOfDeviceOperands, FftResultIsOnTheOperandsDevice) {
  const auto values = random_values(6 * 32, true, rng());
  const Tensor x = host_tensor(values, {6, 32}, c64).to(Device::cuda(0), *stream_);
  const auto ref = reference_dft(values, {6, 32}, {1}, -1);
  const FFTOptions options{.axes = {1}, .execution = Execution::cpu(), .stream = *stream_};

  const Tensor y = fft(x, options);
  EXPECT_FALSE(y.view().on_host());
  EXPECT_EQ(y.device(), Device::cuda(0));
  EXPECT_LT(relative_error(to_dense(y.to(Device::cpu(), *stream_).view()), ref), tolerance(c64, 32));

  FFT plan(x, options);
  plan.plan();
  Tensor out = Tensor::empty({6, 32}, c64, Device::cuda(0), *stream_);
  poison(out);
  plan.execute({.out = out.view()});
  EXPECT_LT(relative_error(to_dense(out.to(Device::cpu(), *stream_).view()), ref), tolerance(c64, 32));
  Tensor host_out = Tensor::empty({6, 32}, c64, Device::cpu());
  EXPECT_THROW(plan.execute({.out = host_out.view()}), InvalidArgument);
}

TEST_F(CpuExecutionOfDeviceOperands, MatmulResultIsOnTheOperandsDeviceAsForFft) {
  const int m = 7, n = 5, k = 9;
  const auto av = random_values(m * k, false, rng()), bv = random_values(k * n, false, rng());
  const Tensor a = host_tensor(av, {m, k}, f64).to(Device::cuda(0), *stream_);
  const Tensor b = host_tensor(bv, {k, n}, f64).to(Device::cuda(0), *stream_);
  const auto ref = reference_product(av, bv, m, n, k);
  const MatmulOptions options{.execution = Execution::cpu(), .stream = *stream_};

  const Tensor d = matmul(a, b, options);
  EXPECT_FALSE(d.view().on_host());
  EXPECT_EQ(d.device(), Device::cuda(0));
  EXPECT_LT(relative_error(to_dense(d.to(Device::cpu(), *stream_).view()), ref), 1e-12);

  Matmul plan(a, b, options);
  plan.plan();
  Tensor out = Tensor::empty_strided(plan.result_shape(), plan.result_strides(), f64, Device::cuda(0), *stream_);
  poison(out);
  plan.execute({.out = out.view()});
  EXPECT_LT(relative_error(to_dense(out.to(Device::cpu(), *stream_).view()), ref), 1e-12);
  Tensor host_out = Tensor::empty_strided(plan.result_shape(), plan.result_strides(), f64, Device::cpu());
  EXPECT_THROW(plan.execute({.out = host_out.view()}), InvalidArgument);
  // The same object keeps working after the refused call.
  const Tensor again = plan.execute();
  EXPECT_EQ(again.device(), Device::cuda(0));
  EXPECT_LT(relative_error(to_dense(again.to(Device::cpu(), *stream_).view()), ref), 1e-12);
}

TEST_F(CpuExecutionOfDeviceOperands, FftOptionsAfterOrdersTheOperandsProducerBeforeTheCpuTransform) {
  const auto values = random_values(6 * 32, true, rng());
  const Tensor produced = host_tensor(values, {6, 32}, c64);
  LateFill fill{};
  Event ready(Device::cuda(0), false);
  const Tensor x = filled_late(produced, fill, ready);
  FFT plan(x, {.axes = {1}, .execution = Execution::cpu(), .after = {ready}});
  plan.plan();
  const Tensor y = plan.execute();
  EXPECT_LT(relative_error(to_dense(y.view()), reference_dft(values, {6, 32}, {1}, -1)), tolerance(c64, 32));
  stream_->synchronize();  // `fill` outlives the host function
}

TEST_F(CpuExecutionOfDeviceOperands, MatmulOptionsAfterOrdersTheOperandsProducerBeforeTheCpuProduct) {
  const int m = 7, n = 5, k = 9;
  const auto av = random_values(m * k, false, rng()), bv = random_values(k * n, false, rng());
  const Tensor produced = host_tensor(av, {m, k}, f64);
  const Tensor b = host_tensor(bv, {k, n}, f64);
  LateFill fill{};
  Event ready(Device::cuda(0), false);
  const Tensor a = filled_late(produced, fill, ready);
  Matmul plan(a, b, {.execution = Execution::cpu(), .after = {ready}});
  plan.plan();
  const Tensor d = plan.execute();
  EXPECT_LT(relative_error(to_dense(d.view()), reference_product(av, bv, m, n, k)), 1e-12);
  stream_->synchronize();
}

// Without a GPU, device memory cannot be copied to the host: CPU execution of a device operand is refused when the
// object is made (and by the function forms at the call), as automatic execution's is, naming the operation, the
// operand and its device. It used to be accepted and fail at execute on an internal allocation's message.
TEST(CpuExecutionWithoutAGpu, DeviceOperandsAreNotSupportedAtConstructionNamingTheOperand) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this test covers machines without one";
  std::vector<std::complex<float>> host(64);
  const auto device_view = [&](DType dtype, Shape shape) {
    return TensorView(host.data(), dtype, shape, row_major_strides(shape), Device::cuda(0), MemorySpace::device);
  };
  const TensorView c = device_view(c64, {4, 8}), r = device_view(f32, {4, 8}), k = device_view(f32, {1, 3});
  const TensorView a = device_view(f32, {4, 4}), b = device_view(f32, {4, 4});
  const Execution cpu = Execution::cpu();
  const std::vector<std::pair<const char*, std::function<void()>>> calls = {
      {"FFT: operand", [&] { FFT(c, {.execution = cpu}); }},
      {"FFT: operand", [&] { (void)fft(c, {.execution = cpu}); }},
      {"RealTransform: operand", [&] { RealTransform(r, {.execution = cpu}); }},
      {"dct: operand", [&] { (void)dct(r, {.execution = cpu}); }},
      {"Convolution: operand", [&] { Convolution(r, k, {.execution = cpu}); }},
      {"Convolution: operand", [&] { (void)fftconvolve(r, k, {.execution = cpu}); }},
      {"Matmul: a", [&] { Matmul(a, b, {.execution = cpu}); }},
      {"matmul: a", [&] { (void)matmul(a, b, {.execution = cpu}); }},
  };
  for (const auto& [names, call] : calls) {
    try {
      call();
      ADD_FAILURE() << "a device operand with CPU execution was accepted without a GPU";
    } catch (const NotSupported& error) {
      const std::string message = error.what();
      for (const char* fragment : {names, "is in memory of cuda:0", "no CUDA device"})
        EXPECT_NE(message.find(fragment), std::string::npos) << "missing '" << fragment << "' in: " << message;
    }
  }
}

}  // namespace
}  // namespace cuplan::testing
