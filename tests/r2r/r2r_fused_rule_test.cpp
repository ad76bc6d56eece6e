// SPDX-License-Identifier: Apache-2.0
// The fused route of real-to-real transforms, without a GPU: which axes the rule fuses and why it refuses the
// others, on route automatic (fused where it applies, else the passes, never an error) and route fused, the
// NotSupported messages of RealTransformOptions::route = fused, the route's enum validation on every
// path, the plan-cache key telling routes apart, and the kernels a MathDx build holds.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "cuplan/config.hpp"
#include "cuplan/cuplan.hpp"
#include "r2r/fused_rule.hpp"
#include "support/test_support.hpp"
#if CUPLAN_HAS_FUSED_FFT
#include "r2r/cufft/fused_r2r_launch.hpp"
#endif

namespace {

using namespace cuplan;
using cuplan::detail::FusedR2RAvailability;
using cuplan::detail::R2RDecision;
using cuplan::testing::expect_throw_naming;

const FusedR2RAvailability kBuilt{true, {1024, 4096}};

R2RDecision decide(const Shape& shape, std::vector<int> axes, std::vector<R2RKind> kinds, bool inplace = false,
                   DType dtype = f32) {
  return detail::plan_r2r({.dtype = dtype,
                           .shape = shape,
                           .strides = row_major_strides(shape),
                           .axes = axes,
                           .kinds = kinds,
                           .norm = R2RNorm::backward,
                           .orthogonalize = std::nullopt,
                           .inplace = inplace},
                          "test");
}

std::string refusal(const R2RDecision& d, std::size_t i, Direction direction = Direction::forward,
                    const FusedR2RAvailability& available = kBuilt) {
  return detail::fused_axis_refusal(d, i, direction, d.in_strides, available);
}

TEST(R2RFusedRule, ContiguousAxesOfACompiledLengthFuse) {
  // Types 2 and 3 run an FFT of length n, type 4 one of n/2, DCT-I 2(n-1), DST-I 2(n+1): each at a compiled length.
  for (const auto& [kind, n] : std::vector<std::pair<R2RKind, std::int64_t>>{{R2RKind::dct2, 4096},
                                                                             {R2RKind::dst2, 1024},
                                                                             {R2RKind::dct3, 4096},
                                                                             {R2RKind::dst3, 4096},
                                                                             {R2RKind::dct4, 8192},
                                                                             {R2RKind::dst4, 2048},
                                                                             {R2RKind::dct1, 2049},
                                                                             {R2RKind::dst1, 2047}}) {
    const R2RDecision d = decide({3, n}, {1}, {kind});
    for (Direction direction : {Direction::forward, Direction::inverse})
      EXPECT_EQ(refusal(d, 0, direction), "") << to_string(kind) << " " << n;
  }
  // f64 too, and in place.
  EXPECT_EQ(refusal(decide({5, 4096}, {1}, {R2RKind::dct2}, true, f64), 0), "");
}

TEST(R2RFusedRule, RefusalsNameTheReason) {
  const std::string strided = refusal(decide({4096, 4096}, {0}, {R2RKind::dct2}), 0);
  EXPECT_NE(strided.find("stride 4096 in the operand"), std::string::npos) << strided;
  EXPECT_NE(strided.find("contiguous axis"), std::string::npos) << strided;
  const std::string length = refusal(decide({2, 1000}, {1}, {R2RKind::dct2}), 0);
  for (const char* part : {"dct2 of length 1000", "R2C 1000", "[1024, 4096]", "CUPLAN_FUSED_FFT_LENGTHS"})
    EXPECT_NE(length.find(part), std::string::npos) << length;
  const std::string type4 = refusal(decide({2, 4096}, {1}, {R2RKind::dct4}), 0);  // C2C 2048 is not compiled
  EXPECT_NE(type4.find("C2C 2048"), std::string::npos) << type4;
  const std::string odd = refusal(decide({2, 1025}, {1}, {R2RKind::dst4}), 0);
  EXPECT_NE(odd.find("odd length 1025"), std::string::npos) << odd;
  const std::string inverse = refusal(decide({2, 1000}, {1}, {R2RKind::dct2}), 0, Direction::inverse);
  EXPECT_NE(inverse.find("dct3 of length 1000 runs C2R 1000"), std::string::npos) << inverse;
  const std::string none = refusal(decide({2, 4096}, {1}, {R2RKind::dct2}), 0, Direction::forward, {});
  EXPECT_NE(none.find("no MathDx"), std::string::npos) << none;
  // A strided view of the operand: the first axis reads it, so it cannot fuse; the result is row-major.
  const R2RDecision d = decide({2, 4096}, {1}, {R2RKind::dct2});
  const Strides view{8192, 2};
  const std::string strided_view = detail::fused_axis_refusal(d, 0, Direction::forward, view, kBuilt);
  EXPECT_NE(strided_view.find("stride 2 in the operand"), std::string::npos) << strided_view;
}

// The axes fused_axes() fuses on `route` (forward unless told).
std::vector<bool> fused_on(const R2RDecision& d, FFTRoute route, const FusedR2RAvailability& available = kBuilt,
                           Direction direction = Direction::forward) {
  return detail::fused_axes(d, direction, route, d.in_strides, available, "test").fused;
}

TEST(R2RFusedRule, TwoAxesFuseTheContiguousOneAndKeepPassesForTheOther) {
  const R2RDecision d = decide({4096, 4096}, {0, 1}, {R2RKind::dct2, R2RKind::dst3});
  for (FFTRoute route : {FFTRoute::fused, FFTRoute::automatic})
    for (Direction direction : {Direction::forward, Direction::inverse})
      EXPECT_EQ(fused_on(d, route, kBuilt, direction), (std::vector<bool>{false, true}));
  // Axis 1 first: it reads the operand (contiguous), then axis 0 reads the result (stride 4096).
  const R2RDecision reversed = decide({4096, 4096}, {1, 0}, {R2RKind::dct2});
  for (FFTRoute route : {FFTRoute::fused, FFTRoute::automatic})
    EXPECT_EQ(fused_on(reversed, route), (std::vector<bool>{true, false}));
  EXPECT_NE(refusal(reversed, 1).find("stride 4096 in the result"), std::string::npos) << refusal(reversed, 1);
  // cufft keeps the passes everywhere, and says nothing about the fused kernel.
  const detail::FusedAxes cufft = detail::fused_axes(d, Direction::forward, FFTRoute::cufft, d.in_strides, kBuilt, "t");
  EXPECT_EQ(cufft.fused, (std::vector<bool>{false, false}));
  EXPECT_EQ(cufft.not_fused, (std::vector<std::string>{"", ""}));
}

// automatic: the fused kernel on every axis the rule allows, the passes on the others with the reason kept for
// describe(), and never a refusal, even where no axis qualifies.
TEST(R2RFusedRule, AutomaticFusesWhereTheRuleAllowsAndKeepsThePassesElsewhere) {
  const auto automatic = [](const R2RDecision& d, const FusedR2RAvailability& available = kBuilt,
                            Direction direction = Direction::forward) {
    return detail::fused_axes(d, direction, FFTRoute::automatic, d.in_strides, available, "test");
  };
  // One contiguous axis of a compiled FFT length, every kind, both directions, f32 and f64, in place or not.
  for (const auto& [kind, n] : std::vector<std::pair<R2RKind, std::int64_t>>{{R2RKind::dct2, 4096},
                                                                             {R2RKind::dst2, 1024},
                                                                             {R2RKind::dct3, 4096},
                                                                             {R2RKind::dst3, 1024},
                                                                             {R2RKind::dct4, 8192},
                                                                             {R2RKind::dst4, 2048},
                                                                             {R2RKind::dct1, 2049},
                                                                             {R2RKind::dst1, 511}})
    for (DType dtype : {f32, f64})
      for (bool inplace : {false, true})
        for (Direction direction : {Direction::forward, Direction::inverse}) {
          const detail::FusedAxes got = automatic(decide({7, n}, {1}, {kind}, inplace, dtype), kBuilt, direction);
          EXPECT_EQ(got.fused, (std::vector<bool>{true})) << to_string(kind) << " " << n << " " << dtype.name();
          EXPECT_EQ(got.not_fused, (std::vector<std::string>{""}));
        }
  // A length whose FFT was not compiled keeps the passes, with the reason; `fused` refuses the same transform.
  const R2RDecision uncompiled = decide({2, 1000}, {1}, {R2RKind::dct2});
  const detail::FusedAxes passes = automatic(uncompiled);
  EXPECT_EQ(passes.fused, (std::vector<bool>{false}));
  EXPECT_NE(passes.not_fused[0].find("dct2 of length 1000 runs R2C 1000"), std::string::npos) << passes.not_fused[0];
  EXPECT_THROW((void)fused_on(uncompiled, FFTRoute::fused), NotSupported);
  // Type 4: of 4096 it runs C2C 2048 (not compiled here), of odd length the permuted R2C.
  EXPECT_EQ(automatic(decide({2, 4096}, {1}, {R2RKind::dct4})).fused, (std::vector<bool>{false}));
  EXPECT_NE(automatic(decide({2, 1025}, {1}, {R2RKind::dst4})).not_fused[0].find("odd length 1025"), std::string::npos);
  // DCT-I of 4096 runs R2C 8190: passes; DCT-I of 2049 runs R2C 4096: fused.
  EXPECT_EQ(automatic(decide({2, 4096}, {1}, {R2RKind::dct1})).fused, (std::vector<bool>{false}));
  EXPECT_EQ(automatic(decide({2, 2049}, {1}, {R2RKind::dct1})).fused, (std::vector<bool>{true}));
  // The direction counts: dct2 of 4096 and its inverse (dct3) both fuse, at 1000 neither.
  EXPECT_EQ(automatic(decide({2, 1000}, {1}, {R2RKind::dct2}), kBuilt, Direction::inverse).fused,
            (std::vector<bool>{false}));
  // Only some lengths compiled: the axis whose FFT length is among them fuses.
  const FusedR2RAvailability only_1024{true, {1024}};
  EXPECT_EQ(automatic(decide({3, 1024}, {1}, {R2RKind::dct2}), only_1024).fused, (std::vector<bool>{true}));
  EXPECT_EQ(automatic(decide({3, 4096}, {1}, {R2RKind::dct2}), only_1024).fused, (std::vector<bool>{false}));
  // Three axes, only the innermost (contiguous, compiled length) fuses; the outer two keep the passes and say why.
  const R2RDecision three = decide({4, 6, 4096}, {0, 1, 2}, {R2RKind::dct2, R2RKind::dst2, R2RKind::dct3});
  for (Direction direction : {Direction::forward, Direction::inverse}) {
    const detail::FusedAxes got = automatic(three, kBuilt, direction);
    EXPECT_EQ(got.fused, (std::vector<bool>{false, false, true}));
    EXPECT_NE(got.not_fused[0].find("stride 24576 in the operand"), std::string::npos) << got.not_fused[0];
    EXPECT_NE(got.not_fused[1].find("stride 4096 in the result"), std::string::npos) << got.not_fused[1];
    EXPECT_EQ(got.not_fused[2], "");
  }
  // No axis qualifies: automatic keeps the passes on all of them, without an error.
  const R2RDecision none = decide({4096, 1000}, {0, 1}, {R2RKind::dct2});
  EXPECT_EQ(automatic(none).fused, (std::vector<bool>{false, false}));
  // A strided view of the operand: the first axis cannot fuse, the result (row-major) of a later one can.
  const R2RDecision view_axes = decide({8, 4096}, {1}, {R2RKind::dct2});
  EXPECT_EQ(
      detail::fused_axes(view_axes, Direction::forward, FFTRoute::automatic, Strides{8192, 2}, kBuilt, "test").fused,
      (std::vector<bool>{false}));
  // A build without the fused kernels (no MathDx): the passes everywhere, saying so, without an error.
  const detail::FusedAxes no_mathdx = automatic(decide({3, 4096}, {1}, {R2RKind::dct2}), {});
  EXPECT_EQ(no_mathdx.fused, (std::vector<bool>{false}));
  EXPECT_NE(no_mathdx.not_fused[0].find("no MathDx"), std::string::npos) << no_mathdx.not_fused[0];
  // `fused` leaves the same reasons on the axes it does not fuse.
  const detail::FusedAxes forced =
      detail::fused_axes(three, Direction::forward, FFTRoute::fused, three.in_strides, kBuilt, "test");
  EXPECT_EQ(forced.fused, (std::vector<bool>{false, false, true}));
  EXPECT_EQ(forced.not_fused, automatic(three).not_fused);
}

// This build's kernels, as the CUDA route hands them to the rule: automatic fuses the last axis of every compiled
// length in a MathDx build, and nothing in a build without it (the CPU-only build among them).
TEST(R2RFusedRule, AutomaticOnThisBuildsKernels) {
  FusedR2RAvailability built;
#if CUPLAN_HAS_FUSED_FFT
  built.mathdx = true;
  for (const auto* launcher : detail::fused_r2r::launchers())
    if (std::find(built.lengths.begin(), built.lengths.end(), launcher->length) == built.lengths.end())
      built.lengths.push_back(launcher->length);
  ASSERT_FALSE(built.lengths.empty());
#endif
  for (std::int64_t n : std::vector<std::int64_t>{256, 512, 1024, 2048, 4096, 8192, 16384}) {
    const bool compiled = std::find(built.lengths.begin(), built.lengths.end(), n) != built.lengths.end();
    for (R2RKind kind : {R2RKind::dct2, R2RKind::dst3})
      for (DType dtype : {f32, f64})
        EXPECT_EQ(fused_on(decide({5, n}, {1}, {kind}, false, dtype), FFTRoute::automatic, built),
                  (std::vector<bool>{compiled}))
            << to_string(kind) << " " << n << " " << dtype.name();
  }
  EXPECT_EQ(fused_on(decide({5, 1000}, {1}, {R2RKind::dct2}), FFTRoute::automatic, built), (std::vector<bool>{false}));
}

TEST(R2RFusedRule, FusedWithNoQualifyingAxisIsNotSupportedNamingEachAxis) {
  const R2RDecision d = decide({4096, 1000}, {0, 1}, {R2RKind::dct2});
  expect_throw_naming<NotSupported>(
      [&] { (void)detail::fused_axes(d, Direction::forward, FFTRoute::fused, d.in_strides, kBuilt, "dctn"); },
      {"dctn: route fused", "axis 0: stride 1000 in the operand; the fused kernel needs a contiguous axis",
       "axis 1: dct2 of length 1000 runs R2C 1000"});
  const R2RDecision fits = decide({2, 4096}, {1}, {R2RKind::dct2});
  expect_throw_naming<NotSupported>(
      [&] { (void)detail::fused_axes(fits, Direction::forward, FFTRoute::fused, fits.in_strides, {}, "dct"); },
      {"dct: route fused", "no MathDx in this build"});
}

TEST(R2RFusedRoute, FusedOnCpuExecutionIsNotSupportedOnEveryPath) {
  std::vector<float> h(2 * 4096, 1.0f);
  const TensorView x(h.data(), {2, 4096});
  const Execution cpu = Execution::cpu();
  for (int round = 0; round < 2; ++round) {  // the second round would hit the plan cache had the first planned
    expect_throw_naming<NotSupported>([&] { RealTransform rt(x, {.execution = cpu, .route = FFTRoute::fused}); },
                                      {"RealTransform: route fused", "CUDA execution", "CPU execution (FFTW)"});
    expect_throw_naming<NotSupported>([&] { (void)dct(x, {.execution = cpu, .route = FFTRoute::fused}); },
                                      {"dct: route fused", "CPU execution"});
    expect_throw_naming<NotSupported>([&] { (void)idstn(x, {.execution = cpu, .route = FFTRoute::fused}); },
                                      {"idstn: route fused", "CPU execution"});
  }
  // The other values run FFTW, whose describe() names neither the fused kernel nor the passes.
  for (FFTRoute route : {FFTRoute::automatic, FFTRoute::cufft}) {
    RealTransform rt(x, {.execution = cpu, .route = route});
    rt.plan();
    EXPECT_NO_THROW((void)rt.execute());
    const std::string text = rt.describe();
    EXPECT_NE(text.find("FFTW"), std::string::npos) << text;
    EXPECT_EQ(text.find("fused"), std::string::npos) << text;
    EXPECT_EQ(text.find("cuFFT"), std::string::npos) << text;
    EXPECT_FALSE(rt.uses_cuda());
  }
  // The function forms too, with a result equal to the class form's.
  const Tensor want = dct(x, {.execution = cpu, .route = FFTRoute::cufft});
  const Tensor got = dct(x, {.execution = cpu});
  EXPECT_TRUE(std::equal(got.data<float>(), got.data<float>() + got.numel(), want.data<float>()));
}

TEST(R2RFusedRoute, RouteOutOfRangeIsRefusedOnEveryPath) {
  std::vector<float> h(2 * 64, 1.0f);
  const TensorView x(h.data(), {2, 64});
  const Execution cpu = Execution::cpu();
  for (const Execution& execution : {cpu, Execution::automatic()}) {
    const auto bad = static_cast<FFTRoute>(3);
    for (int round = 0; round < 2; ++round) {
      (void)dct(x, {.execution = execution});  // a cached plan of the same shape exists: the bad call is a hit
      expect_throw_naming<InvalidArgument>([&] { RealTransform rt(x, {.execution = execution, .route = bad}); },
                                           {"RealTransform", "route", "FFTRoute", "0 to 2", "got 3"});
      expect_throw_naming<InvalidArgument>([&] { (void)dct(x, {.execution = execution, .route = bad}); },
                                           {"dct", "route", "FFTRoute", "got 3"});
      expect_throw_naming<InvalidArgument>([&] { (void)idctn(x, {.execution = execution, .route = bad}); },
                                           {"idctn", "route", "got 3"});
      Tensor out = Tensor::empty({2, 64}, f32);
      expect_throw_naming<InvalidArgument>([&] { dst(x, out, {.execution = execution, .route = bad}); },
                                           {"dst", "route", "got 3"});
    }
  }
}

TEST(R2RFusedRoute, ThePlanCacheKeyTellsRoutesApart) {
  std::vector<float> h(2 * 64, 1.0f);
  const TensorView x(h.data(), {2, 64});
  plan_cache::clear();
  plan_cache::reset_stats();
  (void)dct(x, {.execution = Execution::cpu(), .route = FFTRoute::automatic});
  (void)dct(x, {.execution = Execution::cpu(), .route = FFTRoute::cufft});
  EXPECT_EQ(plan_cache::stats().misses, 2u);
  EXPECT_EQ(plan_cache::stats().hits, 0u);
  (void)dct(x, {.execution = Execution::cpu(), .route = FFTRoute::cufft});
  EXPECT_EQ(plan_cache::stats().hits, 1u);
}

TEST(R2RFusedRoute, AMathDxBuildHoldsEveryKernelOfItsLengths) {
#if CUPLAN_HAS_FUSED_FFT
  const auto launchers = detail::fused_r2r::launchers();
  ASSERT_FALSE(launchers.empty());
  std::vector<int> lengths;
  for (const auto* launcher : launchers)
    if (std::find(lengths.begin(), lengths.end(), launcher->length) == lengths.end())
      lengths.push_back(launcher->length);
  EXPECT_EQ(launchers.size(), 6 * lengths.size());  // R2C, C2R, C2C in f32 and f64 per length
  for (int length : lengths)
    for (auto fft : {detail::R2RFftType::r2c, detail::R2RFftType::c2r, detail::R2RFftType::c2c})
      for (bool dp : {false, true}) {
        const auto* launcher = detail::fused_r2r::find_launcher(fft, dp, length);
        ASSERT_NE(launcher, nullptr) << length;
        EXPECT_GT(launcher->block.threads_x, 0u);
        EXPECT_GT(launcher->block.ffts_per_block, 0u);
        EXPECT_NE(launcher->launch, nullptr);
      }
  EXPECT_EQ(detail::fused_r2r::find_launcher(detail::R2RFftType::r2c, false, 1000), nullptr);
#else
  GTEST_SKIP() << "this build has no MathDx (CUPLAN_HAS_FUSED_FFT is 0): no fused kernels to list";
#endif
}

}  // namespace
