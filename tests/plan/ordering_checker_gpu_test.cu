// SPDX-License-Identifier: Apache-2.0
// The ordering checker on the GPU: a stream held by a gate kernel keeps cuplan's work pending, so a use of borrowed
// memory (a TensorView) on another stream without an edge must raise OrderingError, and the same program with the
// edge (`.after`, Stream::wait, assume_ordered for an edge made outside cuplan) must pass and give the right values.
// cuplan Tensors are ordered by cuplan itself: their uses on another stream pass and read the right values.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "plan/checking_on.hpp"
#include "runtime/spin_kernel.cuh"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using cuplan::testing::CheckingOn;
using cuplan::testing::HostGate;
using C = std::complex<float>;

class OrderingCheckerGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CUPLAN_REQUIRE_GPU();
    host_ = cuplan::testing::random_vector<C>(rows * cols);
    x_ = Tensor::empty(Shape{rows, cols}, c64, Device::cuda(0), s1_);
    copy(TensorView(host_.data(), Shape{rows, cols}), x_, s1_);
    // The producer's plan first: making a cuFFT plan may wait for work on the device, which would wait for a gate.
    (void)fft(x_, {.stream = s1_});
    s1_.synchronize();
  }
  std::vector<C> to_host(const Tensor& t, StreamRef stream) {
    std::vector<C> out(static_cast<std::size_t>(t.numel()), C(-7.0f, -7.0f));  // poisoned
    copy(t, TensorView(out.data(), Shape{rows, cols}), stream);
    stream.synchronize();
    return out;
  }
  static constexpr std::int64_t rows = 32, cols = 64;
  Stream s1_, s2_;
  std::vector<C> host_;
  Tensor x_;
};

TEST_F(OrderingCheckerGpuTest, ReadOnAnotherStreamWithoutAnEdgeThrowsAndTheFixedProgramPasses) {
  // Plans first: making a cuFFT plan may wait for work on the device (module loading), which would wait for the
  // gate below; the calls under test then hit the plan cache and only enqueue. The reads use plans other than the
  // producer's: a call on the producer's own cached plan is ordered after it by the plan's phase edge.
  (void)fft(x_, {.stream = s1_});
  (void)ifft(x_, {.normalization = Normalization::ortho, .stream = s2_});
  (void)ifft(x_, {.normalization = Normalization::inverse, .stream = s2_});
  s1_.synchronize();
  s2_.synchronize();
  CheckingOn on;
  HostGate gate;
  gate.hold(s1_);
  Tensor y = fft(x_, {.stream = s1_});  // pending behind the gate
  Tensor z = Tensor::empty(Shape{rows, cols}, c64, Device::cuda(0), s2_);
  try {
    copy(y.view(), z.view(), s2_);  // borrowed views: the edge is the caller's to make
    FAIL() << "expected OrderingError";
  } catch (const OrderingError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cuplan::copy: src"), std::string::npos) << message;
    EXPECT_NE(message.find(".after = {event}"), std::string::npos) << message;
  }
  // An FFT on s2 reading y is caught the same way.
  EXPECT_THROW((void)ifft(y.view(), {.normalization = Normalization::ortho, .stream = s2_}), OrderingError);
  // The fixed programs: Stream::wait, then `.after`.
  Event done = s1_.record();
  s2_.wait(done);
  EXPECT_NO_THROW(copy(y, z, s2_));
  Stream s3;
  Tensor back;
  EXPECT_NO_THROW(back = ifft(y, {.normalization = Normalization::inverse, .stream = s3, .after = {done}}));
  gate.open();
  ASSERT_FALSE(gate.timed_out());
  const std::vector<C> z_host = to_host(z, s2_);
  const std::vector<C> y_host = to_host(y, s1_);
  EXPECT_EQ(z_host, y_host);
  const std::vector<C> round_trip = to_host(back, s3);
  EXPECT_LT(cuplan::testing::relative_error(round_trip, host_), 1e-5);
}

TEST_F(OrderingCheckerGpuTest, WriteOverMemoryAPendingCallStillReadsThrows) {
  CheckingOn on;
  HostGate gate;
  gate.hold(s1_);
  Tensor y = fft(x_, {.stream = s1_});  // reads x_ on s1, pending
  std::vector<C> other(static_cast<std::size_t>(rows * cols), C(1.0f, 0.0f));
  EXPECT_THROW(copy(TensorView(other.data(), Shape{rows, cols}), x_.view(), s2_), OrderingError);
  gate.open();
  s1_.synchronize();
  // Completed work needs no edge.
  EXPECT_NO_THROW(copy(TensorView(other.data(), Shape{rows, cols}), x_.view(), s2_));
  s2_.synchronize();
}

TEST_F(OrderingCheckerGpuTest, AnEdgeMadeOutsideCuplanIsDeclaredWithAssumeOrdered) {
  CheckingOn on;
  HostGate gate;
  gate.hold(s1_);
  Tensor y = fft(x_, {.stream = s1_});
  cudaEvent_t raw = nullptr;
  CUPLAN_TEST_CUDA(cudaEventCreateWithFlags(&raw, cudaEventDisableTiming));
  CUPLAN_TEST_CUDA(cudaEventRecord(raw, s1_.native()));  // unseen by the checker
  CUPLAN_TEST_CUDA(cudaStreamWaitEvent(s2_.native(), raw, 0));
  Tensor z = Tensor::empty(Shape{rows, cols}, c64, Device::cuda(0), s2_);
  EXPECT_THROW(copy(y.view(), z.view(), s2_), OrderingError);
  assume_ordered(y.view(), s2_);
  EXPECT_NO_THROW(copy(y.view(), z.view(), s2_));
  gate.open();
  EXPECT_EQ(to_host(z, s2_), to_host(y, s1_));
  CUPLAN_TEST_CUDA(cudaEventDestroy(raw));
}

