// SPDX-License-Identifier: Apache-2.0
// The fused route of real-to-real transforms on CUDA (RealTransformOptions::route = fused; skipped without a GPU or
// without MathDx): every kind, DCT and DST, every norm and orthogonalize, f32 and f64, at every FFT length the build
// compiled, batched with a partly filled last block, rows not packed (a strided view), 2-D and 3-D with the last
// axis fused and the others through the passes, in place and out of place, both directions and the round trip;
// against FFTW's r2r in float64 (cuplan's CPU route) with outputs poisoned first, f32 within 2e-6 and f64 within
// 1e-13 of the largest result value. The fused and the cuFFT routes agree; phases on two streams, reset_operand
// across streams, graph replay and host operands keep working on the fused route; route automatic takes the fused
// kernel wherever it applies and the passes elsewhere.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cuplan/config.hpp"
#include "cuplan/cuplan.hpp"
#include "r2r_reference.hpp"
#include "support/test_support.hpp"
#if CUPLAN_HAS_FUSED_FFT
#include "r2r/cufft/fused_r2r_launch.hpp"
#else
#include "r2r/algorithms.hpp"
#endif

namespace {

using namespace cuplan;
using cuplan::detail::R2RFftType;
using cuplan::testing::expect_throw_naming;

#define CUPLAN_REQUIRE_FUSED_R2R()                                                                     \
  do {                                                                                                 \
    CUPLAN_REQUIRE_GPU();                                                                              \
    if (!CUPLAN_HAS_FUSED_FFT) GTEST_SKIP() << "this build has no MathDx (CUPLAN_HAS_FUSED_FFT is 0)"; \
    if (fused_lengths().empty()) GTEST_SKIP() << "no fused real-to-real kernel in this build";         \
  } while (0)

constexpr R2RKind kAllKinds[] = {R2RKind::dct1, R2RKind::dct2, R2RKind::dct3, R2RKind::dct4,
                                 R2RKind::dst1, R2RKind::dst2, R2RKind::dst3, R2RKind::dst4};
constexpr R2RNorm kAllNorms[] = {R2RNorm::backward, R2RNorm::ortho, R2RNorm::forward};

template <class T>
constexpr double tolerance() {
  return std::is_same_v<T, float> ? 2e-6 : 1e-13;
}
template <class T>
constexpr DType dtype_of() {
  return std::is_same_v<T, float> ? f32 : f64;
}

#if CUPLAN_HAS_FUSED_FFT
// The FFT lengths compiled, shortest first.
std::vector<std::int64_t> fused_lengths() {
  std::vector<std::int64_t> lengths;
  for (const auto* launcher : detail::fused_r2r::launchers())
    if (std::find(lengths.begin(), lengths.end(), launcher->length) == lengths.end())
      lengths.push_back(launcher->length);
  std::sort(lengths.begin(), lengths.end());
  return lengths;
}
#else
// A build without MathDx (the CPU-only build among them) holds no fused kernel.
std::vector<std::int64_t> fused_lengths() {
  return {};
}
#endif

// The axis length whose `kind` runs an FFT of length `fft_length` on the fused route, and that FFT's type.
std::int64_t axis_length(R2RKind kind, std::int64_t fft_length) {
  switch (static_cast<int>(kind) % 4) {
    case 0:
      return kind == R2RKind::dct1 ? fft_length / 2 + 1 : fft_length / 2 - 1;
    case 3:
      return 2 * fft_length;
    default:
      return fft_length;
  }
}
[[maybe_unused]] R2RFftType fft_type(R2RKind kind) {
  const int type = static_cast<int>(kind) % 4;
  return type == 2 ? R2RFftType::c2r : type == 3 ? R2RFftType::c2c : R2RFftType::r2c;
}

// Rows filling two blocks of the kernel and one row of a third (a partly filled last block where a block holds
// several rows).
template <class T>
std::int64_t batch_rows(R2RKind kind, std::int64_t fft_length) {
#if CUPLAN_HAS_FUSED_FFT
  const auto* launcher = detail::fused_r2r::find_launcher(fft_type(kind), std::is_same_v<T, double>, fft_length);
  if (launcher != nullptr) return 2 * static_cast<std::int64_t>(launcher->block.ffts_per_block) + 1;
#else
  (void)kind;
  (void)fft_length;
#endif
  return 3;
}

// `values` rounded to T (what the device holds), as doubles.
template <class T>
std::vector<double> rounded(std::vector<double> values) {
  for (double& v : values) v = static_cast<double>(static_cast<T>(v));
  return values;
}

template <class T>
Tensor to_device(const std::vector<double>& values, const Shape& shape, StreamRef stream = current_stream()) {
  Tensor host = Tensor::empty(shape, dtype_of<T>());
  std::copy(values.begin(), values.end(), host.data<T>());
  Tensor device = host.to(Device::cuda(0), stream);
  stream.synchronize();
  return device;
}

template <class T>
Tensor poisoned(const Shape& shape) {
  Tensor host = Tensor::empty(shape, dtype_of<T>());
  std::fill_n(host.data<T>(), host.numel(), std::numeric_limits<T>::quiet_NaN());
  return host.to(Device::cuda(0));
}

using r2r_test::to_host;

// FFTW's float64 result of the same transform (cuplan's CPU route).
std::vector<double> reference(const std::vector<double>& v, const Shape& shape, const RealTransformOptions& o,
                              Direction direction) {
  return r2r_test::cpu_reference(v, shape, o, direction);
}

std::string what(R2RKind kind, std::int64_t n, R2RNorm norm, bool orthogonalize, Direction direction) {
  return std::string(to_string(kind)) + " n " + std::to_string(n) + " norm " + std::string(to_string(norm)) +
         " orthogonalize " + (orthogonalize ? "true" : "false") + (direction == Direction::inverse ? " inverse" : "");
}

// Every kind, norm and orthogonalize at every compiled length, both directions, through the function forms.
template <class T>
void every_kind_at_every_length() {
  for (std::int64_t fft_length : fused_lengths()) {
    for (R2RKind kind : kAllKinds) {
      const std::int64_t n = axis_length(kind, fft_length);
      const std::int64_t rows = batch_rows<T>(kind, fft_length);
      const Shape shape{rows, n};
      const auto x = rounded<T>(r2r_test::random_vector(static_cast<std::size_t>(rows * n), static_cast<unsigned>(n)));
      const Tensor in = to_device<T>(x, shape);
      const bool sine = static_cast<int>(kind) >= 4;
      const int type = static_cast<int>(kind) % 4 + 1;
      for (R2RNorm norm : kAllNorms)
        for (const std::optional<bool> orthogonalize :
             {std::optional<bool>{}, std::optional<bool>{false}, std::optional<bool>{true}})
          for (Direction direction : {Direction::forward, Direction::inverse}) {
            const Tensor out = poisoned<T>(shape);
            const R2ROptions o{.type = type, .norm = norm, .orthogonalize = orthogonalize, .route = FFTRoute::fused};
            const bool inverse = direction == Direction::inverse;
            if (!sine)
              inverse ? idct(in, out.view(), o) : dct(in, out.view(), o);
            else
              inverse ? idst(in, out.view(), o) : dst(in, out.view(), o);
            const bool effective = orthogonalize.value_or(norm == R2RNorm::ortho);
            const auto ref = reference(
                x, shape, {.axes = {1}, .kinds = {kind}, .norm = norm, .orthogonalize = effective}, direction);
            EXPECT_LE(r2r_test::relative_error(to_host(out), ref), tolerance<T>())
                << what(kind, n, norm, effective, direction) << " rows " << rows;
          }
    }
  }
}

TEST(R2RFused, EveryKindNormAndLengthF32) {
  CUPLAN_REQUIRE_FUSED_R2R();
  every_kind_at_every_length<float>();
}
TEST(R2RFused, EveryKindNormAndLengthF64) {
  CUPLAN_REQUIRE_FUSED_R2R();
  every_kind_at_every_length<double>();
}

// describe() names the fused kernel on the axis; in place; forward then inverse returns the operand; the result
// agrees with route cufft's.
template <class T>
void in_place_round_trip_and_agreement() {
  const std::int64_t fft_length = fused_lengths().front();
  for (R2RKind kind : kAllKinds) {
    const std::int64_t n = axis_length(kind, fft_length);
    const std::int64_t rows = batch_rows<T>(kind, fft_length);
    const Shape shape{rows, n};
    const auto x = rounded<T>(r2r_test::random_vector(static_cast<std::size_t>(rows * n), 29));
    for (R2RNorm norm : kAllNorms) {
      const RealTransformOptions o{
          .axes = {1}, .kinds = {kind}, .norm = norm, .inplace = true, .route = FFTRoute::fused};
      const Tensor operand = to_device<T>(x, shape);
      RealTransform rt(operand, o);
      EXPECT_NE(rt.describe().find("fused cuFFTDx kernel"), std::string::npos) << rt.describe();
      rt.plan();
      EXPECT_EQ(rt.workspace_size(), 0u) << "a fused axis needs no cuFFT workspace or row buffers";
      const Tensor y = rt.execute();
      EXPECT_EQ(y.data(), operand.data());
      const auto forward = to_host(y);
      EXPECT_LE(r2r_test::relative_error(forward, reference(x, shape, o, Direction::forward)), tolerance<T>())
          << what(kind, n, norm, norm == R2RNorm::ortho, Direction::forward) << " in place";
      const Tensor back = rt.execute({.direction = Direction::inverse});
      EXPECT_LE(r2r_test::relative_error(to_host(back), x), 10 * tolerance<T>())
          << what(kind, n, norm, norm == R2RNorm::ortho, Direction::inverse) << " round trip";
      // route cufft on the same operand agrees with the fused result.
      const Tensor again = to_device<T>(x, shape);
      RealTransform cufft(again, {.axes = {1}, .kinds = {kind}, .norm = norm, .route = FFTRoute::cufft});
      cufft.plan();
      EXPECT_EQ(cufft.describe().find("fused"), std::string::npos) << cufft.describe();
      const Tensor passes = cufft.execute();
      EXPECT_LE(r2r_test::relative_error(to_host(passes), forward), 2 * tolerance<T>()) << to_string(kind);
    }
  }
}

TEST(R2RFused, InPlaceRoundTripAndAgreementWithCufftF32) {
  CUPLAN_REQUIRE_FUSED_R2R();
  in_place_round_trip_and_agreement<float>();
}
TEST(R2RFused, InPlaceRoundTripAndAgreementWithCufftF64) {
  CUPLAN_REQUIRE_FUSED_R2R();
  in_place_round_trip_and_agreement<double>();
}

// Several axes: the contiguous last axis fused, the others through the passes, mixed kinds, every norm.
template <class T>
void several_axes() {
  const std::int64_t L = fused_lengths().front();
  struct Case {
    Shape shape;
    std::vector<int> axes;
    std::vector<R2RKind> kinds;
    const char* fused;   // describe() names this axis fused
    const char* passes;  // and this one through the passes
  };
  const std::vector<Case> cases{
      {{6, L}, {0, 1}, {R2RKind::dst2, R2RKind::dct3}, "axis 1 dct3: fused", "axis 0 dst2: even/odd reorder"},
      {{5, L}, {1, 0}, {R2RKind::dct2, R2RKind::dst4}, "axis 1 dct2: fused", "axis 0 dst4: CRT permutation"},
      {{3, 4, 2 * L},
       {0, 1, 2},
       {R2RKind::dct1, R2RKind::dst3, R2RKind::dct4},
       "axis 2 dct4: fused",
       "axis 0 dct1: even extension"},
  };
  for (const Case& c : cases) {
    std::int64_t numel = 1;
    for (int a = 0; a < c.shape.size(); ++a) numel *= c.shape[a];
    const auto x = rounded<T>(r2r_test::random_vector(static_cast<std::size_t>(numel), 13));
    for (R2RNorm norm : kAllNorms)
      for (bool inplace : {false, true}) {
        const RealTransformOptions o{
            .axes = c.axes, .kinds = c.kinds, .norm = norm, .inplace = inplace, .route = FFTRoute::fused};
        const Tensor in = to_device<T>(x, c.shape);
        RealTransform rt(in, o);
        const std::string text = rt.describe();
        EXPECT_NE(text.find(c.fused), std::string::npos) << text;
        EXPECT_NE(text.find(c.passes), std::string::npos) << text;
        rt.plan();
        for (Direction direction : {Direction::forward, Direction::inverse}) {
          if (inplace) rt.reset_operand(to_device<T>(x, c.shape));
          const Tensor out = inplace ? Tensor{} : poisoned<T>(c.shape);
          const Tensor y =
              inplace ? rt.execute({.direction = direction}) : rt.execute({.direction = direction, .out = out.view()});
          EXPECT_LE(r2r_test::relative_error(to_host(y), reference(x, c.shape, o, direction)), tolerance<T>())
              << text << (direction == Direction::inverse ? " inverse" : "") << (inplace ? " in place" : "");
        }
      }
  }
}

TEST(R2RFused, SeveralAxesLastFusedOthersThroughPassesF32) {
  CUPLAN_REQUIRE_FUSED_R2R();
  several_axes<float>();
}
TEST(R2RFused, SeveralAxesLastFusedOthersThroughPassesF64) {
  CUPLAN_REQUIRE_FUSED_R2R();
  several_axes<double>();
}

// Rows that are not packed: a view of the first n values of rows n + 17 apart, so the source's and the result's row
// offsets differ (out of place, into a dense result) and the result keeps the view's strides (in place, where the
// padding between rows must stay as it was).
template <class T>
void rows_apart() {
  const std::int64_t fft_length = fused_lengths().front();
  for (R2RKind kind : {R2RKind::dct2, R2RKind::dct3, R2RKind::dst1, R2RKind::dct4}) {
    const std::int64_t n = axis_length(kind, fft_length);
    const std::int64_t rows = batch_rows<T>(kind, fft_length), pitch = n + 17;
    const auto padded_values =
        rounded<T>(r2r_test::random_vector(static_cast<std::size_t>(rows * pitch), static_cast<unsigned>(n + 5)));
    std::vector<double> x(static_cast<std::size_t>(rows * n));
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < n; ++j)
        x[static_cast<std::size_t>(r * n + j)] = padded_values[static_cast<std::size_t>(r * pitch + j)];
    const RealTransformOptions o{.axes = {1}, .kinds = {kind}, .norm = R2RNorm::ortho, .route = FFTRoute::fused};
    const auto want = reference(x, {rows, n}, o, Direction::forward);
    const Tensor padded = to_device<T>(padded_values, {rows, pitch});
    const TensorView view(padded.data(), dtype_of<T>(), {rows, n}, Strides{pitch, 1}, Device::cuda(0));
    RealTransform rt(view, o);
    rt.plan();
    const Tensor dense = poisoned<T>({rows, n});  // dense, as the out-of-place result: a missed value stays NaN
    ASSERT_EQ(rt.result_strides(), dense.view().strides());
    (void)rt.execute({.out = dense});
    EXPECT_LE(r2r_test::relative_error(to_host(dense), want), tolerance<T>()) << to_string(kind) << " out of place";
    RealTransformOptions in_place = o;
    in_place.inplace = true;
    RealTransform over(view, in_place);
    over.plan();
    (void)over.execute();
    current_stream().synchronize();  // a view of the Tensor's memory: the caller orders the read below
    const auto after = to_host(padded);
    std::vector<double> got(x.size());
    double padding_changed = 0.0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < pitch; ++j) {
        const auto at = static_cast<std::size_t>(r * pitch + j);
        if (j < n)
          got[static_cast<std::size_t>(r * n + j)] = after[at];
        else
          padding_changed = std::max(padding_changed, std::abs(after[at] - padded_values[at]));
      }
    EXPECT_LE(r2r_test::relative_error(got, want), tolerance<T>()) << to_string(kind) << " in place";
    EXPECT_EQ(padding_changed, 0.0) << to_string(kind) << ": the values between the rows were written";
  }
}

