// SPDX-License-Identifier: Apache-2.0
// Real-to-real benchmarks: every figure is a ratio to a baseline measured in the same run, on random f32 data.
//   (a) GPU: RealTransform (DCT-II, DCT-III, DST-II, DCT-I, DCT-IV) of [4096, 16384] and [16384, 4096] along the last
//       axis, and DCT-II of 512^3 over all axes, against cuplan's own rfft / rfftn (FFT, R2C) of the same shape
//       (CUDA events, warm-up, median of the repetitions), on each route: automatic ("dct2"), fused ("dct2 fused",
//       n/a where no axis qualifies) and the passes ("dct2 passes", route cufft); for DCT-I, the R2C of 2(n-1) points
//       alone and DCT-I of n+1 points (an R2C of 2n). bench/r2r_cupy_bench.py times CuPy on
//       the same shapes and, given this program's CSV, prints the cuplan/CuPy ratios.
//   (b) CPU: RealTransform with Execution::cpu() against fftwf_execute_r2r of the same FFTW kinds and plan flags.
// Usage: r2r_bench [--quick] [--csv PATH]. The GPU part is skipped (and said so) without a GPU.

#include <cuda_runtime_api.h>
#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cuplan/cuplan.hpp>

#include "support/bench_csv.hpp"
#include "support/fft_timing.hpp"

namespace cp = cuplan;

