// SPDX-License-Identifier: Apache-2.0
// Bad input to the real-to-real transforms: typed exceptions naming the operand or option, the expected and the
// actual value, the same from the class form and the function forms (plan-cache hit and miss), and objects that
// stay usable or clearly dead.

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "cuplan/format.hpp"
#include "support/test_support.hpp"

namespace {

using namespace cuplan;
using cuplan::testing::expect_throw_naming;

const Execution cpu = Execution::cpu();

TEST(R2RErrors, TypeOutOfRange) {
  std::vector<double> h(8, 1.0);
  const TensorView x(h.data(), {8});
  for (int type : {0, 5, -1}) {
    expect_throw_naming<InvalidArgument>([&] { (void)dct(x, {.type = type, .execution = cpu}); },
                                         {"dct", "type", "expected 1, 2, 3 or 4", std::to_string(type)});
    expect_throw_naming<InvalidArgument>([&] { (void)idstn(x, {.type = type, .execution = cpu}); },
                                         {"idstn", "type", std::to_string(type)});
  }
}

TEST(R2RErrors, ResultsBeyond2To63BytesAreRefusedAtConstruction) {
  // A stride-0 view describes [2^31, 2^31] in one element; its f32 result would need 2^64 bytes.
  float one = 1.0f;
  const TensorView huge(&one, {std::int64_t{1} << 31, std::int64_t{1} << 31}, Strides{0, 0}, Device::cpu());
  const std::initializer_list<std::string> words{"operand shape", "f32 of shape [2147483648, 2147483648]",
                                                 "needs more than 2^63 bytes"};
  for (int round = 0; round < 2; ++round) {
    expect_throw_naming<InvalidArgument>([&] { RealTransform(huge, {.axes = {1}, .execution = cpu}); }, words);
    expect_throw_naming<InvalidArgument>([&] { (void)dct(huge, {.execution = cpu}); }, words);
    expect_throw_naming<InvalidArgument>([&] { (void)dstn(huge, {.execution = cpu}); }, words);
  }
}

TEST(R2RErrors, EmptyResultsOfHugeExtentsAreAccepted) {
  // An extent 0 anywhere empties the result, however large the others: nothing to refuse.
  float one = 1.0f;
  const TensorView empty(&one, f32, {std::int64_t{1} << 31, std::int64_t{1} << 31, 0}, Strides{0, 0, 0}, Device::cpu());
  for (int round = 0; round < 2; ++round) EXPECT_EQ(dct(empty, {.axis = 0, .execution = cpu}).numel(), 0);
}

TEST(R2RErrors, EnumsOutOfRange) {
  std::vector<double> h(8, 1.0);
  const TensorView x(h.data(), {8});
  // Twice: the second call would be a plan-cache hit if the first had planned.
  for (int round = 0; round < 2; ++round) {
    expect_throw_naming<InvalidArgument>([&] { (void)dct(x, {.norm = static_cast<R2RNorm>(3), .execution = cpu}); },
                                         {"dct", "norm", "R2RNorm", "0 to 2", "got 3"});
    expect_throw_naming<InvalidArgument>([&] { (void)dct(x, {.norm = static_cast<R2RNorm>(-1), .execution = cpu}); },
                                         {"norm", "got -1"});
    expect_throw_naming<InvalidArgument>(
        [&] { RealTransform rt(x, {.kinds = {static_cast<R2RKind>(8)}, .execution = cpu}); },
        {"RealTransform", "kinds", "R2RKind", "0 to 7", "got 8"});
    expect_throw_naming<InvalidArgument>(
        [&] { (void)dct(x, {.execution = cpu, .blocking = static_cast<Blocking>(9)}); }, {"blocking", "got 9"});
    expect_throw_naming<InvalidArgument>(
        [&] { (void)dct(x, {.execution = cpu, .planning = static_cast<Planning>(7)}); }, {"planning", "got 7"});
  }
  RealTransform rt(x, {.execution = cpu});
  rt.plan();
  expect_throw_naming<InvalidArgument>([&] { (void)rt.execute({.direction = static_cast<Direction>(2)}); },
                                       {"RealTransform.execute", "direction", "got 2"});
  EXPECT_NO_THROW((void)rt.execute());  // still usable
}

TEST(R2RErrors, LengthsInvalidForTheKind) {
  // DCT-I of one point has logical length 0: scipy refuses it, FFTW leaves REDFT00 of n = 1 undefined.
  std::vector<double> one(3, 1.0);
  const TensorView x(one.data(), {3, 1});
  expect_throw_naming<InvalidArgument>([&] { (void)dct(x, {.type = 1, .execution = cpu}); },
                                       {"dct", "axis 1 has length 1", "dct1", "at least 2"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        RealTransform rt(x, {.axes = {0, 1}, .kinds = {R2RKind::dct2, R2RKind::dct1}, .execution = cpu});
      },
      {"RealTransform", "axis 1 has length 1", "dct1"});
  // Every other kind is defined for one point.
  for (int type = 1; type <= 4; ++type) EXPECT_NO_THROW((void)dst(x, {.type = type, .execution = cpu}));
  for (int type = 2; type <= 4; ++type) EXPECT_NO_THROW((void)dct(x, {.type = type, .execution = cpu}));
  // An axis of length 0.
  const TensorView empty(one.data(), f64, {3, 0}, Strides{1, 1}, Device::cpu(), MemorySpace::host_pageable);
  expect_throw_naming<InvalidArgument>([&] { (void)dct(empty, {.execution = cpu}); },
                                       {"axis 1 has length 0", "at least 1"});
}

TEST(R2RErrors, DtypeAxesAndKinds) {
  std::vector<std::complex<float>> c(8);
  expect_throw_naming<InvalidArgument>([&] { (void)dct(TensorView(c.data(), {8}), {.execution = cpu}); },
                                       {"dct", "operand dtype", "f32 or f64", "c64"});
  std::vector<double> h(24, 1.0);
  const TensorView x(h.data(), {2, 3, 4});
  expect_throw_naming<InvalidArgument>([&] { (void)dct(x, {.axis = 3, .execution = cpu}); },
                                       {"dct: axis: axis 3", "out of range", "3-D"});
  // An axis out of range names the option it came from.
  expect_throw_naming<InvalidArgument>(
      [&] {
        (void)dctn(x, {.axes = {0, 3}, .execution = cpu});
      },
      {"dctn: axes: axis 3", "out of range", "3-D"});
  expect_throw_naming<InvalidArgument>([&] { RealTransform rt(x, {.axes = {-4}, .execution = cpu}); },
                                       {"RealTransform: axes: axis -4", "out of range", "3-D"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        (void)dctn(x, {.axes = {0, -3}, .execution = cpu});
      },
      {"dctn", "axes", "each axis once", "axis 0 twice"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        (void)dctn(x, {.axes = {0, 1, 2, 0}, .execution = cpu});
      },
      {"dctn", "axes", "1 to 3", "got 4"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        RealTransform rt(x, {.axes = {0, 1, 2}, .kinds = {R2RKind::dct2, R2RKind::dst2}, .execution = cpu});
      },
      {"RealTransform", "kinds", "1 kind or one per axis (3)", "got 2"});
  std::vector<double> h4(16, 1.0);
  expect_throw_naming<InvalidArgument>(
      [&] {
        (void)dctn(TensorView(h4.data(), {2, 2, 2, 2}), {.execution = cpu});
      },
      {"dctn", "axes", "more than 3 axes", "name them"});
}

TEST(R2RErrors, OutOperandsAndInPlace) {
  std::vector<double> h(12, 1.0), o(12, 0.0), small(6, 0.0);
  const TensorView x(h.data(), {3, 4});
  expect_throw_naming<InvalidArgument>(
      [&] {
        dct(x, TensorView(small.data(), {3, 2}), {.execution = cpu});
      },
      {"dct", "out", "shape", "[3, 4]", "[3, 2]"});
  std::vector<float> of(12);
  expect_throw_naming<InvalidArgument>(
      [&] {
        dct(x, TensorView(of.data(), {3, 4}), {.execution = cpu});
      },
      {"dct", "out", "dtype", "f64", "f32"});
  expect_throw_naming<InvalidArgument>([&] { dct(x, x, {.execution = cpu}); }, {"out", "operand"});
  expect_throw_naming<InvalidArgument>(
      [&] {
        dct(x, TensorView(o.data(), {3, 4}), {.inplace = true, .execution = cpu});
      },
      {"dct", "out", "in-place"});
  const TensorView read_only = x.as_read_only();
  expect_throw_naming<InvalidArgument>([&] { (void)dct(read_only, {.inplace = true, .execution = cpu}); },
                                       {"operand", "read-only"});
  // An out with the right layout works after all that.
  dct(x, TensorView(o.data(), {3, 4}), {.execution = cpu});
  EXPECT_EQ(o[0], 8.0);  // 2 * sum of four ones
}

TEST(R2RErrors, ClassLifecycle) {
  std::vector<double> h(12, 1.0), other(6, 1.0);
  const TensorView x(h.data(), {3, 4});
  RealTransform rt(x, {.execution = cpu});
  expect_throw_naming<StateError>([&] { (void)rt.execute(); }, {"RealTransform.execute", "plan"});
  rt.plan();
  expect_throw_naming<InvalidArgument>(
      [&] {
        rt.reset_operand(TensorView(other.data(), {3, 2}));
      },
      {"RealTransform.reset_operand", "operand", "shape", "[3, 4]", "[3, 2]"});
  rt.release_operand();
  expect_throw_naming<StateError>([&] { (void)rt.execute(); }, {"RealTransform.execute", "operand"});
  rt.reset_operand(x);
  EXPECT_NO_THROW((void)rt.execute());
  EXPECT_EQ(rt.state(), "live");
  RealTransform moved = std::move(rt);
  EXPECT_EQ(rt.state(), "moved-from");
  expect_throw_naming<StateError>([&] { (void)rt.execute(); }, {"RealTransform.execute", "moved from"});
  moved.free();
  moved.free();  // idempotent
  EXPECT_EQ(moved.state(), "freed");
  expect_throw_naming<StateError>([&] { (void)moved.execute(); }, {"RealTransform.execute", "free()"});
  expect_throw_naming<StateError>([&] { moved.plan(); }, {"RealTransform.plan", "free()"});
  expect_throw_naming<StateError>([&] { moved.reset_operand(x); }, {"RealTransform.reset_operand", "free()"});
  expect_throw_naming<StateError>([&] { (void)moved.describe(); }, {"RealTransform.describe", "free()"});
}

TEST(R2RErrors, PlanningArraysNoHostCanHoldAreOutOfMemory) {
  // A measuring FFTW planner plans on arrays of its own that reach as far as the operand: here rows 2^55 elements
  // apart (a view of sparse memory), which no host holds. The operand itself is never touched.
  std::vector<double> h(8, 1.0);
  const TensorView far_rows(h.data(), f64, {2, 4}, Strides{std::int64_t{1} << 55, 1});
  const std::initializer_list<std::string> words{"RealTransform", "FFTW planning arrays", "bytes of host memory"};
  for (int round = 0; round < 2; ++round)  // nothing is cached by the failed plan
    expect_throw_naming<OutOfMemory>([&] { (void)dct(far_rows, {.execution = cpu, .planning = Planning::measure}); },
                                     words);
  RealTransform rt(far_rows, {.execution = cpu, .planning = Planning::measure});
  expect_throw_naming<OutOfMemory>([&] { rt.plan(); }, words);
  expect_throw_naming<StateError>([&] { (void)rt.execute(); }, {"RealTransform.execute", "plan"});
}

TEST(R2RErrors, AxesWhoseFftwTablesNoHostCanHoldAreOutOfMemory) {
  // FFTW's planner allocates tables of its own of about an axis's length (twice it for DCT-I), with FFTW_ESTIMATE too,
  // and ends the process when it cannot: a stride-0 view of 2^40 elements (one element of memory) made plan() abort.
  double one = 1.0;
  const TensorView huge(&one, f64, {std::int64_t{1} << 40}, Strides{0});
  const std::initializer_list<std::string> words{"RealTransform", "FFTW plan tables", "axis 0", "length 1099511627776",
                                                 "bytes of host memory"};
  for (R2RKind kind : {R2RKind::dct1, R2RKind::dct2, R2RKind::dst4}) {
    RealTransform rt(huge, {.kinds = {kind}, .execution = cpu});
    expect_throw_naming<OutOfMemory>([&] { rt.plan(); }, words);
    expect_throw_naming<StateError>([&] { (void)rt.execute(); }, {"RealTransform.execute", "plan"});
  }
  const TensorView rows(&one, f64, {4, std::int64_t{1} << 40}, Strides{0, 0});
  for (int round = 0; round < 2; ++round) {  // nothing is cached by the failed plan
    expect_throw_naming<OutOfMemory>([&] { (void)dst(huge, {.type = 1, .execution = cpu}); }, words);
    expect_throw_naming<OutOfMemory>([&] { (void)dctn(rows, {.axes = {1}, .execution = cpu}); },
                                     {"FFTW plan tables", "axis 1", "bytes of host memory"});
  }
  // An axis the host can plan still runs.
  std::vector<double> h(8, 1.0);
  EXPECT_EQ(dct(TensorView(h.data(), {8}), {.execution = cpu}).numel(), 8);
}

TEST(R2RErrors, CudaWithoutADevice) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this test checks the refusal without one";
  std::vector<double> h(8, 1.0);
  expect_throw_naming<NotSupported>([&] { (void)dct(TensorView(h.data(), {8}), {.execution = Execution::cuda()}); },
                                    {"no CUDA device"});
}

