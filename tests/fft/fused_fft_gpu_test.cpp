// SPDX-License-Identifier: Apache-2.0
// The fused FFT route (FFTRoute::fused) on a GPU, through the public API: C2C, R2C
// and C2R in f32 and f64 with prologs and epilogs against a float64 reference with the results poisoned first,
// normalization with and without an epilog, lengths that fall back to cuFFT, the refusals of a forced fused route,
// two streams, reset_operand across streams and the compilation cache. Every case needs a GPU and a
// build with MathDx, and skips otherwise.

#include <gtest/gtest.h>

#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "fft/callback_sources.hpp"
#include "fft/fft_test_util.hpp"

namespace cuplan::testing {
namespace {

using cf = std::complex<float>;
using cz = std::complex<double>;

#define CUPLAN_REQUIRE_FUSED()                                                                         \
  do {                                                                                                 \
    CUPLAN_REQUIRE_GPU();                                                                              \
    if (!CUPLAN_HAS_FUSED_FFT) GTEST_SKIP() << "this build has no MathDx (CUPLAN_HAS_FUSED_FFT is 0)"; \
  } while (0)

// A result-shaped device tensor filled with NaN, so a value the transform never wrote fails the comparison.
Tensor poisoned(const FFT& f) {
  Tensor out = Tensor::empty(f.result_shape(), f.result_dtype(), Device::cuda(0));
  const std::size_t bytes = static_cast<std::size_t>(out.view().numel()) * f.result_dtype().size();
  std::vector<std::int8_t> nan(bytes, -1);  // all-ones bytes: a NaN in every floating-point type
  const Shape flat{static_cast<std::int64_t>(bytes)};
  copy(TensorView(nan.data(), i8, flat, std::nullopt, Device::cpu()),
       TensorView(out.data(), i8, flat, std::nullopt, Device::cuda(0)));
  return out;
}

// Runs `f` into a poisoned result and returns the result's values.
std::vector<cd> execute_poisoned(FFT& f, FFTExecuteOptions options = {}) {
  Tensor out = poisoned(f);
  options.out = out.view();
  f.execute(options);
  return to_dense(out.view());
}

// Prolog of a C2R in double: every input value times 3.
const char* kTripleProlog = R"(
__device__ double2 triple(void* in, unsigned long long offset, void*, void*) {
  const double2 v = static_cast<const double2*>(in)[offset];
  return make_double2(3.0 * v.x, 3.0 * v.y);
}
)";

// Epilog of a C2C in double: stores the value plus 1 (the normalization's factor comes after it).
const char* kPlusOneEpilog = R"(
__device__ void plus_one(void* out, unsigned long long offset, double2 v, void*, void*) {
  static_cast<double2*>(out)[offset] = make_double2(v.x + 1.0, v.y);
}
)";

TEST(FusedFftGpu, C2cF32PrologOnTheFusedRouteMatchesTheReferenceAcrossExecutesAndStreams) {
  CUPLAN_REQUIRE_FUSED();
  const std::vector<std::int64_t> shape{48, 4096};
  auto a = HostArray<cf>::random(shape);
  auto b = HostArray<cf>::random(shape);
  Stream s1(Device::cuda(0)), s2(Device::cuda(0));
  Operand xa = to_space(a, Space::cuda, s1.ref()), xb = to_space(b, Space::cuda, s1.ref());
  Tensor two = device_values(std::vector<float>{2.0f});
  FFT f(xa.view, {.axes = {1},
                  .stream = s1.ref(),
                  .prolog = FFTCallback::cuda_source(kScaleSource, "scale_by", two.data()),
                  .route = FFTRoute::fused});
  EXPECT_NE(f.describe().find("route fused"), std::string::npos) << f.describe();
  f.plan();
  const auto ref_a = scaled(reference_dft(a.dense(), shape, {1}, -1), 2.0);
  const double tol = tolerance(c64, 4096);
  for (int i = 0; i < 3; ++i)  // the third on another stream
    EXPECT_LT(relative_error(execute_poisoned(f, {.stream = i == 2 ? s2.ref() : s1.ref()}), ref_a), tol)
        << "execute " << i;
  f.reset_operand(xb.view, s2.ref());  // ordered after the execute on s2
  EXPECT_LT(relative_error(execute_poisoned(f, {.direction = Direction::inverse, .stream = s1.ref()}),
                           scaled(reference_dft(b.dense(), shape, {1}, +1), 2.0)),
            tol);
}

