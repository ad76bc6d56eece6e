// SPDX-License-Identifier: Apache-2.0
// The fused FFT route without a GPU: its rules (which transforms it takes, and why not), the generated kernel
// source, the NVRTC compilation for sm_90 (NVRTC needs no GPU), the on-disk cache (a second plan of the same source
// compiles nothing, also in a new process; a damaged entry is replaced) and the option's checks through the public
// API. The compilation cases need the cuFFTDx headers (a build with MathDx) and skip otherwise.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nvrtc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cuplan/cuplan.hpp"
#if CUPLAN_HAS_CUDA
#include <nvrtc.h>
#endif
#include "fft/callback_sources.hpp"
#include "fft/fused_kernels/fused_fft_kernel.hpp"
#include "fft/planner.hpp"
#include "fft/routes/fused_fft.hpp"
#include "support/test_support.hpp"

namespace cuplan::detail {
namespace {

namespace fs = std::filesystem;

LayoutDecision decide(DType dtype, std::vector<std::int64_t> shape, std::vector<int> axes,
                      std::optional<FFTType> type = {}) {
  LayoutRequest r;
  r.dtype = dtype;
  r.shape = Shape(std::span<const std::int64_t>(shape));
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  r.strides = Strides(std::span<const std::int64_t>(strides));
  r.axes = std::move(axes);
  r.type = type;
  r.loop_is_costly = true;
  r.aligned_real_calls = true;
  r.single_call = true;
  return plan_layout(r);
}

FFTOptions with_prolog(FFTRoute route = FFTRoute::automatic) {
  FFTOptions o;
  o.prolog = FFTCallback::cuda_source(cuplan::testing::kScaleSource, "scale_by");
  o.route = route;
  return o;
}

TEST(FusedFftRules, TakesOneContiguousAxisOfACudaSourceCallbackAtASupportedLength) {
  const FFTOptions o = with_prolog();
  const FusedFftContext sm90{o, 90, ""};
  EXPECT_EQ(fused_fft_refusal(decide(c64, {64, 4096}, {1}), sm90), "");
  EXPECT_EQ(fused_fft_refusal(decide(c128, {8, 16384}, {1}), sm90), "");
  EXPECT_EQ(fused_fft_refusal(decide(f32, {8, 32768}, {1}), sm90), "");
  EXPECT_EQ(fused_fft_refusal(decide(c64, {8, 1000}, {1}), sm90), "");  // 2^3 5^3
  EXPECT_TRUE(takes_fused_route(decide(c64, {64, 4096}, {1}), {with_prolog(FFTRoute::fused), 90, ""}));
  EXPECT_FALSE(takes_fused_route(decide(c64, {64, 4096}, {1}), sm90));  // automatic: cuFFT until the GPU suite ran it
  EXPECT_EQ(fused_fft_max_length(f32, 90), 32768);
  EXPECT_EQ(fused_fft_max_length(f64, 90), 16384);
  EXPECT_EQ(fused_fft_max_length(f32, 61), 0);
}

TEST(FusedFftRules, EachRefusalNamesItsReason) {
  const FFTOptions o = with_prolog();
  // cuFFTDx's own lengths, as its database would list them (every one here but 1021 and 24000).
  const auto native = [](DType, std::int64_t n) { return n != 1021 && n != 24000; };
  const auto refusal = [&](const LayoutDecision& d) { return fused_fft_refusal(d, {o, 90, "", native}); };
  EXPECT_NE(refusal(decide(c64, {64, 64}, {0, 1})).find("2 axes"), std::string::npos);
  EXPECT_NE(refusal(decide(c64, {64, 64}, {0})).find("stride 64"), std::string::npos);
  EXPECT_NE(refusal(decide(c32, {4, 256}, {1})).find("c32"), std::string::npos);
  EXPECT_NE(refusal(decide(c128, {4, 32768}, {1})).find("2 to 16384"), std::string::npos);
  EXPECT_NE(refusal(decide(c64, {4, 65536}, {1})).find("2 to 32768"), std::string::npos);
  EXPECT_NE(refusal(decide(c64, {4, 1021}, {1})).find("not one cuFFTDx runs"), std::string::npos);
  EXPECT_NE(refusal(decide(f32, {4, 24000}, {1})).find("not one cuFFTDx runs"), std::string::npos);
  EXPECT_NE(refusal(decide(f32, {4, 375}, {1})).find("odd"), std::string::npos);
  EXPECT_NE(fused_fft_refusal(decide(c64, {4, 256}, {1}), {o, 61, ""}).find("sm_61"), std::string::npos);
  EXPECT_EQ(fused_fft_refusal(decide(c64, {4, 256}, {1}), {o, 90, "no headers here"}), "no headers here");
  FFTOptions host;
  host.prolog = FFTCallback::host_prolog<std::complex<float>>(
      [](const void*, std::uint64_t, void*) { return std::complex<float>(); });
  EXPECT_NE(fused_fft_refusal(decide(c64, {4, 256}, {1}), {host, 90, ""}).find("host callable"), std::string::npos);
}

TEST(FusedFftRules, LtoIrCallbacksTakeTheFusedRouteToo) {
  FFTOptions lto;
  lto.prolog = FFTCallback::lto_ir(std::vector<unsigned char>{1, 2, 3}, "f");  // checked when linked, at plan()
  lto.epilog = FFTCallback::cuda_source(cuplan::testing::kFilterSource, "conv::multiply");
  lto.route = FFTRoute::fused;
  EXPECT_EQ(fused_fft_refusal(decide(c64, {4, 256}, {1}), {lto, 90, ""}), "");
  EXPECT_TRUE(takes_fused_route(decide(c64, {4, 256}, {1}), {lto, 90, ""}));
}

TEST(FusedFftRules, RealF32PowersOfTwoTakeTheFoldedModeToTwiceTheLimit) {
  using fused_fft::folded_real_mode;
  EXPECT_TRUE(folded_real_mode(FFTType::r2c, f32, 2048));
  EXPECT_TRUE(folded_real_mode(FFTType::c2r, f32, 65536));
  EXPECT_TRUE(folded_real_mode(FFTType::r2c, f32, 4));
  EXPECT_FALSE(folded_real_mode(FFTType::r2c, f32, 2));     // folds to a C2C of 1 point
  EXPECT_FALSE(folded_real_mode(FFTType::r2c, f32, 1000));  // not a power of two: the normal real mode
  EXPECT_FALSE(folded_real_mode(FFTType::c2r, f32, 6144));
  EXPECT_FALSE(folded_real_mode(FFTType::r2c, f64, 2048));  // f64 keeps the normal real mode
  EXPECT_FALSE(folded_real_mode(FFTType::c2c, f32, 2048));

  const FFTOptions o = with_prolog(FFTRoute::fused);
  const auto native = [](DType, std::int64_t n) { return n != 16384; };  // as if 16384 were missing
  const auto refusal = [&](const LayoutDecision& d) { return fused_fft_refusal(d, {o, 90, ""}); };
  EXPECT_EQ(refusal(decide(f32, {4, 65536}, {1})), "");
  EXPECT_EQ(refusal(decide(c64, {4, 32769}, {1}, FFTType::c2r)), "");  // C2R to 65536 reals
  EXPECT_NE(refusal(decide(f32, {4, 131072}, {1}))
                .find("2 to 32768; powers of two to 65536 for real f32, in the "
                      "folded mode"),
            std::string::npos);
  EXPECT_NE(refusal(decide(f32, {4, 40000}, {1})).find("powers of two to 65536"), std::string::npos);
  EXPECT_NE(refusal(decide(f64, {4, 32768}, {1})).find("(2 to 16384)"), std::string::npos);  // no folded mode
  EXPECT_NE(fused_fft_refusal(decide(f32, {4, 32768}, {1}), {o, 90, "", native}).find("folds to a C2C FFT of 16384"),
            std::string::npos);
  EXPECT_EQ(fused_fft_refusal(decide(f32, {4, 16384}, {1}), {o, 90, "", native}), "");  // folds to 8192
  // Even and not a power of two: the normal real mode, within the C2C limit.
  EXPECT_EQ(fused_fft_refusal(decide(f32, {4, 6144}, {1}), {o, 90, "", native}), "");
}

TEST(FusedFftRules, NativeLengthsComeFromTheCufftdxDatabase) {
  if (!fused_fft::headers_problem().empty()) GTEST_SKIP() << fused_fft::headers_problem();
  for (std::int64_t n : {2, 7, 64, 1000, 2048, 2187, 3125, 4096, 16384, 32768})
    EXPECT_TRUE(fused_fft::is_native_length(f32, n)) << n;
  for (std::int64_t n : {1021, 1001, 24000, 65536}) EXPECT_FALSE(fused_fft::is_native_length(f32, n)) << n;
  EXPECT_TRUE(fused_fft::is_native_length(f64, 16384));
  EXPECT_FALSE(fused_fft::is_native_length(f64, 32768));
}

TEST(FusedFftRules, AutomaticNeedsACallbackCufftNeverFusedRaisesWithTheReason) {
  const LayoutDecision ok = decide(c64, {64, 4096}, {1});
  const LayoutDecision two_axes = decide(c64, {64, 64}, {0, 1});
  EXPECT_FALSE(takes_fused_route(ok, {FFTOptions{}, 90, ""}));
  EXPECT_FALSE(takes_fused_route(ok, {with_prolog(FFTRoute::cufft), 90, ""}));
  EXPECT_FALSE(takes_fused_route(two_axes, {with_prolog(), 90, ""}));
  FFTOptions forced;
  forced.route = FFTRoute::fused;
  EXPECT_TRUE(takes_fused_route(ok, {forced, 90, ""}));
  try {
    (void)takes_fused_route(two_axes, {forced, 90, ""});
    ADD_FAILURE() << "expected NotSupported";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("route fused: the transform has 2 axes"), std::string::npos) << e.what();
  }
}

TEST(FusedFftRules, TheOptionIsCheckedThroughThePublicApi) {
  std::vector<std::complex<float>> data(4 * 256);
  const TensorView x(data.data(), {4, 256});
  EXPECT_THROW(FFT(x, {.execution = Execution::cpu(), .route = FFTRoute::fused}), NotSupported);
  try {
    FFT f(x, {.route = static_cast<FFTRoute>(7)});
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("route"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("got 7"), std::string::npos) << e.what();
  }
  FFT cpu(x, {.execution = Execution::cpu(), .route = FFTRoute::cufft});  // accepted: CPU execution runs FFTW
  EXPECT_EQ(to_string(FFTRoute::fused), "fused");
}

fused_fft::KernelSpec spec_of(FFTType type, DType precision, std::int64_t n) {
  fused_fft::KernelSpec spec;
  spec.type = type;
  spec.precision = precision;
  spec.length = n;
  spec.sm = 90;
  return spec;
}

std::shared_ptr<const fused_fft::InlinedCallback> inlined(const char* source, const char* symbol, DType element,
                                                          CallbackRole role) {
  return std::make_shared<fused_fft::InlinedCallback>(fused_fft::InlinedCallback{
      source, symbol, element, fmt::format("{} '{}'", role == CallbackRole::prolog ? "prolog" : "epilog", symbol), {}});
}

fused_fft::KernelSpec c2c_with_prolog(std::int64_t n, const char* source = cuplan::testing::kScaleSource) {
  fused_fft::KernelSpec spec = spec_of(FFTType::c2c, f32, n);
  spec.prolog = inlined(source, "scale_by", c64, CallbackRole::prolog);
  return spec;
}

TEST(FusedFftSource, InlinesThePrologAndNamesTheDescription) {
  if (!fused_fft::headers_problem().empty()) GTEST_SKIP() << fused_fft::headers_problem();
  const std::string text = fused_fft::kernel_source(c2c_with_prolog(4096));
  for (const char* part : {"cufftdx::Size<4096>", "cufftdx::SM<900>", "fft_type::c2c", "Precision<float>",
                           "cuplan_fft_prolog_entry(const_cast<void*>(rows.in)", "cuplan_fused_fft_forward",
                           "cuplan_fused_fft_inverse", "__device__ float2 scale_by"})
    EXPECT_NE(text.find(part), std::string::npos) << part << " not in:\n" << text;
}

// The block shape: cuFFTDx's suggestion, but c64 at 1024 at 16 elements per thread (measured faster ahead of time),
// with cuFFTDx's suggested FFTs per block for the elements per thread chosen.
TEST(FusedFftSource, TakesCufftdxBlockShapeExceptC64At1024) {
  if (!fused_fft::headers_problem().empty()) GTEST_SKIP() << fused_fft::headers_problem();
  const std::string c64_1024 = fused_fft::kernel_source(c2c_with_prolog(1024));
  EXPECT_NE(c64_1024.find("cufftdx::ElementsPerThread<16>"), std::string::npos) << c64_1024;
  EXPECT_NE(c64_1024.find("FFTsPerBlock<shaped::suggested_ffts_per_block>"), std::string::npos) << c64_1024;
  for (const auto& spec : {c2c_with_prolog(4096), spec_of(FFTType::c2c, f64, 1024), spec_of(FFTType::r2c, f32, 1024)}) {
    const std::string text = fused_fft::kernel_source(spec);
    EXPECT_NE(text.find("cufftdx::ElementsPerThread<base::elements_per_thread>"), std::string::npos) << text;
  }
}

// The loads test the row once, outside the loop, and each element's index only where a thread's last index can
// pass the row's end (decided at compile time): a whole row's loads are then straight-line code, so that the
// compiler issues them together and reads a prolog's user data once, not once per element behind a branch.
TEST(FusedFftSource, TheRowIsTestedOnceAndAnIndexOnlyWhereItCanPassTheEnd) {
  if (!fused_fft::headers_problem().empty()) GTEST_SKIP() << fused_fft::headers_problem();
  for (const auto& spec : {c2c_with_prolog(1024), spec_of(FFTType::r2c, f32, 4096), spec_of(FFTType::c2r, f64, 1000)}) {
    const std::string text = fused_fft::kernel_source(spec);
    for (const char* part :
         {"constexpr bool in_whole = FFT::input_ept * FFT::stride == FFT::input_length;", "if (active) {",
          "if (in_whole || index < FFT::input_length)", "if (out_whole || index < FFT::output_length)"})
      EXPECT_NE(text.find(part), std::string::npos) << part << " not in:\n" << text;
    EXPECT_EQ(text.find("active ?"), std::string::npos) << text;
  }
}

// Real f32 rows of a power-of-two length load (R2C) or store (C2R) pairs of reals in the folded mode; other real
// rows keep the normal mode.
TEST(FusedFftSource, RealF32PowersOfTwoUseTheFoldedMode) {
  if (!fused_fft::headers_problem().empty()) GTEST_SKIP() << fused_fft::headers_problem();
  const std::string folded = "cufftdx::real_mode::folded";
  fused_fft::KernelSpec r2c = spec_of(FFTType::r2c, f32, 2048);
  r2c.prolog = inlined(
      "__device__ float twice(void* in, unsigned long long o, void*, void*) { return 2.0f * "
      "static_cast<const float*>(in)[o]; }",
      "twice", f32, CallbackRole::prolog);
  const std::string r2c_text = fused_fft::kernel_source(r2c);
  EXPECT_NE(r2c_text.find(folded), std::string::npos) << r2c_text;
  EXPECT_NE(r2c_text.find("const unsigned long long at = in_base + 2ull * index;"), std::string::npos) << r2c_text;
  EXPECT_NE(r2c_text.find("lo = cuplan_fft_prolog_entry(const_cast<void*>(rows.in), at, "), std::string::npos);
  EXPECT_NE(r2c_text.find("hi = cuplan_fft_prolog_entry(const_cast<void*>(rows.in), at + 1, "), std::string::npos);
  const std::string c2r_text = fused_fft::kernel_source(spec_of(FFTType::c2r, f32, 65536));
  EXPECT_NE(c2r_text.find(folded), std::string::npos);
  EXPECT_NE(c2r_text.find("if (out_pairs) reinterpret_cast<float2*>"), std::string::npos) << c2r_text;
  for (const fused_fft::KernelSpec& normal :
       {spec_of(FFTType::r2c, f32, 1000), spec_of(FFTType::r2c, f64, 2048), spec_of(FFTType::c2c, f32, 2048)})
    EXPECT_EQ(fused_fft::kernel_source(normal).find(folded), std::string::npos)
        << to_string(normal.type) << " " << normal.precision.name() << " " << normal.length;
}

// A C2C program holds a forward and an inverse kernel, R2C only the forward and C2R only the inverse one; the loader
// looks up only those (a lookup of an absent kernel is a CUDA error, which compute-sanitizer reports).
TEST(FusedFftSource, EachTypeHoldsTheKernelsTheLoaderLooksUp) {
  if (!fused_fft::headers_problem().empty()) GTEST_SKIP() << fused_fft::headers_problem();
  struct Case {
    FFTType type;
    bool forward, inverse;
  };
  for (const Case c :
       {Case{FFTType::c2c, true, true}, Case{FFTType::r2c, true, false}, Case{FFTType::c2r, false, true}}) {
    EXPECT_EQ(fused_fft::program_holds(c.type, Direction::forward), c.forward) << to_string(c.type);
    EXPECT_EQ(fused_fft::program_holds(c.type, Direction::inverse), c.inverse) << to_string(c.type);
    const std::string text = fused_fft::kernel_source(spec_of(c.type, f32, 2048));
    EXPECT_EQ(text.find("void __launch_bounds__") != std::string::npos, true) << text;
    EXPECT_EQ(text.find(" cuplan_fused_fft_forward(") != std::string::npos, c.forward) << to_string(c.type);
    EXPECT_EQ(text.find(" cuplan_fused_fft_inverse(") != std::string::npos, c.inverse) << to_string(c.type);
    EXPECT_EQ(text.find("cuplan_fused_config_forward[4]") != std::string::npos, c.forward) << to_string(c.type);
    EXPECT_EQ(text.find("cuplan_fused_config_inverse[4]") != std::string::npos, c.inverse) << to_string(c.type);
  }
}

// A fresh cache folder per test, set through the environment as a user would.
class FusedFftCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fused_fft::headers_problem().empty()) GTEST_SKIP() << fused_fft::headers_problem();
    dir_ = fs::temp_directory_path() / ("cuplan-kernel-cache-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    ::setenv("CUPLAN_KERNEL_CACHE_DIR", dir_.c_str(), 1);
    fused_fft::clear_process_cache_for_testing();
  }
  void TearDown() override {
    ::unsetenv("CUPLAN_KERNEL_CACHE_DIR");
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> files;
    if (fs::exists(dir_))
      for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path());
    return files;
  }
  fs::path dir_;
};