TEST(R2RErrors, QueriesAndDescribe) {
  std::vector<float> h(2 * 3 * 5, 1.0f);
  const TensorView x(h.data(), {2, 3, 5});
  RealTransform rt(x, {.kinds = {R2RKind::dst1, R2RKind::dct4}, .norm = R2RNorm::ortho, .execution = cpu});
  EXPECT_EQ(rt.axes(), (std::vector<int>{1, 2}));
  EXPECT_EQ(rt.kinds(), (std::vector<R2RKind>{R2RKind::dst1, R2RKind::dct4}));
  EXPECT_EQ(rt.result_shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(rt.result_dtype(), f32);
  EXPECT_EQ(rt.result_strides(), (Strides{15, 5, 1}));
  EXPECT_FALSE(rt.uses_cuda());
  const std::string text = rt.describe();
  EXPECT_NE(text.find("dst1, dct4"), std::string::npos) << text;
  EXPECT_NE(text.find("ortho"), std::string::npos) << text;
  EXPECT_NE(text.find("FFTW"), std::string::npos) << text;
  EXPECT_EQ(fmt::format("{}", rt), text);  // the opt-in formatters of cuplan/format.hpp
  EXPECT_EQ(fmt::format("{} {}", R2RKind::dct4, R2RNorm::ortho), "dct4 ortho");
  EXPECT_EQ(to_string(R2RKind::dst3), "dst3");
  EXPECT_EQ(to_string(R2RNorm::forward), "forward");
}

}  // namespace