TEST_F(OrderingCheckerGpuTest, MatmulOperandsAreCheckedAndOffNothingIsThrown) {
  Tensor a = Tensor::empty(Shape{rows, rows}, c64, Device::cuda(0), s1_);
  copy(TensorView(host_.data(), Shape{rows, rows}), a, s1_);
  {
    // Plans first (see above): the products under test then hit the plan cache and only enqueue.
    const Tensor warm = fft(a, {.stream = s1_});
    s1_.synchronize();
    (void)matmul(warm, a, {.stream = s2_});
    (void)matmul(a, a, {.c = warm, .beta = 1.0, .stream = s2_});
    s2_.synchronize();
  }
  {
    CheckingOn on;
    HostGate gate;
    gate.hold(s1_);
    Tensor d = fft(a, {.stream = s1_});
    EXPECT_THROW((void)matmul(d.view(), a, {.stream = s2_}), OrderingError);
    EXPECT_THROW((void)matmul(a, a, {.c = d.view(), .beta = 1.0, .stream = s2_}), OrderingError);
    // As Tensors, cuplan orders them itself: nothing to report.
    EXPECT_NO_THROW((void)matmul(d, a, {.stream = s2_}));
    gate.open();
  }
  // Off: the same unordered program is not the checker's business.
  ASSERT_FALSE(checking());
  HostGate gate;
  gate.hold(s1_);
  Tensor d = fft(a, {.stream = s1_});
  EXPECT_NO_THROW((void)matmul(d.view(), a, {.stream = s2_}));
  gate.open();
  s1_.synchronize();
  s2_.synchronize();
}

// cuplan adds the edge for its own Tensors, and the checker sees it; a borrowed view of the same memory is reported
// on every path, Tensor::to included (it used to take the runtime's copy directly, which the checker never saw).
TEST_F(OrderingCheckerGpuTest, TensorsAreOrderedByCuplanAndViewsAreReportedOnEveryPath) {
  (void)ifft(x_, {.normalization = Normalization::ortho, .stream = s2_});
  s2_.synchronize();
  CheckingOn on;
  HostGate gate;
  gate.hold(s1_);
  Tensor y = fft(x_, {.stream = s1_});  // pending behind the gate
  const Tensor borrowed = Tensor::wrap(y.view());
  EXPECT_THROW((void)borrowed.to(Device::cpu()), OrderingError);  // a blocking read given no stream
  EXPECT_THROW((void)borrowed.to(Device::cuda(0), s2_), OrderingError);
  Tensor z, back;
  EXPECT_NO_THROW(z = y.to(Device::cuda(0), s2_));
  EXPECT_NO_THROW(back = ifft(y, {.normalization = Normalization::ortho, .stream = s2_}));
  EXPECT_FALSE(s2_.done()) << "cuplan's edge is made on the GPU: the host did not wait";
  gate.open();
  ASSERT_FALSE(gate.timed_out());
  EXPECT_EQ(to_host(z, s2_), to_host(y, s1_));
  const std::vector<C> round_trip = to_host(back, s2_);
  std::vector<C> expected = host_;
  for (C& v : expected) v *= std::sqrt(static_cast<float>(rows * cols));  // forward unnormalised, inverse ortho
  EXPECT_LT(cuplan::testing::relative_error(round_trip, expected), 1e-5);
}

// One external work area for two FFT objects on two streams with no edge between them: while the first object's
// call is held behind the gate, the second one's call names the work area; after an edge it runs.
TEST(OrderingCheckerGpu, AnExternalWorkAreaUsedByTwoStreamsWithoutAnEdgeIsReported) {
  CUPLAN_REQUIRE_GPU();
  Stream s1, s2;
  const Shape shape{4, std::int64_t{1} << 20};  // 1D FFTs of 2^20 points: cuFFT's plan needs a work area
  const std::vector<C> host = cuplan::testing::random_vector<C>(std::size_t{4} << 20);
  Tensor x = Tensor::empty(shape, c64, Device::cuda(0), s1);
  Tensor y = Tensor::empty(shape, c64, Device::cuda(0), s2);  // made on s2: sharing x would order s2 after s1
  copy(TensorView(host.data(), shape), x, s1);
  copy(TensorView(host.data(), shape), y, s2);
  const std::size_t need = estimate_workspace_size(x, {.axes = {1}});
  ASSERT_GT(need, 0u);
  Tensor area = Tensor::empty({static_cast<std::int64_t>(need)}, i8, Device::cuda(0), s1);
  const FFTOptions options{.axes = {1}, .work_area = WorkAreaPolicy::external, .work_area_buffer = area.view()};
  FFT f(x, options), g(y, options);
  f.plan(s1);  // plans first: making a cuFFT plan may wait for work on the device, which would wait for the gate
  g.plan(s2);
  s1.synchronize();
  s2.synchronize();
  CheckingOn on;
  HostGate gate;
  gate.hold(s1);
  (void)f.execute({.stream = s1});
  try {
    (void)g.execute({.stream = s2});
    ADD_FAILURE() << "no OrderingError while the area's last user is pending on another stream";
  } catch (const OrderingError& e) {
    EXPECT_NE(std::string(e.what()).find("work area"), std::string::npos) << e.what();
  }
  s2.wait(s1);
  EXPECT_NO_THROW((void)g.execute({.stream = s2}));
  gate.open();
  ASSERT_FALSE(gate.timed_out());
  s2.synchronize();
  s1.synchronize();
}

}  // namespace
}  // namespace cuplan
