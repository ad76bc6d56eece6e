// SPDX-License-Identifier: Apache-2.0
// FFT callbacks (docs/fft.md, "Callbacks"): every figure is a ratio within one run, on random data.
//   (a) convolution of a c64 batch along axis 1 ([4096, 16384], [16384, 4096], [65536, 1024], [262144, 256]):
//       forward FFT with the product by a filter spectrum in its epilog, then the inverse; against forward FFT, a
//       separate product kernel, inverse (GPU time, CUDA events, median), on both routes of a transform with
//       callbacks (fused: cuplan's cuFFTDx kernel; cufft: cuFFT's LTO callbacks). The results are compared.
//   (b) a prolog that scales every element, on the same C2C, both routes: against the plain transform (GPU time).
//   (c) host time per FFT::execute of a small C2C (n = 256) with a prolog, graph replay on, against the same without
//       callbacks; and with the user data pointer changed at every call (one extra kernel launch).
//   (d) planning: the first plan of a new source (its NVRTC compile time and cuFFT's plan with the link) and a
//       second plan of the same source (0 compilations), against a plan without callbacks.
//   (e) CPU: a host prolog that scales, fused in FFTW's chunked loop, against FFT::execute followed by a separate
//       scaling loop, and against the plain transform.
//   (f) the same fusions as (a) and (b) in raw cuFFT (cufftXtSetJITCallback, LTO-IR from NVRTC, the position as
//       offset % n, the factor and filter passed as caller_info), against raw cuFFT without callbacks: what the
//       library itself gives, to read (a) and (b) against; and cuplan's fused time against raw cuFFT's.
// Usage: fft_callback_bench [--quick] [--csv PATH]. GPU parts are skipped (and said so) without a GPU.

#include <cuda_runtime_api.h>
#include <cufftXt.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cuplan/cuplan.hpp>
#include <cuplan/fft_callback_device.hpp>

#include "support/bench_check.hpp"
#include "support/bench_csv.hpp"
#include "support/fft_timing.hpp"

namespace cp = cuplan;
using cfloat = std::complex<float>;
using Clock = std::chrono::steady_clock;
using bench::gpu_median_ms;

namespace {

std::vector<cfloat> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<cfloat> v(n);
  for (auto& x : v) x = {u(rng), u(rng)};
  return v;
}

void ratio_line(const char* what, double value, double baseline, const char* unit, const char* baseline_name) {
  std::printf("  %-52s %10.4f %s   %s %10.4f %s   ratio %.4f\n", what, value, unit, baseline_name, baseline, unit,
              value / baseline);
}

// The separate pass the fused epilog replaces: spectra[b, k] *= filter[k].
__global__ void multiply_rows(float2* spectra, const float2* filter, long long rows, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= rows * n) return;
  const float2 v = spectra[i], h = filter[i % n];
  spectra[i] = make_float2(v.x * h.x - v.y * h.y, v.x * h.y + v.y * h.x);
}

const char* kMultiplySource = R"(
#include <cuplan/fft_callback_device.hpp>
__device__ void multiply_by_filter(void* out, unsigned long long offset, float2 v, void* info, void*) {
  const float2* h = cuplan::fft_callback::user_data<const float2>(info);
  const float2 k = h[cuplan::fft_callback::index(offset, info, 1)];
  static_cast<float2*>(out)[offset] = make_float2(v.x * k.x - v.y * k.y, v.x * k.y + v.y * k.x);
}
)";

const char* kScaleSource = R"(
#include <cuplan/fft_callback_device.hpp>
__device__ float2 scale(void* in, unsigned long long offset, void* info, void*) {
  const float s = *cuplan::fft_callback::user_data<const float>(info);
  const float2 v = static_cast<const float2*>(in)[offset];
  return make_float2(v.x * s, v.y * s);
}
)";

