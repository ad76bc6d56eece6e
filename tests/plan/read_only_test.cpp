// SPDX-License-Identifier: Apache-2.0
// Read-only views (TensorView::read_only, from as_read_only or a DLPack tensor flagged read-only): every place that
// writes refuses them with InvalidArgument naming the operand, on every path (class and function form, cache miss
// and hit, CPU and CUDA execution, copy), leaves the destination untouched and the object usable; reading them works.
// Public API only, as a user calls it.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cuplan/cuplan.hpp"
#include "cuplan/format.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

using cf = std::complex<float>;
constexpr float poison = -7.0f;

// Runs `call`, expects InvalidArgument whose message names `operand` and says expected writable, got read-only.
template <class F>
void expect_read_only_error(F&& call, const std::string& operand) {
  try {
    call();
    ADD_FAILURE() << "expected InvalidArgument for a read-only " << operand;
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(operand + ": expected writable memory"), std::string::npos) << message;
    EXPECT_NE(message.find("read-only"), std::string::npos) << message;
  }
}

// Forward DFT of each row of a rows x n row-major array, in float64.
std::vector<std::complex<double>> dft_rows(const std::vector<cf>& x, int rows, int n) {
  std::vector<std::complex<double>> y(x.size());
  const double pi = 3.14159265358979323846;
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < n; ++k) {
      std::complex<double> sum = 0;
      for (int j = 0; j < n; ++j)
        sum += std::complex<double>(x[static_cast<std::size_t>(r * n + j)]) *
               std::polar(1.0, -2.0 * pi * static_cast<double>(j) * k / n);
      y[static_cast<std::size_t>(r * n + k)] = sum;
    }
  return y;
}

template <class V>
double error_against(const V& got, const std::vector<std::complex<double>>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    num += std::norm(std::complex<double>(got[i]) - want[i]);
    den += std::norm(want[i]);
  }
  return std::sqrt(num / den);
}

bool all_poisoned(const std::vector<cf>& v) {
  for (const cf& z : v)
    if (z != cf(poison, poison)) return false;
  return true;
}

TEST(ReadOnly, ViewsAndTensorsCarryTheFlag) {
  std::vector<float> data(12);
  const TensorView view(data.data(), {3, 4});
  EXPECT_FALSE(view.read_only());
  const TensorView read_only = view.as_read_only();
  EXPECT_TRUE(read_only.read_only());
  EXPECT_EQ(read_only.data(), view.data());
  EXPECT_EQ(read_only.shape(), view.shape());
  const TensorView copied = read_only;
  EXPECT_TRUE(copied.read_only()) << "a copy of the view keeps the flag";
  EXPECT_NE(fmt::format("{}", read_only).find(", read-only)"), std::string::npos) << fmt::format("{}", read_only);
  EXPECT_EQ(fmt::format("{}", view).find("read-only"), std::string::npos);

  const Tensor t = Tensor::empty({3, 4}, f32);
  const Tensor r = t.as_read_only();
  EXPECT_FALSE(t.read_only()) << "as_read_only leaves the original writable";
  EXPECT_TRUE(r.read_only());
  EXPECT_TRUE(r.view().read_only());
  EXPECT_EQ(r.data(), t.data()) << "the read-only Tensor shares the memory";
  EXPECT_TRUE(r.owning());
  EXPECT_NE(fmt::format("{}", r).find("owning, read-only"), std::string::npos) << fmt::format("{}", r);
}

TEST(ReadOnly, CopyRefusesAReadOnlyDestinationAndReadsAReadOnlySource) {
  const std::vector<float> src = testing::random_vector<float>(64);
  std::vector<float> dst(64, poison);
  const TensorView s(src.data(), {8, 8}), d(dst.data(), {8, 8});
  expect_read_only_error([&] { copy(s, d.as_read_only()); }, "dst");
  for (float v : dst) ASSERT_EQ(v, poison) << "the refused copy wrote nothing";
  copy(s.as_read_only(), d);  // a read-only source is read as any other
  EXPECT_EQ(dst, src);
  // The owning overloads take the same path.
  const Tensor ts = Tensor::empty({8, 8}, f32), td = Tensor::empty({8, 8}, f32);
  expect_read_only_error([&] { copy(ts, td.as_read_only()); }, "dst");
}

