// SPDX-License-Identifier: Apache-2.0
// FFT callbacks and the stream contract on the GPU: an execute that brings a new user data pointer, queued behind a
// ~50 ms spin kernel on its stream, returns before the spin ends and uses the new pointer (the caller_info block is
// rewritten in stream order, never by a host copy that would wait for the stream); plan on one stream and execute
// on another. Skipped without a GPU.

#include <gtest/gtest.h>

#include <chrono>

#include "fft/callback_sources.hpp"
#include "fft/fft_test_util.hpp"
#include "runtime/spin_kernel.cuh"

namespace cuplan::testing {
namespace {

using cf = std::complex<float>;
constexpr double kSpinMs = 50.0;

TEST(FftCallbacksStreams, ANewUserDataPointerIsWrittenInStreamOrderWithoutBlockingTheHost) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  const std::vector<std::int64_t> shape{32, 256};
  auto host = HostArray<cf>::random(shape);
  Operand x = to_space(host, Space::cuda, s1);
  Tensor factors = Tensor::empty({2}, f32, Device::cuda(0), s1);
  float values[2] = {2.0f, 5.0f};
  copy(TensorView(values, {2}), factors.view(), s1);
  float* const two = factors.data<float>();
  float* const five = two + 1;
  FFT f(x.view, {.axes = {1}, .stream = s1, .prolog = FFTCallback::cuda_source(kScaleSource, "scale_by", two)});
  f.plan(s1);  // compiles and links here, not in execute
  const auto reference = reference_dft(host.dense(), shape, {1}, -1);
  Tensor first = f.execute({.stream = s1});
  spin_kernel<<<1, 1, 0, s2.native()>>>(cycles_for_ms(kSpinMs));
  CUPLAN_TEST_CUDA(cudaGetLastError());
  const auto t0 = std::chrono::steady_clock::now();
  Tensor second = f.execute({.stream = s2, .prolog_data = five});  // ordered after the first by the object
  const double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(host_ms, kSpinMs / 2) << "execute waited for the stream";
  s2.synchronize();
  EXPECT_LT(relative_error(to_dense(first.view()), scaled(reference, 2.0)), tolerance(c64, 256));
  EXPECT_LT(relative_error(to_dense(second.view()), scaled(reference, 5.0)), tolerance(c64, 256));
}

}  // namespace
}  // namespace cuplan::testing
