// SPDX-License-Identifier: Apache-2.0
// A LibraryError raised inside an object's call names the object (docs/misuse.md, "Library errors"): the call,
// the operation, the shapes, the dtypes and the device, in context() and at the end of what(), while the class,
// library, call and status stay those of the failing library call. Library failures are made by fault injection
// (site library, docs/dev/testing.md): on the CPU the FFTW planner and the BLAS product, on a GPU the first cuFFT or
// cuBLASLt call of plan(). After the failure the object works and gives the right result.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "base/error_context.hpp"
#include "base/fault_injection.hpp"
#include "cuplan/cuplan.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

namespace fault = detail::fault;
using C = std::complex<float>;

// Disarms at the end of a test, also a failing one, so that no later test inherits an armed fault.
struct Disarm {
  ~Disarm() { fault::disarm(); }
};

// The LibraryError `call` throws; a failed expectation when it throws nothing or something else.
template <class F>
LibraryError library_error_of(F&& call) {
  try {
    call();
  } catch (const LibraryError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a LibraryError, got: " << e.what();
  }
  ADD_FAILURE() << "expected a LibraryError, got no exception";
  return LibraryError("", "", 0, "", "");
}

void expect_names(const std::string& text, std::initializer_list<const char*> parts) {
  for (const char* part : parts)
    EXPECT_NE(text.find(part), std::string::npos) << "missing \"" << part << "\" in: " << text;
}

// The failure's own part and the object's part: the message is the library's, then "; in <context>".
void expect_library_and_context(const LibraryError& e, const char* library, std::initializer_list<const char*> parts) {
  EXPECT_EQ(e.library(), library);
  EXPECT_FALSE(e.context().empty());
  expect_names(e.context(), parts);
  const std::string what = e.what();
  expect_names(what, {library, "call failed"});
  const std::string tail = "; in " + e.context();
  ASSERT_GE(what.size(), tail.size());
  EXPECT_EQ(what.substr(what.size() - tail.size()), tail) << what;
}

// Forward DFT along the last axis of rows x n values, in double.
std::vector<std::complex<double>> dft_rows(const std::vector<C>& x, int rows, int n) {
  std::vector<std::complex<double>> y(x.size());
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < n; ++k) {
      std::complex<double> sum{};
      for (int j = 0; j < n; ++j)
        sum += std::complex<double>(x[static_cast<std::size_t>(r * n + j)]) *
               std::polar(1.0, -2.0 * std::numbers::pi * j * k / n);
      y[static_cast<std::size_t>(r * n + k)] = sum;
    }
  return y;
}

double max_relative_error(const C* got, const std::vector<std::complex<double>>& want) {
  double worst = 0, scale = 0;
  for (const auto& w : want) scale = std::max(scale, std::abs(w));
  for (std::size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::abs(std::complex<double>(got[i]) - want[i]) / scale);
  return worst;
}

TEST(LibraryErrorContext, FftClassFormOnTheCpuNamesTheTransform) {
  const Disarm disarm;
  std::vector<C> x = testing::random_vector<C>(8 * 16);
  FFT f(TensorView(x.data(), {8, 16}), {.axes = {1}, .execution = Execution::cpu()});
  f.plan();
  fault::arm(fault::Site::library, 1);  // FFTW plans at the first execute (for the arrays' alignment)
  const LibraryError e = library_error_of([&] { (void)f.execute(); });
  EXPECT_TRUE(fault::fired());
  expect_library_and_context(e, "FFTW", {"FFT.execute", "C2C", "c64", "[8, 16]", "axes [1]", "on cpu", "FFTW"});
  EXPECT_EQ(e.status_name(), "CUPLAN_FAULT_INJECTED");
  EXPECT_EQ(e.status(), -1);

  // The object is still usable and right.
  fault::disarm();
  const Tensor y = f.execute();
  EXPECT_LT(max_relative_error(static_cast<const C*>(y.data()), dft_rows(x, 8, 16)), 1e-5);
}