std::string execution_name(const ::testing::TestParamInfo<bool>& param) {
  return param.param ? "cuda" : "cpu";
}

class ReadOnlyFft : public ::testing::TestWithParam<bool> {
 protected:
  Execution execution() const { return GetParam() ? Execution::cuda() : Execution::cpu(); }
  void SetUp() override {
    if (GetParam()) CUPLAN_REQUIRE_GPU();
  }
};

TEST_P(ReadOnlyFft, ClassFormRefusesAReadOnlyOutAndStaysUsable) {
  constexpr int rows = 4, n = 16;
  const std::vector<cf> x = testing::random_vector<cf>(rows * n);
  std::vector<cf> out(x.size(), cf(poison, poison));
  const TensorView xv(x.data(), {rows, n}), ov(out.data(), {rows, n});
  // A read-only operand is read as any other; the result goes to a writable out.
  FFT f(xv.as_read_only(), {.axes = {-1}, .execution = execution()});
  f.plan();
  expect_read_only_error([&] { (void)f.execute({.out = ov.as_read_only()}); }, "out");
  EXPECT_TRUE(all_poisoned(out)) << "the refused execute wrote nothing";
  (void)f.execute({.out = ov});
  EXPECT_LT(error_against(out, dft_rows(x, rows, n)), 1e-5);
  // Twice more: the refusal does not depend on the out's layout having been seen (the fast path of a planned out).
  expect_read_only_error([&] { (void)f.execute({.out = ov.as_read_only()}); }, "out");
}

TEST_P(ReadOnlyFft, InPlaceRefusesAReadOnlyOperandOnConstructionAndReset) {
  constexpr int rows = 2, n = 8;
  std::vector<cf> x = testing::random_vector<cf>(rows * n);
  const std::vector<cf> original = x;
  const TensorView xv(x.data(), {rows, n});
  expect_read_only_error([&] { FFT(xv.as_read_only(), {.axes = {-1}, .inplace = true, .execution = execution()}); },
                         "operand");
  FFT f(xv, {.axes = {-1}, .inplace = true, .execution = execution()});
  f.plan();
  expect_read_only_error([&] { f.reset_operand(xv.as_read_only()); }, "operand");
  EXPECT_EQ(x, original) << "nothing was written";
  (void)f.execute();  // still usable with its writable operand
  EXPECT_LT(error_against(x, dft_rows(original, rows, n)), 1e-5);
}

TEST_P(ReadOnlyFft, FunctionFormRefusesOnACacheMissAndOnAHit) {
  constexpr int rows = 3, n = 32;
  std::vector<cf> x = testing::random_vector<cf>(rows * n);
  std::vector<cf> out(x.size(), cf(poison, poison));
  const TensorView xv(x.data(), {rows, n}), ov(out.data(), {rows, n});
  const FFTOptions options{.axes = {-1}, .execution = execution()};
  // A shape no other test plans: the first call is a miss.
  expect_read_only_error([&] { fft(xv, ov.as_read_only(), options); }, "out");
  EXPECT_TRUE(all_poisoned(out));
  fft(xv.as_read_only(), ov, options);  // plans and caches; a read-only operand is fine out of place
  EXPECT_LT(error_against(out, dft_rows(x, rows, n)), 1e-5);
  std::fill(out.begin(), out.end(), cf(poison, poison));
  expect_read_only_error([&] { fft(xv, ov.as_read_only(), options); }, "out");  // a hit
  EXPECT_TRUE(all_poisoned(out));
  // In place: a miss, then a hit after a writable call of the same key.
  const std::vector<cf> original = x;
  const FFTOptions inplace{.axes = {-1}, .inplace = true, .execution = execution()};
  expect_read_only_error([&] { (void)fft(xv.as_read_only(), inplace); }, "operand");
  (void)fft(xv, inplace);
  EXPECT_LT(error_against(x, dft_rows(original, rows, n)), 1e-5);
  const std::vector<cf> after = x;
  expect_read_only_error([&] { (void)fft(xv.as_read_only(), inplace); }, "operand");
  EXPECT_EQ(x, after);
}