TEST_F(FusedFftCompile, CompilesForSm90WithoutAGpuAndASecondPlanCompilesNothingAlsoInANewProcess) {
  const fused_fft::KernelSpec spec = c2c_with_prolog(4096);
  const std::uint64_t before = fft_callback_stats().compilations;
  const auto started = std::chrono::steady_clock::now();
  const auto compiled = fused_fft::compiled_kernel(spec);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "fused C2C f32 4096 with a prolog, forward and inverse kernels: compiled in %.1f s (%zu bytes of "
      "cubin)\n",
      seconds, compiled->cubin.size());
  EXPECT_EQ(fft_callback_stats().compilations, before + 1);
  ASSERT_GT(compiled->cubin.size(), 4u);
  EXPECT_EQ(std::string(compiled->cubin.data(), 4),
            "\x7f"
            "ELF");
  // One entry, no temporary file left behind.
  const std::vector<fs::path> files = entries();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].extension(), ".cubin");
  EXPECT_NE(files[0].filename().string().find("sm90"), std::string::npos) << files[0];

  EXPECT_EQ(compiled->type, FFTType::c2c);

  // Same process: the process cache, then (once forgotten) the disk.
  EXPECT_EQ(fused_fft::compiled_kernel(spec)->cubin, compiled->cubin);
  fused_fft::clear_process_cache_for_testing();
  EXPECT_EQ(fused_fft::compiled_kernel(spec)->cubin, compiled->cubin);
  EXPECT_EQ(fft_callback_stats().compilations, before + 1);

  // A new process: its exit code is the number of compilations it made.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::uint64_t own = fft_callback_stats().compilations;
    const auto again = fused_fft::compiled_kernel(spec);
    ::_exit(again->cubin == compiled->cubin ? static_cast<int>(fft_callback_stats().compilations - own) : 99);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "compilations in the new process (99: another cubin)";

  // A damaged entry (truncated, as a crash in another writer could not leave it, or edited) is compiled again.
  {
    std::ofstream damage(files[0], std::ios::binary | std::ios::trunc);
    damage << "not a cache entry";
  }
  fused_fft::clear_process_cache_for_testing();
  const auto again = std::chrono::steady_clock::now();
  EXPECT_EQ(fused_fft::compiled_kernel(spec)->cubin.size(), compiled->cubin.size());
  std::printf("compiled again in the same process in %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count());
  EXPECT_EQ(fft_callback_stats().compilations, before + 2);
  EXPECT_EQ(entries().size(), 1u);
}