namespace {

std::vector<float> random_values(std::size_t n) {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

std::string shape_text(const cp::Shape& shape) {
  std::string text = "[";
  for (int i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// A device tensor of random f32 values, ready on `s` (the host values are copied before it returns).
cp::Tensor random_tensor(const cp::Shape& shape, cp::StreamRef s) {
  const auto host = random_values(static_cast<std::size_t>(cp::checked_numel(shape)));
  cp::Tensor x = cp::Tensor::empty(shape, cp::f32, cp::Device::cuda(0), s);
  cp::copy(cp::TensorView(host.data(), shape), x, s);
  s.synchronize();
  return x;
}

// DCT-I of n points is an R2C of 2(n-1): at n = 16384 and 4096 those are 32766 = 2 x 3 x 43 x 127 and
// 8190 = 2 x 3^2 x 5 x 7 x 13 points. Two rows tell what bounds it: that R2C alone (cuFFT at the length DCT-I needs),
// and DCT-I at n = 2^k + 1, whose R2C of 2^(k+1) points is a power of two, both against the rfft of n = 2^k.
void dct1_floor(const cp::Shape& shape, int reps, double rfft_ms, cp::StreamRef s, bench::Csv& csv) {
  const long long rows = shape[0], n = shape[1];
  const std::string what = shape_text(shape) + " f32 last axis";
  const auto report = [&](const char* variant, long long length, double ms) {
    std::printf("  %-13s %10.4f ms   ratio to rfft %.3f   ([%lld, %lld])\n", variant, ms, ms / rfft_ms, rows, length);
    csv.row("a", what, variant, ms, "ms", "rfft", rfft_ms);
  };
  {
    const long long length = 2 * (n - 1);
    const cp::Tensor x = random_tensor({rows, length}, s);
    cp::FFT extended(x, {.axes = {1}, .stream = s});
    extended.plan();
    cp::Tensor spectrum = cp::Tensor::empty(extended.result_shape(), extended.result_dtype(), cp::Device::cuda(0), s);
    report("rfft of 2(n-1)", length,
           bench::gpu_median_ms(s.native(), 3, reps, [&] { extended.execute({.out = spectrum.view()}); }));
  }
  {
    const long long length = n + 1;
    const cp::Tensor x = random_tensor({rows, length}, s);
    cp::RealTransform rt(x, {.axes = {1}, .kinds = {cp::R2RKind::dct1}, .stream = s});
    rt.plan();
    cp::Tensor y = cp::Tensor::empty({rows, length}, cp::f32, cp::Device::cuda(0), s);
    report("dct1 of n+1", length, bench::gpu_median_ms(s.native(), 3, reps, [&] { rt.execute({.out = y.view()}); }));
  }
}

void gpu_case(const cp::Shape& shape, const std::vector<int>& axes, const std::vector<cp::R2RKind>& kinds, int reps,
              cp::StreamRef s, bench::Csv& csv) {
  const cp::Tensor x = random_tensor(shape, s);

  // The baseline: cuplan's own R2C of the same shape and axes (rfft / rfftn).
  cp::FFT rfft(x, {.axes = axes, .stream = s});
  rfft.plan();
  cp::Tensor spectrum = cp::Tensor::empty(rfft.result_shape(), rfft.result_dtype(), cp::Device::cuda(0), s);
  const double rfft_ms = bench::gpu_median_ms(s.native(), 3, reps, [&] { rfft.execute({.out = spectrum.view()}); });
  std::printf("%s f32, axes%s: %s %.4f ms\n", shape_text(shape).c_str(), axes.size() == 1 ? " [-1]" : " (all)",
              axes.size() == 1 ? "rfft" : "rfftn", rfft_ms);
  const std::string what = shape_text(shape) + (axes.size() == 1 ? " f32 last axis" : " f32 all axes");

  cp::Tensor y = cp::Tensor::empty(shape, cp::f32, cp::Device::cuda(0), s);
  const char* base = axes.size() == 1 ? "rfft" : "rfftn";
  for (cp::R2RKind kind : kinds) {
    const std::string name = std::string(cp::to_string(kind)) + (axes.size() == 1 ? "" : "n");
    // Each route (docs/r2r.md, "Route choice"): automatic (what a call gets by default; the CSV row CuPy's script
    // compares), fused (one cuFFTDx kernel per qualifying axis) and cufft (pre-pass, cuFFT, post-pass per axis).
    for (const auto& [route, suffix] :
         {std::pair{cp::FFTRoute::automatic, ""}, std::pair{cp::FFTRoute::fused, " fused"},
          std::pair{cp::FFTRoute::cufft, " passes"}}) {
      const std::string variant = name + suffix;
      try {
        cp::RealTransform rt(x, {.axes = axes, .kinds = {kind}, .stream = s, .route = route});
        rt.plan();
        const double ms = bench::gpu_median_ms(s.native(), 3, reps, [&] { rt.execute({.out = y.view()}); });
        std::printf("  %-13s %10.4f ms   ratio to %s %.3f\n", variant.c_str(), ms, base, ms / rfft_ms);
        csv.row("a", what, variant, ms, "ms", base, rfft_ms);
      } catch (const cp::NotSupported& e) {  // route fused where no axis qualifies (a length not compiled, ...)
        std::printf("  %-13s        n/a   (%s)\n", variant.c_str(), e.what());
      }
    }
  }
  if (axes.size() == 1 && std::find(kinds.begin(), kinds.end(), cp::R2RKind::dct1) != kinds.end())
    dct1_floor(shape, reps, rfft_ms, s, csv);
}

void cpu_case(bool quick, bench::Csv& csv) {
  const long long batch = quick ? 64 : 256, n = 4096;
  const int reps = quick ? 5 : 31;
  auto in = random_values(static_cast<std::size_t>(batch * n));
  std::vector<float> out(in.size());
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  fftwf_init_threads();
  const cp::TensorView x(in.data(), {batch, n}), y(out.data(), {batch, n});
  // Medians of single calls (microseconds), cuplan's and FFTW's alternating call by call (first one, then the
  // other, in turn): one after the other in blocks, a shared host's drift (other load, clocks) between the blocks
  // swung the ratio by 30-50 % from run to run.
  const auto alternating_us = [&](const std::function<void()>& a, const std::function<void()>& b) {
    for (int i = 0; i < 2; ++i) {
      a();
      b();
    }
    std::vector<double> ta, tb;
    const auto time_one = [](const std::function<void()>& run, std::vector<double>& into) {
      const auto start = std::chrono::steady_clock::now();
      run();
      into.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    };
    for (int r = 0; r < reps; ++r) {
      if (r % 2 == 0) {
        time_one(a, ta);
        time_one(b, tb);
      } else {
        time_one(b, tb);
        time_one(a, ta);
      }
    }
    return std::pair{bench::median(ta), bench::median(tb)};
  };
  std::printf("(b) CPU, f32 %lld x %lld along the last axis, %d threads, FFTW_ESTIMATE\n", batch, n, threads);
  const std::string what = "CPU f32 " + std::to_string(batch) + " x " + std::to_string(n);
  for (auto [kind, fftw_kind] : {std::pair{cp::R2RKind::dct2, FFTW_REDFT10}, std::pair{cp::R2RKind::dct3, FFTW_REDFT01},
                                 std::pair{cp::R2RKind::dst2, FFTW_RODFT10}, std::pair{cp::R2RKind::dct1, FFTW_REDFT00},
                                 std::pair{cp::R2RKind::dct4, FFTW_REDFT11}}) {
    fftwf_plan_with_nthreads(threads);
    const int len = static_cast<int>(n);
    const fftwf_r2r_kind k = fftw_kind;
    fftwf_plan raw = fftwf_plan_many_r2r(1, &len, static_cast<int>(batch), in.data(), nullptr, 1, len, out.data(),
                                         nullptr, 1, len, &k, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
    if (raw == nullptr) {
      std::fprintf(stderr, "FFTW could not plan the baseline\n");
      std::exit(1);
    }
    cp::RealTransform rt(x, {.axes = {1}, .kinds = {kind}, .execution = cp::Execution::cpu(threads)});
    rt.plan();
    const auto [us, raw_us] =
        alternating_us([&] { rt.execute({.out = y}); }, [&] { fftwf_execute_r2r(raw, in.data(), out.data()); });
    fftwf_destroy_plan(raw);
    std::printf("  %-5s cuplan %10.1f us   fftwf_execute_r2r %10.1f us   ratio %.3f\n",
                std::string(cp::to_string(kind)).c_str(), us, raw_us, us / raw_us);
    csv.row("b", what, std::string(cp::to_string(kind)), us, "us", "fftwf_execute_r2r", raw_us);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options options = bench::parse_options(argc, argv);
  const bool quick = options.quick;
  bench::Csv csv(options.csv, "r2r");
  try {
    std::printf("cuplan real-to-real benchmarks%s\n", quick ? " (--quick: small sizes, few repetitions)" : "");
    if (cp::cuda_available()) {
      cudaDeviceProp prop{};
      BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
      std::printf("(a) GPU: %s\n", prop.name);
      cp::Stream s;
      const int reps = quick ? 5 : 20;
      using K = cp::R2RKind;
      const std::vector<K> last_axis{K::dct2, K::dct3, K::dst2, K::dct1, K::dct4};
      const long long big = quick ? 2048 : 16384, small = quick ? 1024 : 4096;
      gpu_case({small, big}, {1}, last_axis, reps, s, csv);
      gpu_case({big, small}, {1}, last_axis, reps, s, csv);
      const long long cube = quick ? 128 : 512;
      gpu_case({cube, cube, cube}, {0, 1, 2}, {K::dct2}, reps, s, csv);
    } else {
      std::printf("no CUDA device: GPU benchmark (a) skipped\n");
    }
    cpu_case(quick, csv);
    return 0;
  } catch (const cp::Error& e) {
    std::fprintf(stderr, "cuplan error: %s\n", e.what());
    return 1;
  }
}
