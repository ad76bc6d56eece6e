// SPDX-License-Identifier: Apache-2.0
// Class form lifecycle and the function form's plan cache.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include "base/cuda_check.hpp"
#include "cuplan/format.hpp"
#include "matmul/matmul_reference.hpp"
#include "matmul/planner.hpp"

namespace cuplan::testing {
namespace {

std::vector<cd> reference(const HostMatrix<double>& a, const HostMatrix<double>& b) {
  std::vector<cd> r(static_cast<std::size_t>(a.rows * b.cols));
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < b.cols; ++j)
      for (std::int64_t k = 0; k < a.cols; ++k)
        r[static_cast<std::size_t>(i * b.cols + j)] += a.at({}, 0, i, k) * b.at({}, 0, k, j);
  return r;
}

class MatmulClass : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) CUPLAN_REQUIRE_GPU();
  }
  Execution execution() const { return GetParam() ? Execution::cuda(0) : Execution::cpu(); }
};

TEST_P(MatmulClass, ResetOperandsComputesWithTheNewOperands) {
  HostMatrix<double> a({}, 12, 7), b({}, 7, 9), a2({}, 12, 7), b2({}, 7, 9);
  Matmul mm(a.view(), b.view(), {.execution = execution()});
  mm.plan();
  ASSERT_FALSE(mm.algorithms().empty());
  EXPECT_LT(relative_error(read_all(mm.execute()), reference(a, b)), 1e-12);
  mm.reset_operands({.a = a2.view(), .b = b2.view()});
  EXPECT_LT(relative_error(read_all(mm.execute()), reference(a2, b2)), 1e-12);
  mm.autotune();  // CPU: nothing to choose; GPU: times the candidates on these operands
  EXPECT_LT(relative_error(read_all(mm.execute()), reference(a2, b2)), 1e-12);
  mm.release_operand();
  mm.reset_operands({.a = a.view(), .b = b.view()});
  EXPECT_LT(relative_error(read_all(mm.execute()), reference(a, b)), 1e-12);
}

/// An output of the planned result layout on `device`, filled with NaN so that an element left unwritten shows.
Tensor poisoned_output(const Matmul& mm, Device device) {
  Tensor out = Tensor::empty_strided(mm.result_shape(), mm.result_strides(), mm.result_dtype(), device);
  Tensor host = Tensor::empty_strided(mm.result_shape(), mm.result_strides(), mm.result_dtype());
  std::vector<double> nan(static_cast<std::size_t>(host.numel()), std::nan(""));
  copy(TensorView(nan.data(), mm.result_shape()), host);
  copy(host, out);
  return out;
}

TEST_P(MatmulClass, ResetOperandBComputesWithTheNewB) {
  HostMatrix<double> a({}, 12, 7), b({}, 7, 9);
  Matmul mm(a.view(), b.view(), {.execution = execution()});
  mm.plan();
  for (int step = 0; step < 3; ++step) {
    HostMatrix<double> b_step({}, 7, 9);  // fresh random values each step
    mm.reset_operand(MatmulOperand::b, b_step.view());
    Tensor out = poisoned_output(mm, Device::cpu());
    const Tensor d = mm.execute({.out = out.view()});
    EXPECT_EQ(d.data(), out.data());
    EXPECT_LT(relative_error(read_all(out), reference(a, b_step)), 1e-12) << "step " << step;
  }
}

TEST_P(MatmulClass, ResultQueriesDescribeTheReturnedD) {
  HostMatrix<double> a({3}, 6, 5), b({3}, 5, 4);
  std::vector<double> bias = random_vector<double>(6);
  for (const Epilog epilog : {Epilog::none, Epilog::relu_bias}) {
    MatmulOptions options{.epilog = epilog, .execution = execution()};
    if (epilog == Epilog::relu_bias) options.bias = TensorView(bias.data(), {6});
    Matmul mm(a.view(), b.view(), options);
    mm.plan();
    const Tensor d = mm.execute();
    EXPECT_EQ(mm.result_shape(), d.shape()) << to_string(epilog);
    EXPECT_EQ(mm.result_dtype(), d.dtype()) << to_string(epilog);
    EXPECT_EQ(mm.result_strides(), d.strides()) << to_string(epilog);
    const std::string text = mm.describe();
    EXPECT_NE(text.find("6 x 4 x 5 batch 3"), std::string::npos) << text;
    EXPECT_NE(text.find(to_string(epilog)), std::string::npos) << text;
    EXPECT_NE(text.find(GetParam() ? "cuBLASLt" : "OpenBLAS"), std::string::npos) << text;
    EXPECT_EQ(fmt::format("{}", mm), text);
  }
}