double relative_difference(const cp::Tensor& a, const cp::Tensor& b, cp::StreamRef s) {
  const cp::Tensor ha = a.to(cp::Device::cpu(), s), hb = b.to(cp::Device::cpu(), s);
  const auto* x = ha.data<cfloat>();
  const auto* y = hb.data<cfloat>();
  double num = 0, den = 0;
  for (std::int64_t i = 0; i < ha.numel(); ++i) {
    num += std::norm(std::complex<double>(x[i]) - std::complex<double>(y[i]));
    den += std::norm(std::complex<double>(y[i]));
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

struct FusedTimes {
  double fused_convolution_ms = 0, separate_convolution_ms = 0, prolog_ms = 0, plain_ms = 0;
};

// The operands of (a), (b) and (f): a random c64 batch [rows, n], its spectra and two results, a random filter
// spectrum of n and a scaling factor of 0.5, on GPU 0.
struct ConvolutionData {
  cp::Tensor x, spectra, y_separate, y_fused, filter, factor;
};

ConvolutionData convolution_data(long long rows, long long n, unsigned seed, cp::StreamRef s) {
  const auto host = random_values(static_cast<std::size_t>(rows * n), seed);
  const auto filter_host = random_values(static_cast<std::size_t>(n), seed + 1);
  auto batch = [&] { return cp::Tensor::empty({rows, n}, cp::c64, cp::Device::cuda(0), s); };
  ConvolutionData d{batch(),
                    batch(),
                    batch(),
                    batch(),
                    cp::Tensor::empty({n}, cp::c64, cp::Device::cuda(0), s),
                    cp::Tensor::empty({1}, cp::f32, cp::Device::cuda(0), s)};
  cp::copy(cp::TensorView(const_cast<cfloat*>(host.data()), {rows, n}), d.x, s);
  cp::copy(cp::TensorView(const_cast<cfloat*>(filter_host.data()), {n}), d.filter, s);
  float half = 0.5f;
  cp::copy(cp::TensorView(&half, {1}), d.factor, s);
  return d;
}

// (a) and (b) on [rows, n] on both routes of a transform with callbacks: cuplan's fused kernel (FFTRoute::fused)
// and cuFFT with LTO callbacks (FFTRoute::cufft). Returns the fused route's times.
FusedTimes convolution_and_scale(long long rows, long long n, int reps, cp::StreamRef s, bench::Csv& csv) {
  const ConvolutionData d = convolution_data(rows, n, 1, s);
  const cp::Tensor &x = d.x, &spectra = d.spectra, &y_separate = d.y_separate, &y_fused = d.y_fused, &filter = d.filter,
                   &factor = d.factor;

  cp::FFT forward(x, {.axes = {1}, .stream = s});
  cp::FFT inverse(spectra, {.axes = {1}, .stream = s});
  forward.plan(s);
  inverse.plan(s);
  const long long total = rows * n;
  const int threads = 256;
  const auto blocks = static_cast<unsigned>((total + threads - 1) / threads);
  const double separate_ms = gpu_median_ms(s.native(), 2, reps, [&] {
    forward.execute({.stream = s, .out = spectra.view()});
    multiply_rows<<<blocks, threads, 0, s.native()>>>(spectra.data<float2>(), filter.data<float2>(), rows, n);
    BENCH_CUDA_CHECK(cudaGetLastError());
    inverse.execute({.direction = cp::Direction::inverse, .stream = s, .out = y_separate.view()});
  });
  const double plain_ms =
      gpu_median_ms(s.native(), 2, reps, [&] { forward.execute({.stream = s, .out = spectra.view()}); });
  const std::string what = "C2C c64 [" + std::to_string(rows) + ", " + std::to_string(n) + "] axis 1";
  FusedTimes times;
  for (const cp::FFTRoute route : {cp::FFTRoute::fused, cp::FFTRoute::cufft}) {
    const std::string name(cp::to_string(route));
    cp::FFT fused(x, {.axes = {1},
                      .stream = s,
                      .epilog = cp::FFTCallback::cuda_source(kMultiplySource, "multiply_by_filter", filter.data()),
                      .route = route});
    cp::FFT scaled(x, {.axes = {1},
                       .stream = s,
                       .prolog = cp::FFTCallback::cuda_source(kScaleSource, "scale", factor.data()),
                       .route = route});
    fused.plan(s);
    scaled.plan(s);
    const double fused_ms = gpu_median_ms(s.native(), 2, reps, [&] {
      fused.execute({.stream = s, .out = spectra.view()});
      inverse.execute({.direction = cp::Direction::inverse, .stream = s, .out = y_fused.view()});
    });
    std::printf("(a) convolution, %s, route %s: epilog product + inverse vs FFT + product kernel + FFT (GPU time)\n",
                what.c_str(), name.c_str());
    ratio_line("epilog product + inverse", fused_ms, separate_ms, "ms", "separate");
    std::printf("  speed-up separate/fused %.3f; fused/plain forward %.3f; results differ by %.3g (relative)\n",
                separate_ms / fused_ms, fused_ms / plain_ms, relative_difference(y_fused, y_separate, s));
    csv.row("a", what + ", route " + name, "convolution, product in the forward's epilog", fused_ms, "ms",
            "FFT + product kernel + FFT", separate_ms);

    const double prolog_ms =
        gpu_median_ms(s.native(), 2, reps, [&] { scaled.execute({.stream = s, .out = y_fused.view()}); });
    std::printf("(b) prolog scale on %s, route %s, vs the plain transform (GPU time)\n", what.c_str(), name.c_str());
    ratio_line("FFT with a scaling prolog", prolog_ms, plain_ms, "ms", "plain");
    std::printf("  ratio prolog/plain %.4f (issue asks <= 1.10)\n", prolog_ms / plain_ms);
    csv.row("b", what + ", route " + name, "FFT with a scaling prolog", prolog_ms, "ms", "FFT without callbacks",
            plain_ms);
    if (route == cp::FFTRoute::fused) times = {fused_ms, separate_ms, prolog_ms, plain_ms};
  }
  return times;
}

std::vector<char> raw_lto_ir(const std::string& source, int sm) {
  nvrtcProgram program = nullptr;
  if (nvrtcCreateProgram(&program, source.c_str(), "raw_callback.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    throw std::runtime_error("nvrtcCreateProgram failed");
  const std::string arch = "-arch=sm_" + std::to_string(sm);
  const char* options[] = {arch.c_str(), "-dlto", "-rdc=true"};
  const nvrtcResult status = nvrtcCompileProgram(program, 3, options);
  std::size_t size = 0;
  std::vector<char> lto;
  if (status == NVRTC_SUCCESS && nvrtcGetLTOIRSize(program, &size) == NVRTC_SUCCESS) {
    lto.resize(size);
    if (nvrtcGetLTOIR(program, lto.data()) != NVRTC_SUCCESS) lto.clear();
  }
  (void)nvrtcDestroyProgram(&program);
  if (lto.empty()) throw std::runtime_error("NVRTC could not compile a raw callback");
  return lto;
}

// A raw cuFFT C2C plan of `batch` rows of `n`, with an LTO callback when `lto` is not empty (it must outlive the
// planning call: cuFFT reads it there).
struct RawPlan {
  cufftHandle handle = 0;
  RawPlan(long long n, long long batch, cudaStream_t stream, const std::vector<char>& lto = {},
          const char* symbol = nullptr, cufftXtCallbackType type = CUFFT_CB_LD_COMPLEX, void* info = nullptr) {
    BENCH_CUFFT_CHECK(cufftCreate(&handle));
    void* caller_info[1] = {info};
    if (!lto.empty())
      BENCH_CUFFT_CHECK(cufftXtSetJITCallback(handle, symbol, lto.data(), lto.size(), type, caller_info));
    std::size_t work = 0;
    BENCH_CUFFT_CHECK(cufftXtMakePlanMany(handle, 1, &n, nullptr, 1, n, CUDA_C_32F, nullptr, 1, n, CUDA_C_32F, batch,
                                          &work, CUDA_C_32F));
    BENCH_CUFFT_CHECK(cufftSetStream(handle, stream));
  }
  RawPlan(const RawPlan&) = delete;
  RawPlan& operator=(const RawPlan&) = delete;
  ~RawPlan() { (void)cufftDestroy(handle); }
  void run(const void* in, void* out, int direction) const {
    BENCH_CUFFT_CHECK(cufftXtExec(handle, const_cast<void*>(in), out, direction));
  }
};

void raw_cufft(bool quick, cp::StreamRef s, const FusedTimes& cuplan_times, bench::Csv& csv) {
  const long long rows = quick ? 512 : 4096, n = 16384;
  const int reps = quick ? 5 : 20;
  const ConvolutionData d = convolution_data(rows, n, 5, s);
  const cp::Tensor &x = d.x, &spectra = d.spectra, &y = d.y_separate, &filter = d.filter, &factor = d.factor;
  cudaDeviceProp prop{};
  BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sm = prop.major * 10 + prop.minor;
  const std::string length = "#define LENGTH " + std::to_string(n) + "ull\n";
  const std::vector<char> multiply = raw_lto_ir(
      length +
          "__device__ void raw_multiply(void* out, unsigned long long offset, float2 v, void* info, void*) {\n"
          "  const float2 k = static_cast<const float2*>(info)[offset % LENGTH];\n"
          "  static_cast<float2*>(out)[offset] = make_float2(v.x * k.x - v.y * k.y, v.x * k.y + v.y * k.x);\n"
          "}\n",
      sm);
  const std::vector<char> scale = raw_lto_ir(
      "__device__ float2 raw_scale(void* in, unsigned long long offset, void* info, void*) {\n"
      "  const float f = *static_cast<const float*>(info);\n"
      "  const float2 v = static_cast<const float2*>(in)[offset];\n"
      "  return make_float2(v.x * f, v.y * f);\n"
      "}\n",
      sm);
  const RawPlan plain(n, rows, s.native());
  const RawPlan fused(n, rows, s.native(), multiply, "raw_multiply", CUFFT_CB_ST_COMPLEX, filter.data());
  const RawPlan scaled(n, rows, s.native(), scale, "raw_scale", CUFFT_CB_LD_COMPLEX, factor.data());
  const long long total = rows * n;
  const auto blocks = static_cast<unsigned>((total + 255) / 256);
  const double separate_ms = gpu_median_ms(s.native(), 2, reps, [&] {
    plain.run(x.data(), spectra.data(), CUFFT_FORWARD);
    multiply_rows<<<blocks, 256, 0, s.native()>>>(spectra.data<float2>(), filter.data<float2>(), rows, n);
    BENCH_CUDA_CHECK(cudaGetLastError());
    plain.run(spectra.data(), y.data(), CUFFT_INVERSE);
  });
  const double fused_ms = gpu_median_ms(s.native(), 2, reps, [&] {
    fused.run(x.data(), spectra.data(), CUFFT_FORWARD);
    plain.run(spectra.data(), y.data(), CUFFT_INVERSE);
  });
  const double plain_ms = gpu_median_ms(s.native(), 2, reps, [&] { plain.run(x.data(), y.data(), CUFFT_FORWARD); });
  const double prolog_ms = gpu_median_ms(s.native(), 2, reps, [&] { scaled.run(x.data(), y.data(), CUFFT_FORWARD); });
  const std::string what = "raw cuFFT C2C c64 [" + std::to_string(rows) + ", " + std::to_string(n) + "]";
  std::printf("(f) %s, the same fusions without cuplan (GPU time)\n", what.c_str());
  ratio_line("raw fused (epilog product) + inverse", fused_ms, separate_ms, "ms", "separate");
  std::printf("  raw speed-up separate/fused %.3f; cuplan (a) %.3f\n", separate_ms / fused_ms,
              cuplan_times.separate_convolution_ms / cuplan_times.fused_convolution_ms);
  ratio_line("raw FFT with a scaling prolog", prolog_ms, plain_ms, "ms", "plain");
  std::printf("  raw ratio prolog/plain %.4f; cuplan (b) %.4f\n", prolog_ms / plain_ms,
              cuplan_times.prolog_ms / cuplan_times.plain_ms);
  ratio_line("cuplan fused convolution (a)", cuplan_times.fused_convolution_ms, fused_ms, "ms", "raw fused");
  ratio_line("cuplan FFT with a scaling prolog (b)", cuplan_times.prolog_ms, prolog_ms, "ms", "raw prolog");
  csv.row("f", what, "raw fused epilog product + inverse", fused_ms, "ms", "raw FFT + product kernel + FFT",
          separate_ms);
  csv.row("f", what, "raw FFT with a scaling prolog", prolog_ms, "ms", "raw FFT without callbacks", plain_ms);
  csv.row("f", what, "cuplan fused convolution", cuplan_times.fused_convolution_ms, "ms", "raw fused convolution",
          fused_ms);
}

void host_cost(bool quick, cp::StreamRef s, bench::Csv& csv) {
  const long long n = 256;
  const auto host = random_values(n, 3);
  cp::Tensor x = cp::Tensor::empty({n}, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor y = cp::Tensor::empty({n}, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor factors = cp::Tensor::empty({2}, cp::f32, cp::Device::cuda(0), s);
  cp::copy(cp::TensorView(const_cast<cfloat*>(host.data()), {n}), x, s);
  float values[2] = {1.0f, 2.0f};
  cp::copy(cp::TensorView(values, {2}), factors, s);
  float* const factor0 = factors.data<float>();
  float* const factor1 = factor0 + 1;
  cp::FFT plain(x, {.stream = s});
  cp::FFT with_prolog(x, {.stream = s, .prolog = cp::FFTCallback::cuda_source(kScaleSource, "scale", factor0)});
  plain.plan(s);
  with_prolog.plan(s);
  int flip = 0;
  const std::vector<std::function<void()>> variants = {
      [&] { plain.execute({.stream = s, .out = y.view()}); },
      [&] { with_prolog.execute({.stream = s, .out = y.view()}); },
      [&] { with_prolog.execute({.stream = s, .out = y.view(), .prolog_data = (++flip & 1) ? factor1 : factor0}); }};
  const int rounds = quick ? 5 : 50, calls = 200;
  const std::vector<double> us = bench::host_us_per_call(s.native(), rounds, calls, variants);
  const double plain_us = us[0], prolog_us = us[1], flip_us = us[2];
  std::printf("(c) host time per FFT::execute, C2C c64 n=256, graph replay on, %d rounds x %d calls\n", rounds, calls);
  ratio_line("with a prolog", prolog_us, plain_us, "us", "no callback");
  ratio_line("with a prolog, user data changed every call", flip_us, plain_us, "us", "no callback");
  csv.row("c", "C2C c64 n=256", "execute with a prolog", prolog_us, "us", "execute without callbacks", plain_us);
  csv.row("c", "C2C c64 n=256", "execute with a prolog, new user data each call", flip_us, "us",
          "execute without callbacks", plain_us);
}

void planning(cp::StreamRef s, bench::Csv& csv) {
  const long long rows = 64, n = 4096;
  cp::Tensor x = cp::Tensor::empty({rows, n}, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor factor = cp::Tensor::empty({1}, cp::f32, cp::Device::cuda(0), s);
  // A source no earlier plan of this process compiled.
  const std::string source =
      std::string(kScaleSource) + "// planning case " + std::to_string(Clock::now().time_since_epoch().count()) + "\n";
  const auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  auto t0 = Clock::now();
  cp::FFT plain(x, {.axes = {1}, .stream = s});
  plain.plan(s);
  const double plain_ms = ms_since(t0);
  const cp::FFTCallbackStats before = cp::fft_callback_stats();
  t0 = Clock::now();
  cp::FFT first(x, {.axes = {1}, .stream = s, .prolog = cp::FFTCallback::cuda_source(source, "scale", factor.data())});
  first.plan(s);
  const double first_ms = ms_since(t0);
  const cp::FFTCallbackStats after_first = cp::fft_callback_stats();
  t0 = Clock::now();
  cp::FFT second(x, {.axes = {1}, .stream = s, .prolog = cp::FFTCallback::cuda_source(source, "scale", factor.data())});
  second.plan(s);
  const double second_ms = ms_since(t0);
  const cp::FFTCallbackStats after_second = cp::fft_callback_stats();
  std::printf("(d) planning C2C c64 [64, 4096] axis 1 (host time)\n");
  std::printf("  first plan with a new source: %.1f ms, of which NVRTC %.1f ms (%llu compilation)\n", first_ms,
              after_first.last_compile_ms,
              static_cast<unsigned long long>(after_first.compilations - before.compilations));
  std::printf("  second plan of the same source: %.1f ms, %llu compilations (cache hits +%llu)\n", second_ms,
              static_cast<unsigned long long>(after_second.compilations - after_first.compilations),
              static_cast<unsigned long long>(after_second.cache_hits - after_first.cache_hits));
  std::printf("  plan without callbacks: %.1f ms\n", plain_ms);
  csv.row("d", "C2C c64 [64, 4096]", "first plan with a new source", first_ms, "ms", "plan without callbacks",
          plain_ms);
  csv.row("d", "C2C c64 [64, 4096]", "NVRTC compile of the first plan", after_first.last_compile_ms, "ms",
          "plan without callbacks", plain_ms);
  csv.row("d", "C2C c64 [64, 4096]", "second plan of the same source", second_ms, "ms", "plan without callbacks",
          plain_ms);
}

void cpu_case(bool quick, bench::Csv& csv) {
  const long long rows = quick ? 64 : 512, n = 4096;
  const int reps = quick ? 5 : 20;
  auto in = random_values(static_cast<std::size_t>(rows * n), 4);
  std::vector<cfloat> out(in.size());
  const cp::TensorView x(in.data(), {rows, n}), y(out.data(), {rows, n});
  float factor = 0.5f;
  const auto prolog = cp::FFTCallback::host_prolog<cfloat>(
      [](const void* data, std::uint64_t offset, void* info) {
        return static_cast<const cfloat*>(data)[offset] * *cp::fft_callback::user_data<const float>(info);
      },
      &factor);
  cp::FFT plain(x, {.axes = {1}, .execution = cp::Execution::cpu()});
  cp::FFT fused(x, {.axes = {1}, .execution = cp::Execution::cpu(), .prolog = prolog});
  plain.plan();
  fused.plan();
  const auto time_ms = [&](const std::function<void()>& run) { return bench::host_median<std::milli>(2, reps, run); };
  const double plain_ms = time_ms([&] { plain.execute({.out = y}); });
  const double fused_ms = time_ms([&] { fused.execute({.out = y}); });
  std::vector<cfloat> scaled(in.size());
  const cp::TensorView xs(scaled.data(), {rows, n});
  cp::FFT from_scaled(xs, {.axes = {1}, .execution = cp::Execution::cpu()});
  from_scaled.plan();
  const double separate_ms = time_ms([&] {
    for (std::size_t i = 0; i < in.size(); ++i) scaled[i] = in[i] * factor;  // the pass the prolog replaces
    from_scaled.execute({.out = y});
  });
  const std::string what = "CPU C2C c64 [" + std::to_string(rows) + ", " + std::to_string(n) + "] axis 1";
  std::printf("(e) %s: host prolog scale (FFTW chunked loop) (%s)\n", what.c_str(), fused.describe().c_str());
  ratio_line("fused host prolog", fused_ms, plain_ms, "ms", "plain");
  ratio_line("separate scaling loop + FFT", separate_ms, plain_ms, "ms", "plain");
  csv.row("e", what, "fused host prolog", fused_ms, "ms", "FFT without callbacks", plain_ms);
  csv.row("e", what, "separate scaling loop + FFT", separate_ms, "ms", "FFT without callbacks", plain_ms);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options options = bench::parse_options(argc, argv);
  bench::Csv csv(options.csv, "fft_callback");
  try {
    std::printf("cuplan FFT callback benchmarks%s\n", options.quick ? " (--quick: small sizes)" : "");
    if (cp::cuda_available()) {
      cudaDeviceProp prop{};
      BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
      std::printf("device: %s\n", prop.name);
      cp::Stream s;
      planning(s, csv);  // first: the process has compiled nothing yet
      // The issue's four shapes of 512 MiB c64 operands (quick: one small one); (f) compares the first.
      const std::vector<std::pair<long long, long long>> shapes =
          options.quick ? std::vector<std::pair<long long, long long>>{{512, 16384}}
                        : std::vector<std::pair<long long, long long>>{
                              {4096, 16384}, {16384, 4096}, {65536, 1024}, {262144, 256}};
      FusedTimes fused;
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        const FusedTimes t = convolution_and_scale(shapes[i].first, shapes[i].second, options.quick ? 5 : 20, s, csv);
        if (i == 0) fused = t;
      }
      host_cost(options.quick, s, csv);
      raw_cufft(options.quick, s, fused, csv);
    } else {
      std::printf("no CUDA device: GPU benchmarks (a)-(d) and (f) skipped\n");
    }
    cpu_case(options.quick, csv);
    return 0;
  } catch (const cp::Error& e) {
    std::fprintf(stderr, "cuplan error: %s\n", e.what());
    return 1;
  }
}