// The kernel whose block shape differs from cuFFTDx's suggestion compiles (sm_90, no GPU needed).
TEST_F(FusedFftCompile, C64Of1024AtSixteenElementsPerThreadCompiles) {
  const auto compiled = fused_fft::compiled_kernel(c2c_with_prolog(1024));
  ASSERT_GT(compiled->cubin.size(), 4u);
  EXPECT_EQ(std::string(compiled->cubin.data(), 4),
            "\x7f"
            "ELF");
}

// Real transforms (the folded mode of real f32 rows too) and double precision compile, and one source may hold both
// callbacks (included once).
TEST_F(FusedFftCompile, R2cC2rFoldedF64AndOneSourceForBothCallbacksCompile) {
  const char* both = R"(
__device__ double2 load_twice(void* in, unsigned long long offset, void*, void*) {
  const double2 v = static_cast<const double2*>(in)[offset];
  return make_double2(2.0 * v.x, 2.0 * v.y);
}
__device__ void store_conjugate(void* out, unsigned long long offset, double2 v, void*, void*) {
  static_cast<double2*>(out)[offset] = make_double2(v.x, -v.y);
}
)";
  fused_fft::KernelSpec c2c = spec_of(FFTType::c2c, f64, 16384);
  c2c.prolog = inlined(both, "load_twice", c128, CallbackRole::prolog);
  c2c.epilog = inlined(both, "store_conjugate", c128, CallbackRole::epilog);
  fused_fft::KernelSpec r2c = spec_of(FFTType::r2c, f32, 2048);
  r2c.epilog = inlined(cuplan::testing::kFilterSource, "conv::multiply", c64, CallbackRole::epilog);
  // 1000 = 2^3 5^3, no callback: the normalization's factor in the store.
  fused_fft::KernelSpec c2r = spec_of(FFTType::c2r, f64, 1000);
  // The folded mode: R2C f32 2048 above loads pairs of reals (8-byte loads where aligned); C2R f32 65536, twice the
  // C2C limit, stores them with the factor.
  fused_fft::KernelSpec folded = spec_of(FFTType::c2r, f32, 65536);
  for (const fused_fft::KernelSpec* spec : {&c2c, &r2c, &c2r, &folded}) {
    const auto started = std::chrono::steady_clock::now();
    const auto compiled = fused_fft::compiled_kernel(*spec);
    std::printf("%s: compiled in %.1f s (%zu bytes of cubin)\n", compiled->key.c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                compiled->cubin.size());
    EXPECT_EQ(std::string(compiled->cubin.data(), 4),
              "\x7f"
              "ELF");
    EXPECT_EQ(compiled->type, spec->type) << compiled->key;
  }
  EXPECT_EQ(entries().size(), 4u);
  // Read back from the disk, each program still says which kernels it holds.
  fused_fft::clear_process_cache_for_testing();
  for (const fused_fft::KernelSpec* spec : {&c2c, &r2c, &c2r, &folded})
    EXPECT_EQ(fused_fft::compiled_kernel(*spec)->type, spec->type) << to_string(spec->type);
}