TEST_P(MatmulClass, FreeNeverThrowsAndLaterCallsAreStateErrors) {
  static_assert(noexcept(std::declval<Matmul&>().free()));
  HostMatrix<double> a({}, 4, 4), b({}, 4, 4);
  Matmul mm(a.view(), b.view(), {.execution = execution()});
  mm.plan();
  mm.free();
  mm.free();  // twice: still nothing thrown
  EXPECT_THROW((void)mm.result_shape(), StateError);
  EXPECT_THROW((void)mm.describe(), StateError);
  EXPECT_THROW(mm.reset_operand(MatmulOperand::a, a.view()), StateError);
  Matmul moved = std::move(mm);
  mm.free();  // NOLINT(bugprone-use-after-move): a moved-from object frees nothing and does not throw
}

TEST_P(MatmulClass, MovedFromObjectReportsStateError) {
  HostMatrix<double> a({}, 4, 4), b({}, 4, 4);
  Matmul mm(a.view(), b.view(), {.execution = execution()});
  Matmul other = std::move(mm);
  other.plan();
  EXPECT_THROW(mm.plan(), StateError);  // NOLINT(bugprone-use-after-move): the moved-from state is the subject
  EXPECT_LT(relative_error(read_all(other.execute()), reference(a, b)), 1e-12);
}

TEST_P(MatmulClass, PlanCanSwitchEpilog) {
  HostMatrix<double> a({}, 6, 5), b({}, 5, 4);
  std::vector<double> bias = random_vector<double>(6);
  Matmul mm(a.view(), b.view(), {.execution = execution()});
  mm.plan({.epilog = Epilog::relu_bias, .bias = TensorView(bias.data(), {6})});
  auto ref = reference(a, b);
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = std::max(0.0, ref[i].real() + bias[i / 4]);
  EXPECT_LT(relative_error(read_all(mm.execute()), ref), 1e-12);
}

TEST_P(MatmulClass, FunctionFormReusesCachedPlans) {
  plan_cache::clear();
  plan_cache::reset_stats();
  HostMatrix<double> a({}, 10, 6), b({}, 6, 8), c({}, 10, 8);
  for (int round = 0; round < 3; ++round) {
    HostMatrix<double> a2({}, 10, 6), b2({}, 6, 8);
    const double alpha = 0.5 + round;
    const Tensor d =
        matmul(a2.view(), b2.view(), {.c = c.view(), .alpha = alpha, .beta = 2.0, .execution = execution()});
    auto ref = reference(a2, b2);
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = alpha * ref[i] + 2.0 * c.values[i];
    EXPECT_LT(relative_error(read_all(d.view().on_host() ? d : d.to(Device::cpu())), ref), 1e-12) << round;
  }
  const PlanCacheStats s = plan_cache::stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 2u);
}

TEST_P(MatmulClass, MatmulWithAuxReturnsTheBiasGradient) {
  HostMatrix<double> a({}, 5, 3), b({}, 3, 4);
  const MatmulResult r = matmul_with_aux(a.view(), b.view(), {.epilog = Epilog::bgrada, .execution = execution()});
  std::vector<cd> ref(5);
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 3; ++k) ref[static_cast<std::size_t>(i)] += a.at({}, 0, i, k);
  const Tensor g = r.bias_gradient.view().on_host() ? r.bias_gradient : r.bias_gradient.to(Device::cpu());
  EXPECT_LT(relative_error(read_all(g), ref), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Spaces, MatmulClass, ::testing::Values(false, true),
                         [](const auto& test_info) { return std::string(test_info.param ? "cuda" : "cpu"); });

