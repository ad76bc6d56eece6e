// SPDX-License-Identifier: Apache-2.0
// Bad input: each case throws a typed exception whose message names the operand and the expected value.
#include <gtest/gtest.h>

#include <vector>

#include "matmul/matmul_reference.hpp"

namespace cuplan::testing {
namespace {

template <class E, class F>
void expect_error(F&& f, const std::vector<std::string>& words) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    const std::string what = e.what();
    for (const auto& w : words) EXPECT_NE(what.find(w), std::string::npos) << "message lacks '" << w << "': " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

struct Operands {
  std::vector<float> a = random_vector<float>(4 * 3 * 5), b = random_vector<float>(4 * 5 * 6),
                     c = random_vector<float>(4 * 3 * 6), bias = random_vector<float>(8);
  TensorView av{a.data(), {4, 3, 5}}, bv{b.data(), {4, 5, 6}};

  // A Matmul of av and bv on the CPU, planned.
  Matmul planned() const {
    Matmul mm(av, bv, {.execution = Execution::cpu()});
    mm.plan();
    return mm;
  }
};
const MatmulOptions cpu{.execution = Execution::cpu()};

// A [4, 3, 5] times B's buffer viewed as `b_shape`: an InvalidArgument naming `words`.
void expect_b_shape_rejected(Shape b_shape, const std::vector<std::string>& words) {
  Operands o;
  expect_error<InvalidArgument>([&] { Matmul(o.av, TensorView(o.b.data(), b_shape), cpu); }, words);
}
// `x`'s buffer viewed as `a_shape` times itself viewed as `b_shape`: an InvalidArgument naming `words`.
template <class T>
void expect_product_rejected(std::vector<T> x, Shape a_shape, Shape b_shape, const std::vector<std::string>& words) {
  expect_error<InvalidArgument>([&] { Matmul(TensorView(x.data(), a_shape), TensorView(x.data(), b_shape), cpu); },
                                words);
}

// A [4, 3, 5] times B [4, 5, 6] with `options` (which refer to no operand buffer): an InvalidArgument naming `words`.
void expect_options_rejected(const MatmulOptions& options, const std::vector<std::string>& words) {
  Operands o;
  expect_error<InvalidArgument>([&] { Matmul(o.av, o.bv, options); }, words);
}

TEST(MatmulErrors, ResultsBeyond2To63BytesAreRefusedAtConstruction) {
  // [2^31, 1] x [1, 2^31] of stride-0 views: one element each, a product of 2^64 bytes of f32.
  float one = 1.0f;
  const TensorView a(&one, f32, {std::int64_t{1} << 31, 1}, Strides{0, 0});
  const TensorView b(&one, f32, {1, std::int64_t{1} << 31}, Strides{0, 0});
  const std::vector<std::string> words{"operand shape", "f32 of shape [2147483648, 2147483648]",
                                       "needs more than 2^63 bytes"};
  for (int round = 0; round < 2; ++round) {
    expect_error<InvalidArgument>([&] { Matmul(a, b, cpu); }, words);
    expect_error<InvalidArgument>([&] { (void)matmul(a, b, cpu); }, words);
  }
}

TEST(MatmulErrors, InnerDimensionsDiffer) {
  expect_b_shape_rejected({4, 6, 5}, {"inner dimensions", "5", "6"});
}
TEST(MatmulErrors, BatchShapesCannotBroadcast) {
  expect_b_shape_rejected({3, 5, 6}, {"batch shapes", "[4]", "[3]"});
}
TEST(MatmulErrors, DtypesDoNotCombine) {
  Operands o;
  std::vector<double> bd(4 * 5 * 6);
  expect_error<InvalidArgument>([&] { Matmul(o.av, TensorView(bd.data(), {4, 5, 6}), cpu); }, {"f32", "f64"});
}
TEST(MatmulErrors, UnsupportedDtype) {
  expect_product_rejected(std::vector<std::int32_t>(6), {2, 3}, {3, 2}, {"i32", "expected"});
}
TEST(MatmulErrors, BiasOfWrongLength) {
  Operands o;
  expect_error<InvalidArgument>(
      [&] {
        Matmul(o.av, o.bv,
               {.epilog = Epilog::bias, .bias = TensorView(o.bias.data(), {6}), .execution = Execution::cpu()});
      },
      {"bias", "[6]", "[3]"});
}
TEST(MatmulErrors, BiasOfWrongDtype) {
  Operands o;
  std::vector<double> bias(3);
  expect_error<InvalidArgument>(
      [&] {
        Matmul(o.av, o.bv,
               {.epilog = Epilog::bias, .bias = TensorView(bias.data(), {3}), .execution = Execution::cpu()});
      },
      {"bias", "f64", "f32"});
}
TEST(MatmulErrors, COfWrongShape) {
  Operands o;
  expect_error<InvalidArgument>(
      [&] {
        Matmul(o.av, o.bv, {.c = TensorView(o.c.data(), {4, 6, 3}), .beta = 1.0, .execution = Execution::cpu()});
      },
      {"operand c", "[4, 6, 3]", "[4, 3, 6]"});
}
TEST(MatmulErrors, BetaWithoutC) {
  expect_options_rejected({.beta = 1.0, .execution = Execution::cpu()}, {"beta", "c"});
}
TEST(MatmulErrors, EpilogNeedsBias) {
  expect_options_rejected({.epilog = Epilog::gelu_bias, .execution = Execution::cpu()},
                          {"gelu_bias", "bias", "length M = 3"});
}
TEST(MatmulErrors, EpilogNeedsAux) {
  expect_options_rejected({.epilog = Epilog::dgelu, .execution = Execution::cpu()}, {"dgelu", "epilog_aux"});
}
TEST(MatmulErrors, BiasGivenWithoutBiasEpilog) {
  Operands o;
  expect_error<InvalidArgument>(
      [&] { Matmul(o.av, o.bv, {.bias = TensorView(o.bias.data(), {3}), .execution = Execution::cpu()}); },
      {"bias", "none"});
}
TEST(MatmulErrors, Fp8WithoutScales) {
  expect_product_rejected(std::vector<cuplan::float8_e4m3>(16), {4, 4}, {4, 4}, {"fp8", "scales.a"});
}
TEST(MatmulErrors, Fp8OnTheCpuIsNotSupported) {
  std::vector<cuplan::float8_e4m3> x(16);
  MatmulOptions o{.execution = Execution::cpu()};
  o.scales.a.value = 1.0f;
  o.scales.b.value = 1.0f;
  expect_error<NotSupported>(
      [&] {
        Matmul(TensorView(x.data(), {4, 4}), TensorView(x.data(), {4, 4}), o);
      },
      {"fp8", "compute capability >= 8.9"});
}
TEST(MatmulErrors, ComplexAlphaForRealOperands) {
  expect_options_rejected({.alpha = cd(1, 1), .execution = Execution::cpu()}, {"alpha", "real", "f32"});
}
TEST(MatmulErrors, ComputeTypeDoesNotCombine) {
  expect_options_rejected({.compute = Compute::f64, .execution = Execution::cpu()}, {"compute f64", "f32"});
}
TEST(MatmulErrors, MisalignedPointerAtConstruction) {
  std::vector<float> a(64), b(64);
  const auto* shifted = reinterpret_cast<const float*>(reinterpret_cast<const char*>(a.data()) + 2);
  expect_error<InvalidArgument>(
      [&] {
        Matmul(TensorView(shifted, f32, {4, 4}), TensorView(b.data(), {4, 4}), cpu);
      },
      {"a", "align"});
}
TEST(MatmulErrors, MisalignedPointerAtReset) {
  alignas(64) static float a[64], b[64];
  Matmul mm(TensorView(a, {4, 4}), TensorView(b, {4, 4}), cpu);
  mm.plan();
  const auto* shifted = reinterpret_cast<const float*>(reinterpret_cast<const char*>(a) + 4);  // 4-byte aligned
  expect_error<InvalidArgument>(
      [&] {
        mm.reset_operand(MatmulOperand::a, TensorView(shifted, f32, {4, 4}));
      },
      {"reset_operand", "a", "alignment", "16 bytes"});
  expect_error<InvalidArgument>(
      [&] {
        mm.reset_operands({.a = TensorView(shifted, f32, {4, 4})});
      },
      {"reset_operands", "a", "alignment"});
  EXPECT_NO_THROW((void)mm.execute()) << "a rejected reset leaves the object usable";
}
TEST(MatmulErrors, ResetWithOtherShapes) {
  Operands o;
  Matmul mm = o.planned();
  expect_error<InvalidArgument>(
      [&] {
        mm.reset_operands({.b = TensorView(o.b.data(), {4, 6, 5})});
      },
      {"reset_operands", "b shape", "expected [4, 5, 6]", "got [4, 6, 5]"});
  expect_error<InvalidArgument>(
      [&] {
        mm.reset_operand(MatmulOperand::b, TensorView(o.b.data(), {4, 6, 5}));
      },
      {"Matmul.reset_operand", "b shape", "expected [4, 5, 6]", "got [4, 6, 5]"});
  std::vector<double> b64(o.b.size());
  expect_error<InvalidArgument>(
      [&] {
        mm.reset_operand(MatmulOperand::b, TensorView(b64.data(), {4, 5, 6}));
      },
      {"reset_operand", "b dtype", "expected f32", "got f64"});
  expect_error<InvalidArgument>(
      [&] { mm.reset_operand(MatmulOperand::b, TensorView{}); },
      {"Matmul.reset_operand", "b view", "expected f32 of shape [4, 5, 6]", "got an empty view (null data, rank 0)"});
  expect_error<InvalidArgument>(
      [&] {
        mm.reset_operand(MatmulOperand::b, TensorView(o.b.data(), f32, {4, 5, 6}, Strides({30, 1, 5})));
      },
      {"reset_operand", "b strides", "expected [30, 6, 1]", "got [30, 1, 5]"});
  // Not part of the planned product, or no operand at all.
  expect_error<InvalidArgument>([&] { mm.reset_operand(MatmulOperand::bias, TensorView(o.bias.data(), {3})); },
                                {"reset_operand", "bias", "planned"});
  expect_error<InvalidArgument>([&] { mm.reset_operand(static_cast<MatmulOperand>(9), o.bv); },
                                {"reset_operand", "which", "MatmulOperand", "9"});
  EXPECT_NO_THROW((void)mm.execute()) << "rejected resets leave the object usable";
}
TEST(MatmulErrors, ExecuteBeforePlan) {
  Operands o;
  Matmul mm(o.av, o.bv, cpu);
  expect_error<StateError>([&] { (void)mm.execute(); }, {"execute"});
}
TEST(MatmulErrors, CallsAfterFree) {
  Operands o;
  Matmul mm = o.planned();
  mm.free();
  expect_error<StateError>([&] { (void)mm.execute(); }, {"execute"});
  expect_error<StateError>([&] { mm.plan(); }, {"plan"});
  expect_error<StateError>([&] { mm.reset_operands({.a = o.av}); }, {"reset_operands"});
  expect_error<StateError>([&] { mm.reset_operand(MatmulOperand::a, o.av); }, {"reset_operand"});
  expect_error<StateError>([&] { (void)mm.result_shape(); }, {"result_shape"});
  EXPECT_NO_THROW(mm.free());
}
TEST(MatmulErrors, ExecuteAfterReleaseOperand) {
  Operands o;
  Matmul mm = o.planned();
  mm.release_operand();
  expect_error<StateError>([&] { (void)mm.execute(); }, {"execute"});
}
TEST(MatmulErrors, FunctionFormWithAuxEpilogPointsToMatmulWithAux) {
  Operands o;
  expect_error<InvalidArgument>(
      [&] { (void)matmul(o.av, o.bv, {.epilog = Epilog::relu_aux, .execution = Execution::cpu()}); },
      {"matmul_with_aux"});
}
TEST(MatmulErrors, EpilogOnComplexIsNotSupported) {
  std::vector<std::complex<float>> x(16);
  expect_error<NotSupported>(
      [&] {
        Matmul(TensorView(x.data(), {4, 4}), TensorView(x.data(), {4, 4}),
               {.epilog = Epilog::relu, .execution = Execution::cpu()});
      },
      {"relu", "c64"});
}
TEST(MatmulErrors, OutputOfAnotherLayoutOrShape) {
  Operands o;
  // gelu_bias plans a column-major D (4, 3, 6): strides (18, 1, 3); a row-major output is refused.
  Matmul mm(o.av, o.bv,
            {.epilog = Epilog::gelu_bias, .bias = TensorView(o.bias.data(), {3}), .execution = Execution::cpu()});
  mm.plan();
  std::vector<float> d(4 * 3 * 6);
  expect_error<InvalidArgument>(
      [&] {
        (void)mm.execute({.out = TensorView(d.data(), {4, 3, 6})});
      },
      {"out strides", "[18, 1, 3]", "[18, 6, 1]", "column-major"});
  expect_error<InvalidArgument>(
      [&] {
        (void)mm.execute({.out = TensorView(d.data(), {4, 6, 3})});
      },
      {"out shape", "expected [4, 3, 6]", "got [4, 6, 3]"});
  std::vector<double> d64(4 * 3 * 6);
  expect_error<InvalidArgument>(
      [&] {
        (void)mm.execute({.out = TensorView(d64.data(), f64, {4, 3, 6}, Strides({18, 1, 3}))});
      },
      {"out dtype", "expected f32", "got f64"});
  EXPECT_NO_THROW((void)mm.execute({.out = TensorView(d.data(), f32, {4, 3, 6}, Strides({18, 1, 3}))}));
}
TEST(MatmulErrors, OperandCopiesNoHostCanHoldAreOutOfMemory) {
  // A of [2^20, 2^20] broadcast from one element (strides 0): BLAS needs it dense, 4 TiB, which no host holds. The
  // result ([2^20, 1]) fits.
  std::vector<float> one(1, 1.0f);
  const TensorView a(one.data(), f32, {1 << 20, 1 << 20}, Strides{0, 0}),
      b(one.data(), f32, {1 << 20, 1}, Strides{0, 0});
  for (int round = 0; round < 2; ++round)
    expect_error<OutOfMemory>([&] { (void)matmul(a, b, cpu); }, {"matmul", "operand copy", "bytes of host memory"});
  EXPECT_NO_THROW((void)matmul(TensorView(one.data(), {1, 1}), TensorView(one.data(), {1, 1}), cpu));
}

TEST(MatmulErrors, MemoryLimitTooSmallForAnyAlgorithm) {
  CUPLAN_REQUIRE_GPU();
  // A large split-friendly product: every cuBLASLt algorithm for it wants some workspace... or none; either way the
  // library must not pretend. With a 1-byte limit the result is either a plan that needs no workspace or the error.
  Tensor a = Tensor::empty({64, 4096}, f32, Device::cuda(0)), b = Tensor::empty({4096, 64}, f32, Device::cuda(0));
  Matmul mm(a, b, {.memory_limit = 1});
  try {
    mm.plan();
    for (const auto& alg : mm.algorithms()) EXPECT_LE(alg.workspace_bytes, 1u) << alg.description;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("memory_limit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cuplan::testing