TEST_F(FusedFftCompile, ACallbackOfTheWrongSignatureFailsWithTheCompilerLog) {
  const char* wrong = R"(
__device__ float scale_by(void* in, unsigned long long offset, void*, void*) { return 1.0f; }
)";
  try {
    (void)fused_fft::compiled_kernel(c2c_with_prolog(256, wrong));
    ADD_FAILURE() << "expected CallbackError";
  } catch (const CallbackError& e) {
    EXPECT_EQ(e.callback(), "prolog 'scale_by'");
    EXPECT_NE(e.log().find("must be declared as"), std::string::npos) << e.log();
  }
  EXPECT_TRUE(entries().empty());
}

// LTO-IR of `source` for sm_90, made with NVRTC as a user's build would make it (nvcc -dlto or NVRTC's -dlto).
std::vector<unsigned char> lto_ir_of(const char* source) {
  std::vector<unsigned char> lto;
#if CUPLAN_HAS_CUDA
  nvrtcProgram program = nullptr;
  EXPECT_EQ(nvrtcCreateProgram(&program, source, "user-callback.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  const char* options[] = {"-arch=sm_90", "-dlto", "-rdc=true"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 3, options);
  std::size_t size = 0;
  if (compiled == NVRTC_SUCCESS && nvrtcGetLTOIRSize(program, &size) == NVRTC_SUCCESS) {
    lto.resize(size);
    EXPECT_EQ(nvrtcGetLTOIR(program, reinterpret_cast<char*>(lto.data())), NVRTC_SUCCESS);
  }
  EXPECT_EQ(compiled, NVRTC_SUCCESS);
  (void)nvrtcDestroyProgram(&program);
#else
  (void)source;  // the CPU-only build: the compilation cases skip before this is called
#endif
  return lto;
}

// A prolog of R2C f32 as a user's LTO-IR: global scope, C++ linkage, cuFFT's signature.
const char* kLtoScale = R"(
__device__ float lto_scale(void* in, unsigned long long offset, void*, void*) {
  return 3.0f * static_cast<const float*>(in)[offset];
}
)";

// R2C f32 of 256 points (the folded mode: the prolog is called for both reals of each pair).
fused_fft::KernelSpec r2c_with_lto_prolog(std::vector<unsigned char> lto, const char* symbol = "lto_scale") {
  fused_fft::KernelSpec spec = spec_of(FFTType::r2c, f32, 256);
  auto prolog = std::make_shared<fused_fft::InlinedCallback>(
      fused_fft::InlinedCallback{"", symbol, f32, fmt::format("prolog '{}'", symbol), std::move(lto)});
  spec.prolog = std::move(prolog);
  return spec;
}

bool holds(const std::vector<char>& bytes, const std::string& text) {
  return std::search(bytes.begin(), bytes.end(), text.begin(), text.end()) != bytes.end();
}

// One program with an LTO-IR prolog and a CUDA source epilog (an R2C in the folded mode): compiled to LTO-IR, linked
// by nvJitLink into a cubin for sm_90 that keeps the kernel and its launch geometry, and cached under a key holding
// the IR's hash.
TEST_F(FusedFftCompile, LtoIrCallbacksAreLinkedIntoACubinForSm90AndCached) {
  fused_fft::KernelSpec spec = r2c_with_lto_prolog(lto_ir_of(kLtoScale));
  ASSERT_FALSE(spec.prolog->lto_ir.empty());
  const char* epilog = R"(
__device__ void conjugate(void* out, unsigned long long offset, float2 v, void*, void*) {
  static_cast<float2*>(out)[offset] = make_float2(v.x, -v.y);
}
)";
  spec.epilog = inlined(epilog, "conjugate", c64, CallbackRole::epilog);
  const std::string text = fused_fft::kernel_source(spec);
  EXPECT_NE(text.find("__device__ float lto_scale(void* data_in, unsigned long long offset"), std::string::npos)
      << text;
  EXPECT_NE(text.find("cufftdx::real_mode::folded"), std::string::npos);
  EXPECT_NE(text.find("__device__ void conjugate(void* out"), std::string::npos) << text;

  // The key changes with the IR's bytes (another function of the same name compiles to other IR).
  fused_fft::KernelSpec other = spec;
  other.prolog = r2c_with_lto_prolog(std::vector<unsigned char>(spec.prolog->lto_ir.size(), 7)).prolog;
  EXPECT_NE(fused_fft::kernel_key(other), fused_fft::kernel_key(spec));
  EXPECT_NE(fused_fft::kernel_key(spec).find("-lto-sm90-"), std::string::npos) << fused_fft::kernel_key(spec);

  const std::uint64_t before = fft_callback_stats().compilations;
  const auto started = std::chrono::steady_clock::now();
  const auto compiled = fused_fft::compiled_kernel(spec);
  std::printf("%s: compiled and linked in %.1f s (%zu bytes of cubin)\n", compiled->key.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
              compiled->cubin.size());
  EXPECT_EQ(compiled->key, fused_fft::kernel_key(spec));
  ASSERT_GT(compiled->cubin.size(), 4u);
  EXPECT_EQ(std::string(compiled->cubin.data(), 4),
            "\x7f"
            "ELF");
  // What LoadedKernel::load looks up survives the link: the kernels and their launch geometry.
  for (const char* symbol : {"cuplan_fused_fft_forward", "cuplan_fused_config_forward"})
    EXPECT_TRUE(holds(compiled->cubin, symbol)) << symbol;
  EXPECT_EQ(fft_callback_stats().compilations, before + 1);
  ASSERT_EQ(entries().size(), 1u);
  EXPECT_NE(entries()[0].filename().string().find("-lto-sm90-"), std::string::npos) << entries()[0];
  fused_fft::clear_process_cache_for_testing();
  EXPECT_EQ(fused_fft::compiled_kernel(spec)->cubin, compiled->cubin);  // from the disk
  EXPECT_EQ(fft_callback_stats().compilations, before + 1);
}