// On CUDA the relu aux is cuBLASLt's bit mask, each column padded to 128 rows; cuBLASLt writes the product's rows
// only. The padding must come back zero, not as whatever the pool's memory held (poisoned here first), for device
// and host operands alike.
TEST(MatmulAux, PaddingOfTheCudaReluMaskIsZero) {
  CUPLAN_REQUIRE_GPU();
  const std::int64_t m = 40, n = 24, k = 16;  // 40 rows: 5 of each column's 16 bytes are the mask
  HostMatrix<float> a({}, m, k), b({}, k, n);
  Stream s;
  for (bool on_device : {false, true}) {
    SCOPED_TRACE(on_device ? "device operands" : "host operands");
    {
      // Memory the pool hands out again on `s`: the aux and its staging buffer reuse it.
      Tensor poison = Tensor::empty({1 << 16}, i8, Device::cuda(0), s);
      CUPLAN_CUDA_CHECK(cudaMemsetAsync(poison.data(), 0xff, 1 << 16, s.native()));
    }
    const Tensor av = on_device ? Tensor::wrap(a.view()).to(Device::cuda(0), s) : Tensor::wrap(a.view());
    const Tensor bv = on_device ? Tensor::wrap(b.view()).to(Device::cuda(0), s) : Tensor::wrap(b.view());
    const MatmulResult r = matmul_with_aux(av, bv, {.epilog = Epilog::relu_aux, .stream = s});
    ASSERT_EQ(r.aux.shape(), Shape({n, 16}));
    const Tensor mask = r.aux.to(Device::cpu(), s);
    const auto* bytes = static_cast<const unsigned char*>(mask.data());
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t byte = m / 8; byte < 16; ++byte)
        ASSERT_EQ(bytes[j * 16 + byte], 0) << "column " << j << ", byte " << byte;
  }
}

TEST(MatmulLayout, DescribesStridesWithoutCopies) {
  using detail::mm::describe_matrix;
  // Row-major 3x4 with padding, column-major, broadcast batch, nested batch strides, and an uncopyable one.
  auto rm = describe_matrix(3, 4, 6, 1, {}, {}, {});
  EXPECT_TRUE(rm.row_major);
  EXPECT_EQ(rm.ld, 6);
  auto cm = describe_matrix(3, 4, 1, 5, {}, {}, {});
  EXPECT_FALSE(cm.row_major);
  EXPECT_EQ(cm.ld, 5);
  auto bc = describe_matrix(3, 4, 4, 1, {1}, {12}, {7});
  EXPECT_EQ(bc.batch_stride, 0);
  EXPECT_FALSE(bc.needs_copy);
  auto nested = describe_matrix(3, 4, 4, 1, {2, 5}, {60, 12}, {2, 5});
  EXPECT_EQ(nested.batch_stride, 12);
  EXPECT_FALSE(nested.needs_copy);
  auto mixed = describe_matrix(3, 4, 4, 1, {2, 1}, {12, 12}, {2, 5});
  EXPECT_TRUE(mixed.needs_copy);
  auto strided = describe_matrix(3, 4, 8, 2, {}, {}, {});
  EXPECT_TRUE(strided.needs_copy);
}

TEST(MatmulLayout, ResultShapeAndDtype) {
  std::vector<cuplan::half> a(2 * 3 * 4), b(4 * 5);
  detail::mm::ProblemSpec spec;
  spec.a = TensorView(a.data(), {2, 3, 4});
  spec.b = TensorView(b.data(), {4, 5});
  auto p = detail::mm::plan_problem(spec, "test");
  EXPECT_EQ(p.result_shape, Shape({2, 3, 5}));
  EXPECT_EQ(p.result_dtype, f16);
  EXPECT_EQ(p.compute, Compute::f32);
  EXPECT_EQ(p.b.batch_stride, 0);
  EXPECT_TRUE(p.swapped);
  spec.result_dtype = f32;
  spec.epilog = Epilog::relu_aux;
  spec.route.aux_layout = detail::mm::AuxLayout::cublaslt;
  p = detail::mm::plan_problem(spec, "test");
  EXPECT_EQ(p.result_dtype, f32);
  EXPECT_FALSE(p.swapped);
  EXPECT_EQ(p.aux_ld % 128, 0);
}

