// SPDX-License-Identifier: Apache-2.0
// PlanningMode on the GPU (docs/streams.md, "Planning happens at the call"): every function form plans at the call
// in either mode, on device operands too: right after the call returns its plan is in the cache, and the result
// equals, bit for bit, the class form's (explicit plan()). Eight threads making new shapes at once are correct and
// end. A planted plan-creation failure raises at the call in either mode, leaves the stream free and the key
// unpoisoned. The host time of a first matmul of a new shape behind a busy stream is printed, with whether it
// returned while the stream's work ran (bench/planning_bench measures it).

#include <gtest/gtest.h>

#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/fault_injection.hpp"
#include "cuplan/cuplan.hpp"
#include "cuplan/format.hpp"
#include "runtime/spin_kernel.cuh"
#include "support/test_support.hpp"

namespace cuplan::testing {
namespace {

namespace fault = detail::fault;

std::vector<unsigned char> bytes_of(const Tensor& t) {
  Tensor host = Tensor::empty_strided(t.shape(), t.strides(), t.dtype(), Device::cpu());
  copy(t, host);
  std::vector<unsigned char> out(static_cast<std::size_t>(t.numel()) * t.dtype().size());
  std::memcpy(out.data(), host.data(), out.size());
  return out;
}

// Fresh random values of `dtype` (bf16 from the upper half of f32 values) on the device.
Tensor random_device(const Shape& shape, DType dtype, StreamRef s) {
  const std::size_t n = static_cast<std::size_t>(checked_numel(shape));
  Tensor t = Tensor::empty(shape, dtype, Device::cuda(0), s);
  if (dtype == bf16) {
    const std::vector<float> values = random_vector<float>(n);
    std::vector<std::uint16_t> bits(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t word = 0;
      std::memcpy(&word, &values[i], sizeof word);
      bits[i] = static_cast<std::uint16_t>(word >> 16);
    }
    copy(TensorView(bits.data(), bf16, shape), t, s);
  } else {
    const std::vector<float> values = random_vector<float>(n * (dtype.size() / 4));
    copy(TensorView(const_cast<float*>(values.data()), dtype, shape), t, s);
  }
  s.synchronize();
  return t;
}

void warm_up() {
  spin_kernel<<<1, 1>>>(1);  // the spin kernel's module loads here, not inside a measurement
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
}

struct FftCase {
  const char* name;
  Shape shape;
  std::vector<int> axes;
  bool real;
};

std::vector<FftCase> fft_cases() {
  return {{"C2C 1D", {64, 1000}, {1}, false},         {"C2C 2D", {8, 96, 120}, {1, 2}, false},
          {"C2C 3D", {40, 48, 56}, {0, 1, 2}, false}, {"R2C 1D", {64, 1000}, {1}, true},
          {"R2C 2D", {8, 96, 120}, {1, 2}, true},     {"R2C 3D", {40, 48, 56}, {0, 1, 2}, true}};
}

// The same transform planned on the caller's thread: a class form with explicit plan().
Tensor blocking_fft(const Tensor& x, const std::vector<int>& axes, StreamRef s) {
  FFT f(x, {.axes = axes, .stream = s});
  f.plan();
  Tensor y = f.execute();
  s.synchronize();
  return y;
}

// Right after a call in either mode returns its plan is in the cache, and the result equals the class form's, bit for
// bit.
TEST(PlanningMode, CufftBasedCallsPlanAtTheCallInEitherModeWithTheSameResult) {
  CUPLAN_REQUIRE_GPU();
  warm_up();
  Stream s;
  for (const FftCase& c : fft_cases()) {
    SCOPED_TRACE(c.name);
    plan_cache::clear();
    const Tensor x = random_device(c.shape, c.real ? f32 : c64, s);
    const std::vector<unsigned char> expected = bytes_of(blocking_fft(x, c.axes, s));
    const Tensor y = fft(x, {.axes = c.axes, .stream = s, .planning_mode = PlanningMode::background});
    EXPECT_EQ(plan_cache::stats().size, 1U) << "planned at the call";
    EXPECT_EQ(y.dtype(), c64);
    EXPECT_TRUE(bytes_of(y) == expected) << "differs from the transform planned by the class form";
  }
  const Tensor x = random_device({32, 96, 80}, f32, s);
  const Tensor kernel = random_device({1, 7, 9}, f32, s);  // the operand's rank, broadcast over the batch
  RealTransform r(x, {.axes = {1, 2}, .kinds = {R2RKind::dct2}, .stream = s});
  r.plan();
  const std::vector<unsigned char> r2r_expected = bytes_of(r.execute());
  Convolution conv(x, kernel, {.axes = {1, 2}, .mode = ConvolutionMode::same, .stream = s});
  conv.plan();
  const std::vector<unsigned char> conv_expected = bytes_of(conv.execute());
  plan_cache::clear();
  const Tensor y = dctn(x, {.type = 2, .axes = {1, 2}, .stream = s, .planning_mode = PlanningMode::background});
  EXPECT_EQ(plan_cache::stats().size, 1U) << "dctn planned at the call";
  const Tensor z = fftconvolve(
      x, kernel,
      {.axes = {1, 2}, .mode = ConvolutionMode::same, .stream = s, .planning_mode = PlanningMode::background});
  EXPECT_EQ(plan_cache::stats().size, 2U) << "fftconvolve planned at the call";
  EXPECT_TRUE(bytes_of(y) == r2r_expected) << "dctn differs from the class form";
  EXPECT_TRUE(bytes_of(z) == conv_expected) << "fftconvolve differs from the class form";
}

// cuBLASLt's heuristic query loads kernel libraries, which waits for the whole device: matmul plans at the call in
// either mode.
TEST(PlanningMode, MatmulPlansAtTheCallInEitherModeWithTheClassFormsResult) {
  CUPLAN_REQUIRE_GPU();
  warm_up();
  Stream s;
  for (DType dtype : {bf16, f32}) {
    (void)matmul(random_device({8, 8}, dtype, s), random_device({8, 8}, dtype, s), {.stream = s});
    s.synchronize();
  }
  for (PlanningMode mode : {PlanningMode::background, PlanningMode::blocking}) {
    for (DType dtype : {bf16, f32}) {
      SCOPED_TRACE(fmt::format("{}, {}", mode, dtype.name()));
      plan_cache::clear();
      const Tensor a = random_device({384, 256}, dtype, s), b = random_device({256, 320}, dtype, s);
      Matmul m(a, b, {.stream = s});
      m.plan();
      const std::vector<unsigned char> expected = bytes_of(m.execute());
      Tensor d;
      const CallBehindSpin r =
          call_behind_spin(s.native(), 400, [&] { d = matmul(a, b, {.stream = s, .planning_mode = mode}); });
      std::printf("first matmul of a new shape behind a 400 ms spin, %s %s: %.3f ms of host time (%s)\n",
                  fmt::format("{}", mode).c_str(), std::string(dtype.name()).c_str(), r.host_ms,
                  r.returned_during_spin ? "returned while the spin ran" : "waited for the spin");
      EXPECT_EQ(plan_cache::stats().size, 1U) << "planned at the call";
      EXPECT_TRUE(bytes_of(d) == expected) << "differs from the product planned by the class form";
    }
  }
}

TEST(PlanningMode, EightThreadsMakingNewShapesAtOnceAreCorrectAndEnd) {
  CUPLAN_REQUIRE_GPU();
  plan_cache::clear();
  // Under the GPU sanitizers (short_run) fewer threads and shapes: every plan creation is slowed there, and 8 x 6 new
  // keys ran past the 300 s limit under memcheck. The calls still make new keys on several threads at once.
  const int threads = short_run() ? 4 : 8, shapes = short_run() ? 2 : 6;
  std::vector<std::thread> pool;
  std::vector<int> mismatches(threads, 0);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([t, shapes, &mismatches] {
      Stream s;
      for (int i = 0; i < shapes; ++i) {
        const std::int64_t n = 64 + 8 * (t * shapes + i);  // a new key on every call of every thread
        const Tensor x = random_device({16, n}, c64, s);
        const std::vector<unsigned char> fft_expected = bytes_of(blocking_fft(x, {1}, s));
        const Tensor a = random_device({n, 32}, f32, s), b = random_device({32, 48}, f32, s);
        Matmul m(a, b, {.stream = s});
        m.plan();
        const std::vector<unsigned char> mm_expected = bytes_of(m.execute());
        const Tensor y = fft(x, {.axes = {1}, .stream = s, .planning_mode = PlanningMode::background});
        const Tensor d = matmul(a, b, {.stream = s, .planning_mode = PlanningMode::background});
        s.synchronize();
        mismatches[static_cast<std::size_t>(t)] += (bytes_of(y) != fft_expected) + (bytes_of(d) != mm_expected);
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(mismatches[static_cast<std::size_t>(t)], 0) << "thread " << t;
}

// A planted plan-creation failure, in either mode, for fft and matmul: the call raises the typed error naming the
// function, the stream is free (synchronize returns, with nothing left to raise), and the next call of the key plans
// and runs with the class form's result.
TEST(PlanningMode, APlantedPlanningFailureRaisesAtTheCallAndLeavesTheStreamFree) {
  CUPLAN_REQUIRE_GPU();
  warm_up();
  Stream s;
  const Tensor x = random_device({24, 700}, c64, s);
  const Tensor a = random_device({96, 64}, f32, s), b = random_device({64, 80}, f32, s);
  const std::vector<unsigned char> fft_expected = bytes_of(blocking_fft(x, {1}, s));
  Matmul m(a, b, {.stream = s});
  m.plan();
  const std::vector<unsigned char> mm_expected = bytes_of(m.execute());
  for (PlanningMode mode : {PlanningMode::background, PlanningMode::blocking}) {
    for (int form = 0; form < 2; ++form) {
      const char* who = form == 0 ? "fft" : "matmul";
      SCOPED_TRACE(fmt::format("{}, {}", who, mode));
      plan_cache::clear();
      fault::arm(fault::Site::plan, 1);
      try {
        if (form == 0)
          (void)fft(x, {.axes = {1}, .stream = s, .planning_mode = mode});
        else
          (void)matmul(a, b, {.stream = s, .planning_mode = mode});
        FAIL() << "the planted failure was not raised at the call";
      } catch (const LibraryError& e) {
        EXPECT_EQ(e.status_name(), "CUPLAN_FAULT_INJECTED") << e.what();
        EXPECT_NE(std::string(e.what()).find(std::string(who) + ": plan creation"), std::string::npos) << e.what();
      }
      EXPECT_TRUE(fault::fired());
      fault::disarm();
      EXPECT_EQ(plan_cache::stats().size, 0U) << "the failed plan is not cached";
      EXPECT_NO_THROW(s.synchronize());
      if (form == 0)
        EXPECT_TRUE(bytes_of(fft(x, {.axes = {1}, .stream = s, .planning_mode = mode})) == fft_expected);
      else
        EXPECT_TRUE(bytes_of(matmul(a, b, {.stream = s, .planning_mode = mode})) == mm_expected);
    }
  }
}

}  // namespace
}  // namespace cuplan::testing