TEST(LibraryErrorContext, FftFunctionFormOnTheCpuNamesTheTransform) {
  const Disarm disarm;
  // A shape no other test of this program uses, so that the plan cache holds no FFTW plan for it.
  std::vector<float> x = testing::random_vector<float>(3 * 42);
  fault::arm(fault::Site::library, 1);
  const LibraryError e = library_error_of([&] {
    (void)rfft(TensorView(x.data(), {3, 42}), {.axes = {1}, .execution = Execution::cpu()});
  });
  expect_library_and_context(e, "FFTW", {"FFT.execute", "R2C", "f32 -> c64", "[3, 42] -> [3, 22]", "on cpu"});
}

TEST(LibraryErrorContext, MatmulOnTheCpuNamesTheProduct) {
  const Disarm disarm;
  const int m = 4, n = 5, k = 3;
  std::vector<float> a = testing::random_vector<float>(m * k), b = testing::random_vector<float>(k * n);
  Matmul mm(TensorView(a.data(), {m, k}), TensorView(b.data(), {k, n}), {.execution = Execution::cpu()});
  mm.plan();
  fault::arm(fault::Site::library, 1);
  const LibraryError e = library_error_of([&] { (void)mm.execute(); });
  expect_library_and_context(e, "BLAS",
                             {"Matmul.execute", "4 x 5 x 3", "f32 x f32 -> f32", "D shape [4, 5]", "on cpu", "BLAS"});

  fault::disarm();
  const Tensor d = mm.execute();
  const float* got = static_cast<const float*>(d.data());
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int l = 0; l < k; ++l)
        want += double(a[static_cast<std::size_t>(i * k + l)]) * b[static_cast<std::size_t>(l * n + j)];
      EXPECT_NEAR(got[i * d.strides()[0] + j * d.strides()[1]], want, 1e-5 * (1 + std::abs(want)));
    }
}

TEST(LibraryErrorContext, TheInnermostObjectNamesItselfAndTheClassStays) {
  const CudaError inner("CUDA runtime", "cudaMemcpyAsync(...)", 700, "cudaErrorIllegalAddress", "inner message",
                        "FFT.execute: C2C c64 -> c64");
  try {
    try {
      throw inner;
    } catch (const LibraryError& e) {
      detail::rethrow_with_context(e, "DistributedFFT.execute", [] { return std::string("outer"); });
    }
  } catch (const CudaError& e) {
    EXPECT_EQ(e.context(), "FFT.execute: C2C c64 -> c64");
    EXPECT_STREQ(e.what(), "inner message");
  }
  try {
    try {
      throw CudaError("CUDA runtime", "cudaMemcpyAsync(...)", 700, "cudaErrorIllegalAddress", "plain");
    } catch (const LibraryError& e) {
      detail::rethrow_with_context(e, "Matmul.execute", [] { return std::string("M x N x K = 1 x 2 x 3"); });
    }
  } catch (const CudaError& e) {  // still a CudaError, with its library, call and status
    EXPECT_EQ(e.context(), "Matmul.execute: M x N x K = 1 x 2 x 3");
    EXPECT_STREQ(e.what(), "plain; in Matmul.execute: M x N x K = 1 x 2 x 3");
    EXPECT_EQ(e.status(), 700);
    EXPECT_EQ(e.status_name(), "cudaErrorIllegalAddress");
    EXPECT_EQ(e.call(), "cudaMemcpyAsync(...)");
  }
}