// Bytes nvJitLink does not take, and a symbol the kernel cannot declare, fail before the kernel is compiled, with a
// CallbackError naming the callback.
TEST_F(FusedFftCompile, BadLtoIrFailsNamingTheCallbackBeforeAnyCompilation) {
  const std::uint64_t before = fft_callback_stats().compilations;
  try {
    (void)fused_fft::compiled_kernel(r2c_with_lto_prolog({'n', 'o', 't', ' ', 'I', 'R', 0, 1, 2, 3}));
    ADD_FAILURE() << "expected CallbackError";
  } catch (const CallbackError& e) {
    EXPECT_EQ(e.callback(), "prolog 'lto_scale'");
    EXPECT_NE(std::string(e.what()).find("does not take the 10 bytes given as LTO-IR"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nvJitLinkAddData"), std::string::npos) << e.what();
  }
  try {
    (void)fused_fft::compiled_kernel(r2c_with_lto_prolog({1, 2, 3}, "filters::scale"));
    ADD_FAILURE() << "expected CallbackError";
  } catch (const CallbackError& e) {
    EXPECT_EQ(e.callback(), "prolog 'filters::scale'");
    EXPECT_NE(std::string(e.what()).find("plain name"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fft_callback_stats().compilations, before);
  EXPECT_TRUE(entries().empty());
}

}  // namespace
}  // namespace cuplan::detail
