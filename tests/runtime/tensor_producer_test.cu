// SPDX-License-Identifier: Apache-2.0
// cuplan Tensors across streams (docs/streams.md, "cuplan Tensors across streams"), as a user calls them: a result
// produced on one stream behind a long kernel and then read by cuplan on another (a blocking host read given no
// stream, a copy, an operation, a DLPack export) must see the result, not the memory as it was; a write on another
// stream waits for earlier reads; and reads on two streams still run at the same time.

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "runtime/spin_kernel.cuh"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using cf = std::complex<float>;
constexpr std::int64_t batch = 8;
constexpr std::int64_t length = 512;
constexpr double spin_ms = 300.0;  // far longer than the host takes to reach the read
// Where a test asserts that the producer was still running when the call returned, the producer's stream is held
// by a HostGate instead of a timed spin: under compute-sanitizer the host can take longer than any spin to get there.
// The gate opens from another thread shortly after the test has issued its blocking read.
constexpr std::chrono::milliseconds open_delay{100};

std::vector<cf> random_signal(std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist;
  std::vector<cf> h(static_cast<std::size_t>(batch * length));
  for (cf& v : h) v = {dist(gen), dist(gen)};
  return h;
}

// Forward DFT of each row in double: the reference.
std::vector<std::complex<double>> dft_rows(const std::vector<cf>& x) {
  const double pi = std::acos(-1.0);
  std::vector<std::complex<double>> y(x.size());
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t k = 0; k < length; ++k) {
      std::complex<double> sum = 0;
      for (std::int64_t n = 0; n < length; ++n) {
        const double angle = -2.0 * pi * static_cast<double>((k * n) % length) / static_cast<double>(length);
        sum += std::complex<double>(x[static_cast<std::size_t>(b * length + n)]) *
               std::complex<double>(std::cos(angle), std::sin(angle));
      }
      y[static_cast<std::size_t>(b * length + k)] = sum;
    }
  return y;
}

double relative_error(const Tensor& host, const std::vector<std::complex<double>>& ref) {
  const cf* got = host.data<cf>();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    num += std::norm(std::complex<double>(got[i]) - ref[i]);
    den += std::norm(ref[i]);
  }
  return std::sqrt(num / den);
}

Tensor upload(const std::vector<cf>& h, StreamRef s) {
  Tensor t = Tensor::empty({batch, length}, c64, Device::cuda(0), s);
  copy(TensorView(h.data(), {batch, length}), t, s);  // host memory: blocking
  return t;
}

void spin(StreamRef s) {
  testing::spin_kernel<<<1, 1, 0, s.native()>>>(testing::cycles_for_ms(spin_ms));
  CUPLAN_TEST_CUDA(cudaGetLastError());
}

class TensorProducer : public ::testing::Test {
 protected:
  void SetUp() override {
    CUPLAN_REQUIRE_GPU();
    testing::spin_kernel<<<1, 1>>>(1);  // module loaded before any stream is held
    CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  }
};

// The reported case: an FFT on s1 behind a long kernel, its result read with to(cpu) and no stream. The copy runs
// on the current stream, which nothing else orders after s1.
TEST_F(TensorProducer, HostReadGivenNoStreamSeesAnFftResultFromAnotherStream) {
  const auto h = random_signal(11);
  const auto ref = dft_rows(h);
  Stream s1;
  Tensor x = upload(h, s1);
  FFT f(x, {.axes = {1}, .stream = s1});
  f.plan();
  for (int round = 0; round < 2; ++round) {  // a fresh plan, then a graph replay
    testing::HostGate gate;
    gate.hold(s1.native());
    Tensor r = f.execute();
    EXPECT_FALSE(s1.done()) << "the execute returned after its work: nothing was left to order";
    gate.open_after(open_delay);
    const Tensor host = r.to(Device::cpu());
    EXPECT_FALSE(gate.timed_out());
    EXPECT_LT(relative_error(host, ref), 1e-5) << "round " << round << ": the read ran before the transform";
  }
}