TEST(MatmulLayout, ResultLayoutFollowsTheEpilog) {
  std::vector<float> a(2 * 3 * 4), b(2 * 4 * 5), bias(3);
  detail::mm::ProblemSpec spec;
  spec.a = TensorView(a.data(), {2, 3, 4});
  spec.b = TensorView(b.data(), {2, 4, 5});
  for (Epilog e : {Epilog::none, Epilog::relu, Epilog::gelu}) {
    spec.epilog = e;
    const auto p = detail::mm::plan_problem(spec, "test");
    EXPECT_TRUE(p.swapped) << to_string(e);
    EXPECT_EQ(p.result_strides, Strides({15, 5, 1})) << to_string(e);
  }
  spec.bias = TensorView(bias.data(), {3});
  for (Epilog e : {Epilog::bias, Epilog::relu_bias, Epilog::gelu_bias}) {
    spec.epilog = e;
    const auto p = detail::mm::plan_problem(spec, "test");
    EXPECT_FALSE(p.swapped) << to_string(e);
    EXPECT_EQ(p.result_strides, Strides({15, 1, 3})) << to_string(e);  // {M*N, 1, M}
    EXPECT_EQ(p.d_strides, Strides({15, 1, 3})) << to_string(e);
  }
  spec.bias.reset();
  spec.epilog = Epilog::bgradb;
  EXPECT_EQ(detail::mm::plan_problem(spec, "test").result_strides, Strides({15, 1, 3}));
  // A 1-D B drops the N axis: D (2, 3) with M contiguous.
  spec.b = TensorView(b.data(), {4});
  spec.epilog = Epilog::bgrada;
  EXPECT_EQ(detail::mm::plan_problem(spec, "test").result_strides, Strides({3, 1}));
}

TEST(MatmulLayout, ConjugatedOperandsChooseTheFormThatTransposesThem) {
  using cf = std::complex<float>;
  std::vector<cf> a(6 * 4), b(4 * 5);
  const TensorView a_row(a.data(), {6, 4}), a_col(a.data(), c64, {6, 4}, Strides({1, 6}));
  const TensorView b_row(b.data(), {4, 5}), b_col(b.data(), c64, {4, 5}, Strides({1, 4}));
  detail::mm::ProblemSpec spec;
  auto plan = [&](TensorView x, TensorView y, bool conj_a, bool conj_b) {
    spec.a = x;
    spec.b = y;
    spec.conjugate_a = conj_a;
    spec.conjugate_b = conj_b;
    return detail::mm::plan_problem(spec, "test");
  };
  // Column-major conjugated operands: D row-major (swapped), no copies.
  auto p = plan(a_col, b_row, true, false);
  EXPECT_TRUE(p.swapped);
  EXPECT_FALSE(p.a.needs_copy);
  p = plan(a_row, b_col, false, true);
  EXPECT_TRUE(p.swapped);
  EXPECT_FALSE(p.b.needs_copy);
  // Row-major conjugated operands: native form, D column-major, no copies.
  p = plan(a_row, b_row, true, false);
  EXPECT_FALSE(p.swapped);
  EXPECT_FALSE(p.a.needs_copy);
  EXPECT_EQ(p.result_strides, Strides({1, 6}));
  p = plan(a_row, b_row, true, true);
  EXPECT_FALSE(p.swapped);
  EXPECT_FALSE(p.a.needs_copy || p.b.needs_copy);
  // A split vote keeps D row-major and copies the row-major operand column-major.
  p = plan(a_row, b_col, true, true);
  EXPECT_TRUE(p.swapped);
  EXPECT_TRUE(p.a.needs_copy);
  EXPECT_FALSE(p.a.row_major);
  EXPECT_EQ(p.a.ld, 6);
  EXPECT_FALSE(p.b.needs_copy);
  // Unconjugated operands never change the form.
  p = plan(a_row, b_row, false, false);
  EXPECT_TRUE(p.swapped);
}

}  // namespace
}  // namespace cuplan::testing
