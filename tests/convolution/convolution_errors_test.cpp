// SPDX-License-Identifier: Apache-2.0
// Bad input to Convolution and fftconvolve: typed exceptions naming the operand, the expected and the actual value,
// the same on every path (class form, function form on a plan-cache miss and hit), and an object that stays usable
// or clearly dead. CPU execution: runs everywhere.

#include <gtest/gtest.h>

#include <complex>
#include <vector>

#include "convolution/convolution_test_util.hpp"

namespace cuplan::testing {
namespace {

const ConvolutionOptions kCpu{.execution = Execution::cpu()};

ConvolutionOptions cpu(ConvolutionOptions o) {
  o.execution = Execution::cpu();
  return o;
}

TEST(ConvolutionErrors, DtypesPrecisionAndRank) {
  std::vector<std::int32_t> ints(16);
  std::vector<float> x(16), k(4);
  std::vector<double> kd(4);
  const TensorView xv(x.data(), {2, 8}), kv(k.data(), {1, 4});
  expect_throw_naming<InvalidArgument>(
      [&] {
        Convolution(TensorView(ints.data(), {2, 8}), kv, kCpu);
      },
      {"operand dtype", "f32, f64, c64 or c128", "i32"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        Convolution(xv, TensorView(kd.data(), {1, 4}), kCpu);
      },
      {"kernel dtype", "f32", "f64"});
  expect_throw_naming<InvalidArgument>([&] { Convolution(xv, TensorView(k.data(), {4}), kCpu); },
                                       {"kernel rank", "2", "1"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        fftconvolve(xv, TensorView(kd.data(), {1, 4}), kCpu);
      },
      {"kernel dtype", "f64"});
}

TEST(ConvolutionErrors, ShapesThatDoNotBroadcastOrFitTheMode) {
  std::vector<float> x(60), k(60);
  const TensorView xv(x.data(), {3, 4, 5});
  expect_throw_naming<InvalidArgument>(
      [&] {
        Convolution(xv, TensorView(k.data(), {2, 1, 3}), cpu({.axes = {2}}));
      },
      {"kernel shape", "batch axis 0", "3 or 1", "got 2"});
  // valid: the kernel longer on one convolved axis and shorter on the other
  expect_throw_naming<InvalidArgument>(
      [&] {
        Convolution(xv, TensorView(k.data(), {1, 5, 2}), cpu({.axes = {1, 2}, .mode = ConvolutionMode::valid}));
      },
      {"valid mode", "kernel"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        Convolution(xv, TensorView(k.data(), {1, 1, 6}), cpu({.axes = {2}, .mode = ConvolutionMode::circular}));
      },
      {"circular", "at most 5", "got 6"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        Convolution(xv, TensorView(k.data(), {1, 1, 0}), kCpu);
      },
      {"kernel shape", "extent >= 1"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        Convolution(xv, TensorView(k.data(), {1, 1, 2}), cpu({.axes = {3}}));
      },
      {"axes", "axis 3", "out of range"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        Convolution(xv, TensorView(k.data(), {1, 1, 2}), cpu({.axes = {1, 1}}));
      },
      {"axes", "distinct"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        fftconvolve(xv, TensorView(k.data(), {1, 1, 2}), cpu({.axes = {0, 1, 2, -1}}));
      },
      {"axes", "1 to 3"});
}

TEST(ConvolutionErrors, OutOfRangeEnumsOnEveryPath) {
  std::vector<float> x(16), k(4);
  const TensorView xv(x.data(), {2, 8}), kv(k.data(), {1, 4});
  const auto bad_mode = cpu({.mode = static_cast<ConvolutionMode>(7)});
  const auto bad_route = cpu({.route = static_cast<ConvolutionRoute>(200)});
  const auto bad_planning = cpu({.planning = static_cast<Planning>(9)});
  for (int round = 0; round < 2; ++round) {  // the second round would be a plan-cache hit
    expect_throw_naming<InvalidArgument>([&] { Convolution(xv, kv, bad_mode); }, {"mode", "ConvolutionMode", "7"});
    expect_throw_naming<InvalidArgument>([&] { fftconvolve(xv, kv, bad_mode); }, {"mode", "ConvolutionMode", "7"});
    expect_throw_naming<InvalidArgument>([&] { fftconvolve(xv, kv, bad_route); }, {"route", "ConvolutionRoute", "200"});
    expect_throw_naming<InvalidArgument>([&] { fftconvolve(xv, kv, bad_planning); }, {"planning", "9"});
    (void)fftconvolve(xv, kv, kCpu);
  }
}

TEST(ConvolutionErrors, FusedRouteOnTheCpuIsNotSupported) {
  std::vector<std::complex<float>> x(2 * 1024), k(16);
  expect_throw_naming<NotSupported>(
      [&] {
        Convolution(TensorView(x.data(), {2, 1024}), TensorView(k.data(), {1, 16}),
                    cpu({.route = ConvolutionRoute::fused}));
      },
      {"fused", "CUDA execution"});
  // separate is the CPU's own route
  Convolution conv(TensorView(x.data(), {2, 1024}), TensorView(k.data(), {1, 16}),
                   cpu({.route = ConvolutionRoute::separate}));
  EXPECT_EQ(conv.route(), ConvolutionRoute::separate);
  EXPECT_NE(conv.describe().find("FFTW"), std::string::npos) << conv.describe();
}

TEST(ConvolutionErrors, OutMustMatchAndMustNotAliasTheOperand) {
  auto hx = HostArray<float>::random({4, 32});
  auto hk = HostArray<float>::random({1, 5});
  Convolution conv(hx.view(), hk.view(), cpu({.mode = ConvolutionMode::same}));
  conv.plan();
  std::vector<float> wrong(4 * 36);
  expect_throw_naming<InvalidArgument>(
      [&] {
        conv.execute({.out = TensorView(wrong.data(), {4, 36})});
      },
      {"out", "shape", "[4, 32]", "[4, 36]"});
  std::vector<double> wrong_dtype(4 * 32);
  expect_throw_naming<InvalidArgument>(
      [&] {
        conv.execute({.out = TensorView(wrong_dtype.data(), {4, 32})});
      },
      {"out", "f32", "f64"});
  // same mode: the result has the operand's shape, so the operand itself would fit: refused as an overlap
  expect_throw_naming<InvalidArgument>([&] { conv.execute({.out = hx.view()}); }, {"out", "operand", "overlap"});
  expect_throw_naming<InvalidArgument>(
      [&] { fftconvolve(hx.view(), hk.view(), hx.view(), cpu({.mode = ConvolutionMode::same})); },
      {"out", "operand", "overlap"});
  const TensorView read_only = TensorView(wrong.data(), {4, 32}).as_read_only();
  expect_throw_naming<InvalidArgument>([&] { conv.execute({.out = read_only}); }, {"out", "read-only"});
  // The object is still usable.
  const Tensor y = conv.execute();
  EXPECT_EQ(y.shape(), (Shape{4, 32}));
}

TEST(ConvolutionErrors, FunctionFormOutMustNotOverlapTheKernel) {
  // fftconvolve's out stays apart from every input of the call, as Matmul's does: the kernel too, on a plan-cache miss
  // and on a hit after a good call of the same layout.
  auto hx = HostArray<float>::random({4, 16});
  std::vector<float> memory(4 * 18 + 8, 1.0f), apart(4 * 18);
  const TensorView kernel(memory.data() + 4, {1, 3});
  const TensorView out(memory.data(), {4, 18});  // the full result, over the kernel
  const std::initializer_list<std::string> words{"fftconvolve", "out overlaps kernel",
                                                 "expected out in memory separate from kernel", "sharing memory"};
  for (int round = 0; round < 2; ++round)
    expect_throw_naming<InvalidArgument>([&] { fftconvolve(hx.view(), kernel, out, kCpu); }, words);
  fftconvolve(hx.view(), kernel, TensorView(apart.data(), {4, 18}), kCpu);
  expect_throw_naming<InvalidArgument>([&] { fftconvolve(hx.view(), kernel, out, kCpu); }, words);
  // The class form reads the kernel in plan() only and keeps its spectrum: its execute's out may reuse that memory.
  Convolution conv(hx.view(), kernel, kCpu);
  conv.plan();
  EXPECT_NO_THROW(conv.execute({.out = out}));
}

TEST(ConvolutionErrors, ResetOperandAndKernelMustMatchThePlan) {
  auto hx = HostArray<std::complex<double>>::random({3, 20});
  auto hk = HostArray<std::complex<double>>::random({1, 4});
  Convolution conv(hx.view(), hk.view(), kCpu);
  auto other = HostArray<std::complex<double>>::random({3, 21});
  expect_throw_naming<InvalidArgument>([&] { conv.reset_operand(other.view()); },
                                       {"reset_operand", "operand", "shape"});
  expect_throw_naming<StateError>([&] { conv.reset_kernel(hk.view()); }, {"reset_kernel", "plan"});
  conv.plan();
  auto k5 = HostArray<std::complex<double>>::random({1, 5});
  expect_throw_naming<InvalidArgument>([&] { conv.reset_kernel(k5.view()); }, {"reset_kernel", "kernel", "shape"});
  auto kf = HostArray<std::complex<float>>::random({1, 4});
  expect_throw_naming<InvalidArgument>([&] { conv.reset_kernel(kf.view()); },
                                       {"reset_kernel", "kernel", "c128", "c64"});
  EXPECT_NO_THROW(conv.execute());
}

TEST(ConvolutionErrors, LifecycleCallsAfterFreeReleaseAndMove) {
  auto hx = HostArray<float>::random({2, 16});
  auto hk = HostArray<float>::random({1, 3});
  Convolution conv(hx.view(), hk.view(), kCpu);
  expect_throw_naming<StateError>([&] { conv.execute(); }, {"execute", "plan"});
  conv.plan();
  conv.release_operand();
  expect_throw_naming<StateError>([&] { conv.execute(); }, {"execute", "operand"});
  conv.reset_operand(hx.view());
  EXPECT_NO_THROW(conv.execute());
  Convolution moved = std::move(conv);
  expect_throw_naming<StateError>([&] { conv.execute(); }, {"execute", "moved from"});
  expect_throw_naming<StateError>([&] { (void)conv.describe(); }, {"describe", "moved from"});
  moved.free();
  moved.free();  // twice is fine
  expect_throw_naming<StateError>([&] { moved.execute(); }, {"execute", "free"});
  expect_throw_naming<StateError>([&] { moved.plan(); }, {"plan", "free"});
  expect_throw_naming<StateError>([&] { moved.reset_kernel(hk.view()); }, {"reset_kernel", "free"});
  expect_throw_naming<StateError>([&] { moved.reset_operand(hx.view()); }, {"reset_operand", "free"});
  expect_throw_naming<StateError>([&] { (void)moved.result_shape(); }, {"result_shape", "free"});
}

TEST(ConvolutionErrors, AxesLongerThan2To40AreRefusedOnEveryPath) {
  // Stride-0 views: any length, one element of memory. Before the limit, a kernel of 2^61 hung the constructor
  // (the search for an FFT length) and n + k - 1 could overflow.
  std::vector<float> x(8), k(1);
  const TensorView xv(x.data(), {8});
  const TensorView long_kernel(k.data(), f32, {std::int64_t{1} << 61}, Strides{0});
  const std::initializer_list<std::string> words{"kernel shape", "convolved axis 0", "2305843009213693952",
                                                 "at most 2^40"};
  for (int round = 0; round < 2; ++round) {  // the second round would be a plan-cache hit
    expect_throw_naming<InvalidArgument>([&] { Convolution(xv, long_kernel, kCpu); }, words);
    expect_throw_naming<InvalidArgument>([&] { fftconvolve(xv, long_kernel, kCpu); }, words);
    expect_throw_naming<InvalidArgument>([&] { (void)estimate_work_area_size(xv, long_kernel, kCpu); }, words);
  }
  const TensorView long_operand(x.data(), f32, {(std::int64_t{1} << 40) + 1}, Strides{0});
  expect_throw_naming<InvalidArgument>([&] { Convolution(long_operand, TensorView(k.data(), {1}), kCpu); },
                                       {"operand shape", "1099511627777", "at most 2^40"});
}

TEST(ConvolutionErrors, ResultsBeyond2To63BytesAreRefusedAtConstruction) {
  // [2^31, 2^31] in one element (stride 0) with a [1, 1] kernel: a result of 2^64 bytes of f32.
  float one = 1.0f;
  const TensorView huge(&one, f32, {std::int64_t{1} << 31, std::int64_t{1} << 31}, Strides{0, 0});
  const TensorView kernel(&one, {1, 1});
  const std::initializer_list<std::string> words{"operand shape", "f32 of shape [2147483648, 2147483648]",
                                                 "needs more than 2^63 bytes"};
  for (int round = 0; round < 2; ++round) {
    expect_throw_naming<InvalidArgument>([&] { Convolution(huge, kernel, kCpu); }, words);
    expect_throw_naming<InvalidArgument>([&] { fftconvolve(huge, kernel, kCpu); }, words);
  }
}

TEST(ConvolutionErrors, WorkBuffersNoHostCanHoldAreOutOfMemory) {
  // [2^20, 2^20] (stride 0, one element of memory) with a [2, 2] kernel: terabytes of FFTW work buffers.
  std::vector<float> x(1), k(4, 1.0f);
  const TensorView xv(x.data(), f32, {1 << 20, 1 << 20}, Strides{0, 0}), kv(k.data(), {2, 2});
  Convolution conv(xv, kv, kCpu);
  for (int round = 0; round < 2; ++round)
    expect_throw_naming<OutOfMemory>([&] { conv.plan(); }, {"Convolution", "FFTW work buffer", "bytes of host memory"});
  for (int round = 0; round < 2; ++round)
    expect_throw_naming<OutOfMemory>([&] { fftconvolve(xv, kv, kCpu); }, {"FFTW work buffer", "bytes of host memory"});
  conv.free();
  EXPECT_EQ(conv.state(), "freed");
}

TEST(ConvolutionErrors, EmptyOperandsAndNames) {
  std::vector<float> k(3);
  expect_throw_naming<InvalidArgument>([&] { Convolution(TensorView{}, TensorView(k.data(), {3}), kCpu); },
                                       {"operand"});
  EXPECT_EQ(to_string(ConvolutionMode::valid), "valid");
  EXPECT_EQ(to_string(ConvolutionRoute::fused), "fused");
  EXPECT_EQ(to_string(static_cast<ConvolutionMode>(42)), "?");
}

}  // namespace
}  // namespace cuplan::testing