TEST(R2RFused, RowsApartOutOfPlaceAndInPlaceF32) {
  CUPLAN_REQUIRE_FUSED_R2R();
  rows_apart<float>();
}
TEST(R2RFused, RowsApartOutOfPlaceAndInPlaceF64) {
  CUPLAN_REQUIRE_FUSED_R2R();
  rows_apart<double>();
}

TEST(R2RFused, RefusedWhereNoAxisQualifies) {
  CUPLAN_REQUIRE_FUSED_R2R();
  const std::int64_t L = fused_lengths().front();
  const Tensor square = to_device<float>(std::vector<double>(static_cast<std::size_t>(L * L), 1.0), {L, L});
  expect_throw_naming<NotSupported>(
      [&] { RealTransform rt(square, {.axes = {0}, .route = FFTRoute::fused}); },
      {"RealTransform: route fused", "axis 0: stride " + std::to_string(L) + " in the operand", "contiguous axis"});
  const Tensor odd = to_device<float>(std::vector<double>(2 * 1000, 1.0), {2, 1000});
  expect_throw_naming<NotSupported>([&] { (void)dct(odd, {.route = FFTRoute::fused}); },
                                    {"dct: route fused", "axis 1: dct2 of length 1000 runs R2C 1000"});
  // The same shapes run on the other routes; automatic (the default) keeps the passes there and says why.
  EXPECT_NO_THROW((void)dct(odd, {.route = FFTRoute::cufft}));
  EXPECT_NO_THROW((void)dct(odd, {.route = FFTRoute::automatic}));
  RealTransform odd_automatic(odd);
  EXPECT_NE(odd_automatic.describe().find(
                "axis 1 dct2: even/odd reorder + R2C(n) + twiddle (passes around cuFFT, not fused: dct2 of length 1000 "
                "runs R2C 1000"),
            std::string::npos)
      << odd_automatic.describe();
  RealTransform square_automatic(square, {.axes = {0}});
  EXPECT_NE(square_automatic.describe().find("not fused: stride " + std::to_string(L) + " in the operand"),
            std::string::npos)
      << square_automatic.describe();
  EXPECT_EQ(square_automatic.describe().find("fused cuFFTDx kernel"), std::string::npos);
  square_automatic.plan();
  EXPECT_GT(square_automatic.workspace_size(), 0u);
}