// The same through the function form and cuplan::copy into a host Tensor, given no stream.
TEST_F(TensorProducer, CopyToHostGivenNoStreamSeesAFunctionFormResult) {
  const auto h = random_signal(12);
  const auto ref = dft_rows(h);
  Stream s1;
  Tensor x = upload(h, s1);
  spin(s1);
  Tensor r = fft(x, {.axes = {1}, .stream = s1});
  Tensor host = Tensor::empty({batch, length}, c64, Device::cpu());
  copy(r, host);
  EXPECT_LT(relative_error(host, ref), 1e-5);
}

// The AutotuneProgress case: a Matmul on its own stream, read with execute().to(cpu).
TEST_F(TensorProducer, HostReadGivenNoStreamSeesAMatmulResultFromAnotherStream) {
  constexpr std::int64_t n = 96;
  std::mt19937 gen(13);
  std::uniform_real_distribution<float> dist(-1.0F, 1.0F);
  std::vector<float> ha(n * n), hb(n * n);
  for (float& v : ha) v = dist(gen);
  for (float& v : hb) v = dist(gen);
  std::vector<double> ref(n * n, 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < n; ++k)
      for (std::int64_t j = 0; j < n; ++j)
        ref[static_cast<std::size_t>(i * n + j)] +=
            double(ha[static_cast<std::size_t>(i * n + k)]) * double(hb[static_cast<std::size_t>(k * n + j)]);
  Stream s;
  Tensor a = Tensor::empty({n, n}, f32, Device::cuda(0), s), b = Tensor::empty({n, n}, f32, Device::cuda(0), s);
  copy(TensorView(ha.data(), {n, n}), a, s);
  copy(TensorView(hb.data(), {n, n}), b, s);
  Matmul mm(a, b, {.compute = Compute::f32, .stream = s});
  mm.plan();
  for (int round = 0; round < 2; ++round) {
    spin(s);
    const Tensor host = mm.execute().to(Device::cpu());
    double worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i)
      worst = std::max(worst, std::abs(double(host.data<float>()[i]) - ref[i]));
    EXPECT_LT(worst, 1e-3) << "round " << round << ": the read ran before the product";
  }
}

// A result written into a Tensor given as `.out` (class form) and as the function form's `out`, each time after the
// host has already read that Tensor once: the write through `out` is a cuplan write of a cuplan Tensor, so a later
// read on another stream waits for it rather than for the Tensor's earlier producer.
TEST_F(TensorProducer, AWriteThroughOutIsTheTensorsNewProducer) {
  const auto h = random_signal(16);
  const auto ref = dft_rows(h);
  Stream s1;
  Tensor x = upload(h, s1);
  Tensor y = Tensor::empty({batch, length}, c64, Device::cuda(0), s1);
  FFT f(x, {.axes = {1}, .stream = s1});
  f.plan();
  for (int round = 0; round < 2; ++round) {                                      // a fresh plan, then a graph replay
    copy(TensorView(std::vector<cf>(h.size()).data(), {batch, length}), y, s1);  // zeros, read once below
    EXPECT_LT(y.to(Device::cpu()).data<cf>()[0].real(), 1e-30F);
    testing::HostGate gate;
    gate.hold(s1.native());
    const Tensor r = f.execute({.out = y});
    EXPECT_FALSE(s1.done()) << "the execute returned after its work: nothing was left to order";
    EXPECT_EQ(r.data(), y.data());
    gate.open_after(open_delay);
    EXPECT_LT(relative_error(y.to(Device::cpu()), ref), 1e-5) << "round " << round << ": the read ran first";
    EXPECT_FALSE(gate.timed_out());
  }
  copy(TensorView(std::vector<cf>(h.size()).data(), {batch, length}), y, s1);
  EXPECT_LT(y.to(Device::cpu()).data<cf>()[0].real(), 1e-30F);
  spin(s1);
  fft(x, y, {.axes = {1}, .stream = s1});
  EXPECT_LT(relative_error(y.to(Device::cpu()), ref), 1e-5) << "function form: the read ran first";
}