TEST(LibraryErrorContext, CufftAndCublasLtFailuresNameTheObjectOnTheGpu) {
  CUPLAN_REQUIRE_GPU();
  const Disarm disarm;
  Stream s;
  {
    Tensor x = Tensor::empty({8, 64}, c64, Device::cuda(0), s);
    // Written first: the execute below reads it (initcheck reports a read of memory nothing wrote).
    const std::vector<std::complex<float>> values(8 * 64, {1.0F, -1.0F});
    copy(TensorView(values.data(), {8, 64}), x, s);
    FFT f(x, {.axes = {1}, .stream = s});
    fault::arm(fault::Site::library, 1);  // the first cuFFT call of plan()
    const LibraryError e = library_error_of([&] { f.plan(); });
    expect_library_and_context(e, "cuFFT", {"FFT.plan", "C2C", "c64", "[8, 64]", "axes [1]", "on cuda:0", "cuFFT"});
    EXPECT_EQ(e.status_name(), "CUFFT_INTERNAL_ERROR");
    fault::disarm();
    f.plan();  // usable again
    (void)f.execute();
    s.synchronize();
  }
  {
    Tensor a = Tensor::empty({32, 16}, f32, Device::cuda(0), s);
    Tensor b = Tensor::empty({16, 8}, f32, Device::cuda(0), s);
    const std::vector<float> ones(32 * 16, 1.0F);
    copy(TensorView(ones.data(), {32, 16}), a, s);
    copy(TensorView(ones.data(), {16, 8}), b, s);
    Matmul(a, b, {.stream = s}).plan();  // the process's cuBLASLt handle exists before the fault is armed
    Matmul mm(a, b, {.stream = s});
    fault::arm(fault::Site::library, 1);  // the first cuBLASLt call of plan()
    const LibraryError e = library_error_of([&] { mm.plan(); });
    expect_library_and_context(e, "cuBLASLt",
                               {"Matmul.plan", "32 x 8 x 16", "f32 x f32 -> f32", "on cuda:0", "cuBLASLt"});
    EXPECT_EQ(e.status_name(), "CUBLAS_STATUS_INTERNAL_ERROR");
    fault::disarm();
    mm.plan();
    (void)mm.execute();
    s.synchronize();
  }
}

// RealTransform over two axes on the passes (one cuFFT plan per axis): a cuFFT failure at any call of plan() leaves
// an object whose next plan() makes only the plans still missing (none leaks, none is made twice) and whose result is
// the CPU's.
TEST(LibraryErrorContext, RealTransformPlansAgainAfterACufftFailureAtAnyCallOfPlan) {
  CUPLAN_REQUIRE_GPU();
  const Disarm disarm;
  Stream s;
  const Shape shape{24, 40};
  Tensor host = Tensor::empty(shape, f64);
  for (std::int64_t i = 0; i < host.numel(); ++i) host.data<double>()[i] = std::sin(0.37 * static_cast<double>(i));
  const RealTransformOptions options{.kinds = {R2RKind::dct2, R2RKind::dst3}};
  RealTransformOptions on_cpu = options;
  on_cpu.execution = Execution::cpu();
  RealTransform reference(host, on_cpu);
  reference.plan();
  const Tensor want = reference.execute();
  int failures = 0;
  for (int nth = 1; nth <= 16; ++nth) {
    Tensor x = host.to(Device::cuda(0), s);
    RealTransform rt(x, options);
    fault::arm(fault::Site::library, nth);
    bool failed = false;
    try {
      rt.plan(s);
    } catch (const LibraryError& e) {
      failed = true;
      expect_library_and_context(e, "cuFFT", {"RealTransform.plan", "on cuda:0"});
    }
    fault::disarm();
    if (!failed) break;  // past the last cuFFT call of plan()
    ++failures;
    rt.plan(s);
    const Tensor got = rt.execute({.stream = s}).to(Device::cpu());
    double worst = 0.0;
    for (std::int64_t i = 0; i < host.numel(); ++i)
      worst = std::max(worst, std::abs(got.data<double>()[i] - want.data<double>()[i]));
    EXPECT_LT(worst, 1e-10) << "after a failure at cuFFT call " << nth << " of plan()";
  }
  EXPECT_GE(failures, 8) << "two axes make at least four checked cuFFT calls each";
}

}  // namespace
}  // namespace cuplan