// Route automatic (the default, class and function forms) takes the fused kernel wherever the rule allows: the same
// kernel as route fused (the same bits), no work area where every axis fuses, and the passes on the other axes, whose
// describe() says why not fused; host operands too.
TEST(R2RFused, AutomaticTakesTheFusedKernelWhereItApplies) {
  CUPLAN_REQUIRE_FUSED_R2R();
  const std::int64_t L = fused_lengths().front();
  const Shape shape{9, L};
  const auto x = rounded<float>(r2r_test::random_vector(static_cast<std::size_t>(9 * L), 41));
  const Tensor in = to_device<float>(x, shape);
  for (R2RKind kind : {R2RKind::dct2, R2RKind::dct3, R2RKind::dst2, R2RKind::dst3}) {  // an FFT of length L each
    RealTransform automatic(in, {.axes = {1}, .kinds = {kind}});
    const std::string text = automatic.describe();
    EXPECT_NE(text.find("axis 1 " + std::string(to_string(kind)) + ": fused cuFFTDx kernel"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("passes around cuFFT"), std::string::npos) << text;
    automatic.plan();
    EXPECT_EQ(automatic.workspace_size(), 0u) << text;
    RealTransform fused(in, {.axes = {1}, .kinds = {kind}, .route = FFTRoute::fused});
    fused.plan();
    for (Direction direction : {Direction::forward, Direction::inverse}) {
      const auto got = to_host(automatic.execute({.direction = direction}));
      EXPECT_EQ(got, to_host(fused.execute({.direction = direction}))) << to_string(kind);
      EXPECT_LE(r2r_test::relative_error(got, reference(x, shape, {.axes = {1}, .kinds = {kind}}, direction)), 2e-6)
          << to_string(kind) << (direction == Direction::inverse ? " inverse" : "");
    }
  }
  // The function forms: dct's default route is route fused's result.
  EXPECT_EQ(to_host(dct(in, {.norm = R2RNorm::ortho})),
            to_host(dct(in, {.norm = R2RNorm::ortho, .route = FFTRoute::fused})));
  EXPECT_EQ(to_host(idstn(in, {.type = 3, .axes = {1}})),
            to_host(idstn(in, {.type = 3, .axes = {1}, .route = FFTRoute::fused})));
  // Two axes: the last fused, axis 0 (stride L in the operand) through the passes, saying why.
  RealTransform both(in, {.axes = {0, 1}, .kinds = {R2RKind::dst2, R2RKind::dct2}});
  const std::string text = both.describe();
  for (const std::string& part :
       {std::string("axis 1 dct2: fused cuFFTDx kernel (R2C ") + std::to_string(L),
        std::string("axis 0 dst2: even/odd reorder + R2C(n) + twiddle (passes around cuFFT, not fused: stride ") +
            std::to_string(L) + " in the operand"})
    EXPECT_NE(text.find(part), std::string::npos) << part << " in " << text;
  both.plan();
  EXPECT_GT(both.workspace_size(), 0u) << "axis 0's row buffers";
  EXPECT_LE(r2r_test::relative_error(
                to_host(both.execute()),
                reference(x, shape, {.axes = {0, 1}, .kinds = {R2RKind::dst2, R2RKind::dct2}}, Direction::forward)),
            2e-6);
  // A host operand: its device stage is laid out as the result, so the last axis fuses there too.
  Tensor host = Tensor::empty(shape, f32);
  std::copy(x.begin(), x.end(), host.data<float>());
  RealTransform staged(host, {.axes = {1}, .kinds = {R2RKind::dct3}, .execution = Execution::cuda()});
  EXPECT_NE(staged.describe().find("fused cuFFTDx kernel (C2R"), std::string::npos) << staged.describe();
  staged.plan();
  EXPECT_LE(r2r_test::relative_error(to_host(staged.execute()),
                                     reference(x, shape, {.axes = {1}, .kinds = {R2RKind::dct3}}, Direction::forward)),
            2e-6);
}

// Phases on two streams, reset_operand across streams, graph replay and host operands on the fused route.
TEST(R2RFused, StreamsResetReplayAndHostOperands) {
  CUPLAN_REQUIRE_FUSED_R2R();
  const std::int64_t L = fused_lengths().front();
  Stream s1, s2;
  const Shape shape{9, L};
  const auto a = rounded<float>(r2r_test::random_vector(static_cast<std::size_t>(9 * L), 1));
  const auto b = rounded<float>(r2r_test::random_vector(static_cast<std::size_t>(9 * L), 2));
  const Tensor xa = to_device<float>(a, shape, s1);
  const Tensor xb = to_device<float>(b, shape, s2);
  // Both axes: axis 0 (stride L) through the passes, axis 1 fused.
  const RealTransformOptions o{
      .axes = {0, 1}, .kinds = {R2RKind::dst2}, .norm = R2RNorm::ortho, .route = FFTRoute::fused};
  RealTransform rt(xa, o);
  rt.plan(s1);
  const Tensor ya = rt.execute({.stream = s1});
  rt.reset_operand(xb, s2);  // s2 runs after the object's work on s1
  // Three executes with the same pointers (the output poisoned again each time): the later ones replay a graph.
  const Tensor out = poisoned<float>(shape);
  Tensor nan_host = Tensor::empty(shape, f32);
  std::fill_n(nan_host.data<float>(), nan_host.numel(), std::numeric_limits<float>::quiet_NaN());
  for (int i = 0; i < 3; ++i) {
    copy(nan_host, out, s2);
    (void)rt.execute({.stream = s2, .out = out.view()});
    s2.synchronize();
    EXPECT_LE(r2r_test::relative_error(to_host(out), reference(b, shape, o, Direction::forward)), 2e-6) << i;
  }
  s1.synchronize();
  EXPECT_LE(r2r_test::relative_error(to_host(ya), reference(a, shape, o, Direction::forward)), 2e-6);
  rt.reset_operand(ya, s1);
  const Tensor back = rt.execute({.direction = Direction::inverse, .stream = s1});
  EXPECT_LE(r2r_test::relative_error(to_host(back), a), 2e-5);

  // A host operand: staged on the device, transformed there by the fused kernel, copied back; the call blocks.
  Tensor host = Tensor::empty(shape, f32);
  std::copy(a.begin(), a.end(), host.data<float>());
  RealTransform staged(
      host, {.axes = {1}, .kinds = {R2RKind::dct3}, .execution = Execution::cuda(), .route = FFTRoute::fused});
  EXPECT_NE(staged.describe().find("fused cuFFTDx kernel (C2R"), std::string::npos) << staged.describe();
  staged.plan();
  const Tensor hy = staged.execute();
  EXPECT_TRUE(hy.device().is_cpu());
  EXPECT_LE(r2r_test::relative_error(to_host(hy),
                                     reference(a, shape, {.axes = {1}, .kinds = {R2RKind::dct3}}, Direction::forward)),
            2e-6);
}

}  // namespace
