// SPDX-License-Identifier: Apache-2.0
// A planned transform of a device operand does not block the host: with a long spin kernel queued on the stream,
// execute (class form, graph replay on and off, with normalisation, over the leading axis) and the function
// form's cache hit return while the spin still runs. Planning itself may block (docs/streams.md, "Planning").

#include <gtest/gtest.h>

#include <chrono>

#include "cuplan/cuplan.hpp"
#include "runtime/spin_kernel.cuh"
#include "support/test_support.hpp"

namespace cuplan::testing {
namespace {

// Queues a 400 ms spin on `s`, runs `call`, and checks that it returned while the spin was still running.
template <class Call>
void expect_returns_during_spin(Stream& s, Call&& call, const char* what) {
  const CallBehindSpin r = call_behind_spin(s.native(), 400, std::forward<Call>(call));
  EXPECT_TRUE(r.returned_during_spin) << what << ": returned only after the queued spin ended";
  EXPECT_LT(r.host_ms, 200.0) << what << ": blocked the host for " << r.host_ms << " ms";
}

TEST(FftPlannedNonBlocking, ClassFormExecuteReturnsWhileTheStreamIsBusy) {
  CUPLAN_REQUIRE_GPU();
  spin_kernel<<<1, 1>>>(1);  // the spin kernel's own module loads here, not inside the measurement
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  Stream s;
  Tensor x = Tensor::empty({256, 1024}, c64, Device::cuda(0), s);
  CUPLAN_TEST_CUDA(cudaMemsetAsync(x.data(), 0, 256 * 1024 * 8, s.native()));
  for (bool replay : {true, false}) {
    SCOPED_TRACE(replay ? "graph replay" : "direct");
    FFT plain(x, {.axes = {1}, .stream = s, .graph_replay = replay});
    FFT normalized(x, {.axes = {1}, .normalization = Normalization::ortho, .stream = s, .graph_replay = replay});
    FFT leading(x, {.axes = {0}, .stream = s, .graph_replay = replay});
    for (FFT* f : {&plain, &normalized, &leading}) f->plan(s);
    // Several calls each: the replay's capture and instantiation happen among them.
    for (int call = 0; call < 4; ++call) {
      expect_returns_during_spin(
          s, [&] { (void)plain.execute({.stream = s}); }, "plain");
      expect_returns_during_spin(
          s, [&] { (void)normalized.execute({.stream = s}); }, "normalized");
      expect_returns_during_spin(
          s, [&] { (void)leading.execute({.stream = s}); }, "leading axis");
    }
  }
}

TEST(FftPlannedNonBlocking, FunctionFormCacheHitReturnsWhileTheStreamIsBusy) {
  CUPLAN_REQUIRE_GPU();
  spin_kernel<<<1, 1>>>(1);
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  Stream s;
  Tensor x = Tensor::empty({128, 512}, c64, Device::cuda(0), s);
  CUPLAN_TEST_CUDA(cudaMemsetAsync(x.data(), 0, 128 * 512 * 8, s.native()));
  (void)fft(x, {.axes = {1}, .stream = s});  // plans (may block: the first call for a shape)
  for (int call = 0; call < 4; ++call)
    expect_returns_during_spin(
        s, [&] { (void)fft(x, {.axes = {1}, .stream = s}); }, "fft cache hit");
}

}  // namespace
}  // namespace cuplan::testing
