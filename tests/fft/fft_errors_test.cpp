// SPDX-License-Identifier: Apache-2.0
// Bad input: every case throws the documented exception type with a message that names the operand, the expected
// and the actual value; objects stay usable where that makes sense.

#include <gtest/gtest.h>

#include <string>

#include "fft/fft_test_util.hpp"

namespace cuplan::testing {
namespace {

#define EXPECT_ERROR(Type, call, ...)                                                                                  \
  do {                                                                                                                 \
    const std::string message = message_of<Type>([&] { call; });                                                       \
    for (const char* part : {__VA_ARGS__}) EXPECT_NE(message.find(part), std::string::npos) << "message: " << message; \
  } while (0)

struct Data {
  std::vector<std::complex<float>> c = random_vector<std::complex<float>>(4096);
  std::vector<float> r = random_vector<float>(4096);
  std::vector<std::int32_t> ints = std::vector<std::int32_t>(64, 1);

  // An FFT object (CPU execution) over the first 64 values of c viewed as [8, 8], not planned.
  FFT fft_8x8() { return FFT(TensorView(c.data(), {8, 8}), {.execution = Execution::cpu()}); }
  // The same, planned.
  FFT planned_fft_8x8() {
    FFT f = fft_8x8();
    f.plan();
    return f;
  }
};

const FFTOptions kCpu{.execution = Execution::cpu()};

TEST(FftErrors, ZeroDimensionalOperandHasNoAxes) {
  Data d;
  EXPECT_ERROR(InvalidArgument, FFT(TensorView(d.c.data(), Shape{}), kCpu), "0-d", "empty axes");
}

TEST(FftErrors, RepeatedAxes) {
  Data d;
  EXPECT_ERROR(InvalidArgument, FFT(TensorView(d.c.data(), {8, 8}), {.axes = {1, -1}, .execution = Execution::cpu()}),
               "axes", "axis 1 twice");
}

TEST(FftErrors, AxisOutOfRange) {
  Data d;
  EXPECT_ERROR(InvalidArgument, FFT(TensorView(d.c.data(), {8, 8}), {.axes = {2}, .execution = Execution::cpu()}),
               "axis 2 is out of range", "rank 2", "-2 to 1");
}

TEST(FftErrors, MoreThanThreeAxes) {
  Data d;
  EXPECT_ERROR(InvalidArgument,
               FFT(TensorView(d.c.data(), {2, 2, 2, 2}), {.axes = {0, 1, 2, 3}, .execution = Execution::cpu()}),
               "1 to 3 axes", "got 4");
}

TEST(FftErrors, C2RWithoutAValidParity) {
  Data d;
  EXPECT_ERROR(InvalidArgument, irfft(TensorView(d.c.data(), {4, 1}), kCpu), "last_axis_parity", "length 1",
               "Parity::odd");
}

TEST(FftErrors, RealDtypeForC2C) {
  Data d;
  FFTOptions o = kCpu;
  o.fft_type = FFTType::c2c;
  EXPECT_ERROR(InvalidArgument, FFT(TensorView(d.r.data(), {8, 8}), o), "C2C", "complex", "got f32");
  EXPECT_ERROR(InvalidArgument, ifft(TensorView(d.r.data(), {8, 8}), kCpu), "C2C", "got f32");
}

TEST(FftErrors, ComplexDtypeForR2C) {
  Data d;
  EXPECT_ERROR(InvalidArgument, rfft(TensorView(d.c.data(), {8, 8}), kCpu), "R2C", "real", "got c64");
}

TEST(FftErrors, IntegerDtype) {
  Data d;
  EXPECT_ERROR(InvalidArgument, fft(TensorView(d.ints.data(), {8, 8}), kCpu), "dtype", "floating", "got i32");
}

TEST(FftErrors, ZeroSizeDimension) {
  Data d;
  EXPECT_ERROR(InvalidArgument, FFT(TensorView(d.c.data(), {8, 0}), kCpu), "shape", "[8, 0]", "axis 1 is 0");
}

TEST(FftErrors, OutputOfTheWrongShape) {
  Data d;
  std::vector<std::complex<float>> out(64);
  EXPECT_ERROR(InvalidArgument, fft(TensorView(d.c.data(), {8, 8}), TensorView(out.data(), {8, 7}), kCpu), "out",
               "expected shape [8, 8]", "got [8, 7]");
}

TEST(FftErrors, OutputOfTheWrongDtype) {
  Data d;
  std::vector<std::complex<double>> out(64);
  EXPECT_ERROR(InvalidArgument, fft(TensorView(d.c.data(), {8, 8}), TensorView(out.data(), {8, 8}), kCpu),
               "expected dtype c64", "got c128");
  FFT f = d.planned_fft_8x8();
  EXPECT_ERROR(InvalidArgument, f.execute({.out = TensorView(out.data(), {8, 8})}), "out dtype: expected c64",
               "got c128");
  EXPECT_NO_THROW(f.execute());  // still usable
}

TEST(FftErrors, OutputWithStridesOtherThanPlanned) {
  Data d;
  std::vector<std::complex<float>> out(128);
  FFT f = d.planned_fft_8x8();
  EXPECT_ERROR(InvalidArgument, f.execute({.out = TensorView(out.data(), {8, 8}, Strides{16, 2})}), "strides", "[8, 1]",
               "[16, 2]");
}

TEST(FftErrors, InPlaceWithAnIncompatibleLayout) {
  Data d;
  EXPECT_ERROR(InvalidArgument,
               FFT(TensorView(d.r.data(), {4, 14}), {.axes = {1}, .inplace = true, .execution = Execution::cpu()}),
               "inplace", "R2C", "[14, 1]");
  EXPECT_ERROR(InvalidArgument,
               FFT(TensorView(d.c.data(), {4, 8}, Strides{1, 2}),
                   {.axes = {0, 1}, .inplace = true, .execution = Execution::cpu()}),
               "inplace", "[1, 2]");
}

TEST(FftErrors, ResetWithAnotherShapeDtypeOrStrides) {
  Data d;
  FFT f = d.planned_fft_8x8();
  EXPECT_ERROR(InvalidArgument, f.reset_operand(TensorView(d.c.data(), {8, 4})), "reset_operand", "shape",
               "expected [8, 8]", "got [8, 4]");
  EXPECT_ERROR(InvalidArgument, f.reset_operand(TensorView(d.r.data(), {8, 8})), "dtype", "expected c64", "got f32");
  EXPECT_ERROR(InvalidArgument, f.reset_operand(TensorView(d.c.data(), {8, 8}, Strides{1, 8})), "strides",
               "expected [8, 1]", "got [1, 8]");
  EXPECT_ERROR(InvalidArgument, f.reset_operand(TensorView{}), "FFT.reset_operand", "operand view",
               "expected c64 of shape [8, 8]", "got an empty view (null data, rank 0)");
  EXPECT_NO_THROW(f.execute());  // the old operand is still in place
}

TEST(FftErrors, ExecuteBeforePlan) {
  Data d;
  FFT f = d.fft_8x8();
  EXPECT_ERROR(StateError, f.execute(), "execute");
  f.plan();
  EXPECT_NO_THROW(f.execute());
}

TEST(FftErrors, ExecuteWithNoOperand) {
  Data d;
  FFT f = d.planned_fft_8x8();
  f.release_operand();
  EXPECT_ERROR(StateError, f.execute(), "execute");
}

TEST(FftErrors, AnyCallAfterFree) {
  Data d;
  FFT f = d.planned_fft_8x8();
  f.free();
  EXPECT_ERROR(StateError, f.execute(), "execute");
  EXPECT_ERROR(StateError, f.plan(), "plan");
  EXPECT_ERROR(StateError, f.reset_operand(TensorView(d.c.data(), {8, 8})), "reset_operand");
  EXPECT_ERROR(StateError, (void)f.result_shape(), "result_shape");
}

TEST(FftErrors, PlanningArraysNoHostCanHoldAreOutOfMemory) {
  // A measuring FFTW planner plans on arrays of its own that reach as far as the operand: rows 2^55 elements apart
  // (a view of sparse memory) need more than any host holds. The operand itself is never touched.
  Data d;
  const TensorView far_rows(d.c.data(), c64, {2, 4}, Strides{std::int64_t{1} << 55, 1});
  const FFTOptions measure{.axes = {1}, .execution = Execution::cpu(), .planning = Planning::measure};
  for (int round = 0; round < 2; ++round)  // nothing is cached by the failed plan
    EXPECT_ERROR(OutOfMemory, (void)fft(far_rows, measure), "FFT", "FFTW planning arrays", "bytes of host memory");
}

TEST(FftErrors, MisalignedPointer) {
  Data d;
  const auto* bytes = reinterpret_cast<const char*>(d.c.data()) + 4;  // half a c64 element off
  EXPECT_ERROR(InvalidArgument, FFT(TensorView(bytes, c64, {8, 8}), kCpu), "operand", "align");
  FFT f = d.planned_fft_8x8();
  EXPECT_ERROR(InvalidArgument, f.reset_operand(TensorView(bytes, c64, {8, 8})), "align");
}

TEST(FftErrors, WrongDirectionForRealTransforms) {
  Data d;
  FFT f(TensorView(d.r.data(), {8, 8}), kCpu);
  f.plan();
  EXPECT_ERROR(InvalidArgument, f.execute({.direction = Direction::inverse}), "R2C", "forward only");
}

TEST(FftErrors, HalfPrecisionOnTheCpuIsNotSupported) {
  std::vector<cuplan::half2> h(64);
  EXPECT_ERROR(NotSupported, FFT(TensorView(h.data(), {8, 8}), kCpu), "half precision", "c32");
}

TEST(FftErrors, FunctionTypeContradictsOptions) {
  Data d;
  FFTOptions o = kCpu;
  o.fft_type = FFTType::c2c;
  EXPECT_ERROR(InvalidArgument, rfft(TensorView(d.r.data(), {8, 8}), o), "rfft", "expected R2C", "got C2C");
}

TEST(FftErrors, FunctionFormDirectionContradictsTheType) {
  Data d;
  FFTOptions o = kCpu;
  o.fft_type = FFTType::c2r;
  EXPECT_ERROR(InvalidArgument, fft(TensorView(d.c.data(), {8, 5}), o), "fft", "C2R", "inverse only");
  const std::uint64_t misses = plan_cache::stats().misses;
  EXPECT_ERROR(InvalidArgument, fft(TensorView(d.c.data(), {8, 5}), o), "inverse only");
  EXPECT_EQ(plan_cache::stats().misses, misses);  // rejected before any plan is made
}

// An owning operand whose memory ends with the last real row: the complex rows of an in-place R2C result would run
// past it (the last row needs 2(n/2+1) = 12 reals, it has 10).
TEST(FftErrors, InPlaceR2COnAnOwnerTooSmallForTheResult) {
  const Tensor tight = Tensor::empty_strided({4, 10}, {12, 1}, f64, Device::cpu());
  EXPECT_ERROR(InvalidArgument, FFT(tight, {.axes = {1}, .inplace = true, .execution = Execution::cpu()}), "inplace",
               "384 bytes", "12 values");
  // With the padding present it is accepted, and reset_operand checks the new owner the same way.
  const Tensor padded = Tensor::empty({48}, f64, Device::cpu());
  const Tensor fits = Tensor::alias(
      padded, TensorView(padded.data(), f64, {4, 10}, Strides{12, 1}, Device::cpu(), MemorySpace::host_pageable));
  FFT f(fits, {.axes = {1}, .inplace = true, .execution = Execution::cpu()});
  EXPECT_ERROR(InvalidArgument, f.reset_operand(tight), "FFT.reset_operand", "inplace");
  f.plan();
  EXPECT_NO_THROW(f.execute());
}

TEST(FftErrors, ResultsBeyond2To63BytesAreRefusedAtConstruction) {
  // A stride-0 view describes [2^31, 2^31] in one element; its c64 result would need 2^65 bytes.
  std::complex<float> one{1.0f, 0.0f};
  const TensorView huge(&one, {std::int64_t{1} << 31, std::int64_t{1} << 31}, Strides{0, 0}, Device::cpu());
  for (int round = 0; round < 2; ++round) {  // the second round would be a plan-cache hit
    EXPECT_ERROR(InvalidArgument, FFT(huge, {.axes = {1}, .execution = Execution::cpu()}), "operand shape",
                 "c64 of shape [2147483648, 2147483648]", "needs more than 2^63 bytes");
    EXPECT_ERROR(InvalidArgument, fft(huge, {.axes = {1}, .execution = Execution::cpu()}), "operand shape",
                 "needs more than 2^63 bytes");
  }
}

// GPU-only bad input: device mismatch and memory-space mismatch.
TEST(FftErrorsCuda, HostOutputForDeviceExecution) {
  CUPLAN_REQUIRE_GPU();
  Tensor x = Tensor::empty({8, 8}, c64, Device::cuda(0));
  std::vector<std::complex<float>> host_out(64);
  EXPECT_ERROR(InvalidArgument, fft(x, TensorView(host_out.data(), {8, 8})), "out", "expected memory of cuda:0",
               "got host memory");
}

TEST(FftErrorsCuda, ResetWithOperandInAnotherMemorySpace) {
  CUPLAN_REQUIRE_GPU();
  Tensor x = Tensor::empty({8, 8}, c64, Device::cuda(0));
  std::vector<std::complex<float>> host(64);
  FFT f(x);
  f.plan();
  EXPECT_ERROR(InvalidArgument, f.reset_operand(TensorView(host.data(), {8, 8})), "operand memory",
               "expected memory of cuda:0", "got host memory");
}

TEST(FftErrorsCuda, HalfPrecisionNeedsPowerOfTwoLengths) {
  CUPLAN_REQUIRE_GPU();
  Tensor x = Tensor::empty({4, 100}, c32, Device::cuda(0));
  EXPECT_ERROR(NotSupported, FFT(x, {.axes = {1}}), "power-of-two", "100");
}

}  // namespace
}  // namespace cuplan::testing

namespace cuplan::testing {
namespace {

TEST(FftErrorsCuda, DeviceRealDataMustBeAlignedToTheComplexTypeForCufft) {
  CUPLAN_REQUIRE_GPU();
  Tensor buffer = Tensor::empty({65}, f64, Device::cuda(0));
  const TensorView shifted(static_cast<const double*>(buffer.data()) + 1, f64, {64}, Strides{1}, Device::cuda(0),
                           MemorySpace::device);  // 8-byte aligned, cuFFT D2Z needs 16
  EXPECT_ERROR(InvalidArgument, FFT(shifted, {.axes = {0}}), "operand", "align");
}

}  // namespace
}  // namespace cuplan::testing
