// SPDX-License-Identifier: Apache-2.0
// Host streams: without a GPU, Stream, Event, StreamScope and current_stream() work on the CPU (work runs at the
// call, events complete at once with host timestamps), and the CPU paths of FFT, Matmul and copy take them as
// their stream and `after` events. On a machine with a GPU these tests skip: there every stream is a CUDA stream.

#include <gtest/gtest.h>

#include <chrono>
#include <complex>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "cuplan/format.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

#define REQUIRE_NO_GPU()                                                                                     \
  do {                                                                                                       \
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: host streams exist only without a GPU"; \
  } while (false)

TEST(HostStream, OwningStreamsAreDistinctHostStreams) {
  REQUIRE_NO_GPU();
  Stream s1;
  Stream s2;
  EXPECT_EQ(s1.device(), Device::cpu());
  EXPECT_EQ(s1.ref().device(), Device::cpu());
  EXPECT_TRUE(s1.owning());
  EXPECT_NE(s1.native(), nullptr);
  EXPECT_NE(s1.ref(), s2.ref());
  EXPECT_EQ(s1.priority(), 0);
  EXPECT_TRUE(s1.done());
  s1.synchronize();
  s1.wait(s2);
  const Event e = s2.record();
  EXPECT_TRUE(e.recorded());
  s1.wait(e);
  Stream explicit_cpu(Device::cpu(), -1, false);
  EXPECT_EQ(explicit_cpu.device(), Device::cpu());
}

TEST(HostStream, DefaultStreamsAreHostStreams) {
  REQUIRE_NO_GPU();
  const Stream legacy = Stream::legacy_default();
  const Stream per_thread = Stream::per_thread_default(Device::cpu());
  EXPECT_EQ(legacy.native(), cudaStreamLegacy);
  EXPECT_EQ(per_thread.native(), cudaStreamPerThread);
  EXPECT_EQ(legacy.device(), Device::cpu());
  EXPECT_TRUE(legacy.done());
  legacy.synchronize();
}

TEST(HostStream, MovedFromStreamIsAStateError) {
  REQUIRE_NO_GPU();
  Stream a;
  Stream b(std::move(a));
  EXPECT_EQ(b.device(), Device::cpu());
  EXPECT_THROW(a.synchronize(), StateError);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
}

TEST(HostStream, EventsCompleteAtOnceAndTimeOnTheHostClock) {
  REQUIRE_NO_GPU();
  Stream s;
  Event start(true);
  Event stop(Device::cpu(), true);
  EXPECT_FALSE(start.recorded());
  EXPECT_THROW((void)start.done(), StateError);  // never recorded: the same rule as on a GPU
  start.record(s);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop.record();  // the current stream
  EXPECT_TRUE(start.done());
  stop.synchronize();
  const float ms = Event::elapsed_ms(start, stop);
  EXPECT_GE(ms, 19.0F);
  EXPECT_LT(ms, 5000.0F);
  Event untimed;
  untimed.record(s);
  EXPECT_THROW((void)Event::elapsed_ms(start, untimed), StateError);
  Event never;
  EXPECT_THROW(s.wait(never), StateError);
}

TEST(HostStream, ScopesAndUseSetTheCurrentStream) {
  REQUIRE_NO_GPU();
  Stream s1;
  Stream s2;
  const StreamRef before = current_stream();
  {
    StreamScope outer(s1);
    EXPECT_EQ(current_stream(), s1.ref());
    EXPECT_EQ(current_stream(Device::cpu()), s1.ref());
    {
      StreamScope inner(s2);
      EXPECT_EQ(current_stream(), s2.ref());
    }
    EXPECT_EQ(current_stream(), s1.ref());
  }
  EXPECT_EQ(current_stream(), before);
  s2.use();
  EXPECT_EQ(current_stream(), s2.ref());
  Stream::legacy_default().use();
  EXPECT_EQ(current_stream().native(), cudaStreamLegacy);
}

TEST(HostStream, CopyOnAHostStream) {
  REQUIRE_NO_GPU();
  Stream s;
  const std::vector<double> src = testing::random_vector<double>(12);
  std::vector<double> dst(12, -99.0);
  copy(TensorView(src.data(), {3, 4}), TensorView(dst.data(), {3, 4}, {1, 3}), s);  // braced strides
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(dst[static_cast<std::size_t>(j * 3 + i)], src[static_cast<std::size_t>(i * 4 + j)]);
  // An owning host tensor used on a host stream and dropped at once.
  auto t = Tensor::empty({3, 4}, f64, Device::cpu(), s);
  copy(TensorView(src.data(), {3, 4}), t, s);
  auto back = t.to(Device::cpu(), s);
  EXPECT_EQ(back.data<double>()[5], src[5]);
}

TEST(HostStream, FftOnTheCpuTakesHostStreamsAndEvents) {
  REQUIRE_NO_GPU();
  constexpr int n = 64;
  const std::vector<std::complex<double>> x = testing::random_vector<std::complex<double>>(2 * n);
  Stream s1;
  Stream s2;
  const Event ready = s1.record();
  // Function form with a stream and `after`.
  Tensor y = fft(TensorView(x.data(), {2, n}), {.axes = {1}, .stream = s1, .after = {ready}});
  // Class form: plan on s1, execute on s2 after an event, reset on s2 inside a scope.
  FFT f(TensorView(x.data(), {2, n}), {.axes = {1}, .stream = s1});
  f.plan(s1);
  Tensor z = f.execute({.stream = s2, .after = {ready}});
  {
    StreamScope scope(s2);
    f.reset_operand(TensorView(x.data(), {2, n}));
    Tensor again = f.execute();
    EXPECT_EQ(again.data<std::complex<double>>()[3], z.data<std::complex<double>>()[3]);
  }
  s2.synchronize();
  for (int row = 0; row < 2; ++row) {
    for (int k = 0; k < n; ++k) {
      std::complex<double> expected = 0.0;
      for (int j = 0; j < n; ++j)
        expected += x[static_cast<std::size_t>(row * n + j)] * std::polar(1.0, -2.0 * 3.141592653589793 * j * k / n);
      const auto index = static_cast<std::size_t>(row * n + k);
      EXPECT_NEAR(std::abs(y.data<std::complex<double>>()[index] - expected), 0.0, 1e-10);
      EXPECT_NEAR(std::abs(z.data<std::complex<double>>()[index] - expected), 0.0, 1e-10);
    }
  }
}

TEST(HostStream, MatmulOnTheCpuTakesHostStreamsAndEvents) {
  REQUIRE_NO_GPU();
  constexpr int m = 5, k = 7, n = 3;
  const std::vector<double> a = testing::random_vector<double>(m * k);
  const std::vector<double> b = testing::random_vector<double>(k * n);
  Stream s;
  const Event ready = s.record();
  Tensor d = matmul(TensorView(a.data(), {m, k}), TensorView(b.data(), {k, n}), {.stream = s, .after = {ready}});
  Matmul mm(TensorView(a.data(), {m, k}), TensorView(b.data(), {k, n}), {.stream = s});
  mm.plan({.stream = s});
  Tensor e = mm.execute({.stream = s, .after = {ready}});
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double expected = 0.0;
      for (int l = 0; l < k; ++l)
        expected += a[static_cast<std::size_t>(i * k + l)] * b[static_cast<std::size_t>(l * n + j)];
      const auto at = [&](const Tensor& t) { return t.data<double>()[i * t.strides()[0] + j * t.strides()[1]]; };
      EXPECT_NEAR(at(d), expected, 1e-12);
      EXPECT_NEAR(at(e), expected, 1e-12);
    }
  }
}

TEST(HostStream, FormatsAsCpuDevice) {
  REQUIRE_NO_GPU();
  Stream s;
  EXPECT_EQ(fmt::format("{}", s.device()), "cpu");
}

}  // namespace
}  // namespace cuplan