INSTANTIATE_TEST_SUITE_P(Executions, ReadOnlyFft, ::testing::Values(false, true), execution_name);

class ReadOnlyMatmul : public ReadOnlyFft {};

TEST_P(ReadOnlyMatmul, RefusesAReadOnlyOutAndReadsReadOnlyOperands) {
  constexpr int m = 5, k = 7, n = 3;
  const std::vector<float> a = testing::random_vector<float>(m * k), b = testing::random_vector<float>(k * n);
  std::vector<float> d(m * n, poison);
  const TensorView av(a.data(), {m, k}), bv(b.data(), {k, n}), dv(d.data(), {m, n});
  Matmul mm(av.as_read_only(), bv.as_read_only(), {.execution = execution()});
  mm.plan();
  expect_read_only_error([&] { (void)mm.execute({.out = dv.as_read_only()}); }, "out");
  for (float v : d) ASSERT_EQ(v, poison) << "the refused execute wrote nothing";
  (void)mm.execute({.out = dv});
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int p = 0; p < k; ++p)
        want += static_cast<double>(a[static_cast<std::size_t>(i * k + p)]) * b[static_cast<std::size_t>(p * n + j)];
      EXPECT_NEAR(d[static_cast<std::size_t>(i * n + j)], want, 1e-4) << i << "," << j;
    }
  // A read-only C is read as any other addend; D over C (out = c's memory) is refused when that view is read-only.
  const std::vector<float> c = testing::random_vector<float>(m * n);
  std::vector<float> c_memory = c;
  const TensorView cv(c_memory.data(), {m, n});
  Matmul with_c(av, bv, {.c = TensorRef(cv.as_read_only()), .beta = 1.0, .execution = execution()});
  with_c.plan();
  expect_read_only_error([&] { (void)with_c.execute({.out = cv.as_read_only()}); }, "out");
  EXPECT_EQ(c_memory, c) << "the refused execute wrote nothing";
  std::fill(d.begin(), d.end(), poison);
  (void)with_c.execute({.out = dv});
  for (int i = 0; i < m * n; ++i) {
    const int row = i / n, col = i % n;
    double want = c[static_cast<std::size_t>(i)];
    for (int p = 0; p < k; ++p)
      want += static_cast<double>(a[static_cast<std::size_t>(row * k + p)]) * b[static_cast<std::size_t>(p * n + col)];
    EXPECT_NEAR(d[static_cast<std::size_t>(i)], want, 1e-4) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Executions, ReadOnlyMatmul, ::testing::Values(false, true), execution_name);

TEST(ReadOnlyDevice, DeviceDestinationsAreRefusedBeforeAnyWork) {
  CUPLAN_REQUIRE_GPU();
  const std::vector<cf> host = testing::random_vector<cf>(4 * 64);
  const Tensor x = Tensor::empty({4, 64}, c64, Device::cuda(0));
  copy(TensorView(host.data(), {4, 64}), x);
  const Tensor out = Tensor::empty({4, 64}, c64, Device::cuda(0));
  expect_read_only_error([&] { copy(TensorView(host.data(), {4, 64}), out.as_read_only()); }, "dst");
  FFT f(x.as_read_only(), {.axes = {-1}});
  f.plan();
  expect_read_only_error([&] { (void)f.execute({.out = out.as_read_only()}); }, "out");
  expect_read_only_error([&] { fft(x, out.as_read_only(), {.axes = {-1}}); }, "out");
  expect_read_only_error([&] { FFT(x.as_read_only(), {.axes = {-1}, .inplace = true}); }, "operand");
  // Still usable: a writable out receives the transform.
  (void)f.execute({.out = out});
  std::vector<cf> back(host.size());
  copy(out, TensorView(back.data(), {4, 64}));
  EXPECT_LT(error_against(back, dft_rows(host, 4, 64)), 1e-5);
}

}  // namespace
}  // namespace cuplan