// A Tensor allocated and written on s1 (a device-to-device copy behind a long kernel), transformed on s2.
TEST_F(TensorProducer, AnOperationOnAnotherStreamReadsAfterTheWrite) {
  const auto h = random_signal(14);
  const auto ref = dft_rows(h);
  Stream s1, s2;
  Tensor source = upload(h, s1);
  Tensor x = Tensor::empty({batch, length}, c64, Device::cuda(0), s1);
  spin(s1);
  copy(source, x, s1);  // device to device: returns at once
  Tensor r = fft(x, {.axes = {1}, .stream = s2});
  EXPECT_LT(relative_error(r.to(Device::cpu(), s2), ref), 1e-5);
}

// A write on s2 waits for a read still pending on s1: the transform sees the old values.
TEST_F(TensorProducer, AWriteOnAnotherStreamWaitsForAPendingRead) {
  const auto h = random_signal(15);
  const auto ref = dft_rows(h);
  const auto other = random_signal(16);
  Stream s1, s2;
  Tensor x = upload(h, s1);
  Tensor replacement = upload(other, s2);
  FFT f(x, {.axes = {1}, .stream = s1});
  f.plan();
  s1.synchronize();
  spin(s1);
  Tensor r = f.execute();
  copy(replacement, x, s2);  // device to device on s2: must not overwrite x before the transform has read it
  EXPECT_LT(relative_error(r.to(Device::cpu(), s1), ref), 1e-5);
  EXPECT_LT(relative_error(x.to(Device::cpu(), s2),
                           [&] {
                             std::vector<std::complex<double>> v(other.begin(), other.end());
                             return v;
                           }()),
            1e-7);
}

// Reads stay concurrent: with s1 held, a transform of the same Tensor on s2 finishes. Two FFT objects: the function
// form would share one cached plan, whose phases are ordered one after the other by design.
TEST_F(TensorProducer, ReadsOnTwoStreamsRunAtTheSameTime) {
  const auto h = random_signal(17);
  const auto ref = dft_rows(h);
  testing::HostGate gate;
  Stream s0, s1, s2;
  Tensor x = upload(h, s0);
  FFT f1(x, {.axes = {1}, .stream = s1}), f2(x, {.axes = {1}, .stream = s2});
  f1.plan();  // plans outside the held window: making a cuFFT plan may wait for the device
  f2.plan();
  Tensor r1 = f1.execute(), r2 = f2.execute();
  s1.synchronize();
  s2.synchronize();
  gate.hold(s1.native());
  r1 = f1.execute();
  r2 = f2.execute();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!s2.done() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool concurrent = s2.done();
  gate.open();
  EXPECT_TRUE(concurrent) << "the read on s2 waited for the read on s1";
  EXPECT_FALSE(gate.timed_out());
  EXPECT_LT(relative_error(r1.to(Device::cpu()), ref), 1e-5);
  EXPECT_LT(relative_error(r2.to(Device::cpu()), ref), 1e-5);
}

// A DLPack export for a consumer stream, of a result still being written on another.
TEST_F(TensorProducer, DlpackExportOrdersTheConsumerAfterTheProducer) {
  const auto h = random_signal(18);
  const auto ref = dft_rows(h);
  Stream s1, s2;
  Tensor x = upload(h, s1);
  (void)fft(x,
            {.axes = {1}, .stream = s1});  // plans outside the held window: making a cuFFT plan may wait for the device
  s1.synchronize();
  spin(s1);
  Tensor r = fft(x, {.axes = {1}, .stream = s1});
  dlpack::DLManagedTensor* managed = r.to_dlpack({.stream = s2});
  EXPECT_FALSE(s1.done()) << "the export must not wait on the host";
  std::vector<cf> host(static_cast<std::size_t>(batch * length));
  CUPLAN_TEST_CUDA(cudaMemcpyAsync(host.data(), managed->dl_tensor.data, host.size() * sizeof(cf),
                                   cudaMemcpyDeviceToHost, s2.native()));
  s2.synchronize();
  managed->deleter(managed);
  EXPECT_LT(relative_error(Tensor::wrap(TensorView(host.data(), {batch, length})), ref), 1e-5);
}

}  // namespace
}  // namespace cuplan