TEST(FusedFftGpu, C2rF64PrologWithInverseNormalizationScalesInTheKernel) {
  CUPLAN_REQUIRE_FUSED();
  const std::int64_t n = 1000;  // 2^3 * 5^3
  const std::vector<std::int64_t> real_shape{20, n}, shape{20, n / 2 + 1};
  auto r = HostArray<double>::random(real_shape);
  Operand xr = to_space(r, Space::cuda);
  const Tensor spectrum = rfft(xr.view, {.axes = {1}});  // a Hermitian spectrum (cuFFT, no callback)
  FFT f(spectrum.view(), {.axes = {1},
                          .normalization = Normalization::inverse,
                          .fft_type = FFTType::c2r,
                          .prolog = FFTCallback::cuda_source(kTripleProlog, "triple"),
                          .route = FFTRoute::fused});
  f.plan();
  EXPECT_LT(relative_error(execute_poisoned(f), scaled(r.dense(), 3.0)), tolerance(f64, n));
}

TEST(FusedFftGpu, C2cF64EpilogSeesTheUnscaledValueBeforeTheNormalization) {
  CUPLAN_REQUIRE_FUSED();
  const std::vector<std::int64_t> shape{4, 16384};
  auto a = HostArray<cz>::random(shape);
  Operand x = to_space(a, Space::cuda);
  FFT f(x.view, {.axes = {1},
                 .normalization = Normalization::forward,
                 .epilog = FFTCallback::cuda_source(kPlusOneEpilog, "plus_one"),
                 .route = FFTRoute::fused});
  f.plan();
  auto expected = reference_dft(a.dense(), shape, {1}, -1);
  for (auto& v : expected) v = (v + 1.0) / 16384.0;
  EXPECT_LT(relative_error(execute_poisoned(f), expected), tolerance(f64, 16384));
}

TEST(FusedFftGpu, LengthsTheKernelCannotTakeFallBackToCufftAutomaticallyAndAreRefusedWhenForced) {
  CUPLAN_REQUIRE_FUSED();
  for (std::int64_t n : {std::int64_t{1021}, std::int64_t{65536}}) {  // a prime; longer than 32768
    const std::vector<std::int64_t> shape{4, n};
    auto a = HostArray<cf>::random(shape);
    Operand x = to_space(a, Space::cuda);
    Tensor two = device_values(std::vector<float>{2.0f});
    const FFTCallback prolog = FFTCallback::cuda_source(kScaleSource, "scale_by", two.data());
    FFT f(x.view, {.axes = {1}, .prolog = prolog});
    EXPECT_NE(f.describe().find("route cufft"), std::string::npos) << f.describe();
    EXPECT_LT(relative_error(to_dense(f.execute().view()), scaled(reference_dft(a.dense(), shape, {1}, -1), 2.0)),
              tolerance(c64, n));
    try {
      FFT forced(x.view, {.axes = {1}, .prolog = prolog, .route = FFTRoute::fused});
      ADD_FAILURE() << "length " << n << ": expected NotSupported";
    } catch (const NotSupported& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(n)), std::string::npos) << e.what();
    }
  }
}

TEST(FusedFftGpu, AForcedFusedRouteNamesWhyItCannotApply) {
  CUPLAN_REQUIRE_FUSED();
  const std::vector<std::int64_t> shape{64, 64};
  auto a = HostArray<cf>::random(shape);
  Operand x = to_space(a, Space::cuda);
  try {
    FFT f(x.view, {.axes = {0, 1}, .route = FFTRoute::fused});
    ADD_FAILURE() << "expected NotSupported";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("2 axes"), std::string::npos) << e.what();
  }
  try {
    FFT f(x.view, {.axes = {0}, .route = FFTRoute::fused});  // the transformed axis has stride 64
    ADD_FAILURE() << "expected NotSupported";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("stride"), std::string::npos) << e.what();
  }
}

TEST(FusedFftGpu, ASecondPlanOfTheSameSourceCompilesNothing) {
  CUPLAN_REQUIRE_FUSED();
  const std::vector<std::int64_t> shape{8, 512};
  auto a = HostArray<cf>::random(shape);
  Operand x = to_space(a, Space::cuda);
  Tensor two = device_values(std::vector<float>{2.0f});
  const FFTCallback prolog = FFTCallback::cuda_source(kScaleSource, "scale_by", two.data());
  FFT first(x.view, {.axes = {1}, .prolog = prolog, .route = FFTRoute::fused});
  first.plan();
  const std::uint64_t compilations = fft_callback_stats().compilations;
  FFT second(x.view, {.axes = {1}, .prolog = prolog, .route = FFTRoute::fused});
  second.plan();
  EXPECT_EQ(fft_callback_stats().compilations, compilations);
  EXPECT_LT(relative_error(to_dense(second.execute().view()), scaled(reference_dft(a.dense(), shape, {1}, -1), 2.0)),
            tolerance(c64, 512));
}

}  // namespace
}  // namespace cuplan::testing
