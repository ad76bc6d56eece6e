// SPDX-License-Identifier: Apache-2.0
// FFT benchmarks: every figure is a ratio to the raw library measured in the same run, on random data.
//   (a) GPU throughput of large batched C2C transforms and a 3-D 512^3: FFT::execute vs cufftExecC2C (CUDA events,
//       warm-up, median of the repetitions);
//   (b) host cost per call of FFT::execute for a small transform (n = 256) vs cufftExecC2C, with the GPU kept busy
//       so that only the host side is timed (steady_clock, median over rounds);
//   (c) the same for the function form fft();
//   (d) CPU: FFT::execute with Execution::cpu() vs fftwf_execute_dft of the same FFTW plan flags.
// Usage: fft_bench [--quick] [--csv PATH]. GPU parts are skipped (and said so) without a GPU; --csv also writes the
// figures as CSV (bench/support/bench_csv.hpp), one row per variant against its baseline.

#include <cuda_runtime_api.h>
#include <cufft.h>
#include <fftw3.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <cuplan/cuplan.hpp>

#include "support/bench_csv.hpp"
#include "support/fft_timing.hpp"

namespace cp = cuplan;
using cfloat = std::complex<float>;
using bench::gpu_median_ms;
using bench::host_us_per_call;

namespace {

#define BENCH_CUDA(expr) check(static_cast<int>(expr) == 0, #expr)
void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "benchmark setup failed: %s\n", what);
    std::exit(1);
  }
}

std::vector<cfloat> random_values(std::size_t n) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<cfloat> v(n);
  for (auto& x : v) x = {u(rng), u(rng)};
  return v;
}

void ratio_line(const char* what, double cuplan, double raw, const char* unit) {
  std::printf("  %-44s cuplan %10.4f %s   raw %10.4f %s   ratio cuplan/raw %.4f   diff %+.4f %s\n", what, cuplan, unit,
              raw, unit, cuplan / raw, cuplan - raw, unit);
}

void throughput_case(const char* name, std::vector<long long> dims, long long batch, int reps, cp::StreamRef s,
                     bench::Csv& csv) {
  long long n_total = batch;
  for (auto d : dims) n_total *= d;
  const auto host = random_values(static_cast<std::size_t>(n_total));
  cp::Shape shape;
  if (batch > 1) shape.push_back(batch);
  for (auto d : dims) shape.push_back(d);
  cp::Tensor x = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor y = cp::Tensor::empty(shape, cp::c64, cp::Device::cuda(0), s);
  cp::copy(cp::TensorView(host.data(), shape), x, s);

  cufftHandle raw;
  std::size_t work = 0;
  BENCH_CUDA(cufftCreate(&raw));
  std::vector<long long> n(dims);
  long long dist = 1;
  for (auto d : dims) dist *= d;
  BENCH_CUDA(cufftMakePlanMany64(raw, static_cast<int>(n.size()), n.data(), nullptr, 1, dist, nullptr, 1, dist,
                                 CUFFT_C2C, batch, &work));
  BENCH_CUDA(cufftSetStream(raw, s.native()));
  const double raw_ms = gpu_median_ms(s.native(), 3, reps, [&] {
    BENCH_CUDA(cufftExecC2C(raw, x.data<cufftComplex>(), y.data<cufftComplex>(), CUFFT_FORWARD));
  });
  BENCH_CUDA(cufftDestroy(raw));

  std::vector<int> axes;
  for (std::size_t i = 0; i < dims.size(); ++i) axes.push_back(static_cast<int>(shape.size() - dims.size() + i));
  cp::FFT f(x, {.axes = axes, .stream = s});
  f.plan(s);
  const double out_ms = gpu_median_ms(s.native(), 3, reps, [&] { f.execute({.stream = s, .out = y.view()}); });
  const double new_ms = gpu_median_ms(s.native(), 3, reps, [&] { (void)f.execute({.stream = s}); });
  std::printf("(a) %s: %s\n", name, f.describe().c_str());
  ratio_line("execute into out, GPU time", out_ms, raw_ms, "ms");
  ratio_line("execute with a new result, GPU time", new_ms, raw_ms, "ms");
  csv.row("a", name, "execute into out", out_ms, "ms", "cufftExecC2C", raw_ms);
  csv.row("a", name, "execute with a new result", new_ms, "ms", "cufftExecC2C", raw_ms);
}

void host_cost(bool quick, cp::StreamRef s, bench::Csv& csv) {
  const long long n = 256;
  const auto host = random_values(n);
  cp::Tensor x = cp::Tensor::empty({n}, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor y = cp::Tensor::empty({n}, cp::c64, cp::Device::cuda(0), s);
  cp::copy(cp::TensorView(host.data(), {n}), x, s);
  const int rounds = quick ? 5 : 50, calls = 200;  // 50 x 200 = 10000 calls; 200 stay under the launch queue depth

  cufftHandle raw;
  BENCH_CUDA(cufftPlan1d(&raw, static_cast<int>(n), CUFFT_C2C, 1));
  BENCH_CUDA(cufftSetStream(raw, s.native()));
  cp::FFT f(x, {.stream = s}), direct(x, {.stream = s, .graph_replay = false});
  f.plan(s);
  direct.plan(s);
  const std::vector<double> us = host_us_per_call(
      s.native(), rounds, calls,
      {[&] { BENCH_CUDA(cufftExecC2C(raw, x.data<cufftComplex>(), y.data<cufftComplex>(), CUFFT_FORWARD)); },
       [&] { f.execute({.stream = s, .out = y.view()}); }, [&] { (void)f.execute({.stream = s}); },
       [&] { cp::fft(x, y.view(), {.stream = s}); }, [&] { (void)cp::fft(x, {.stream = s}); },
       [&] { direct.execute({.stream = s, .out = y.view()}); }});
  BENCH_CUDA(cufftDestroy(raw));
  const double raw_us = us[0];
  std::printf("(b) host cost per call, C2C c64 n=256 batch 1, %d rounds x %d calls per variant, interleaved\n", rounds,
              calls);
  ratio_line("FFT::execute into out (graph replay)", us[1], raw_us, "us");
  ratio_line("FFT::execute into out, graph_replay = false", us[5], raw_us, "us");
  ratio_line("FFT::execute with a new result", us[2], raw_us, "us");
  std::printf("(c) function form, same transform\n");
  ratio_line("fft(x, out)", us[3], raw_us, "us");
  ratio_line("fft(x) with a new result", us[4], raw_us, "us");
  const std::string what = "C2C c64 n=256 batch 1";
  csv.row("b", what, "FFT::execute into out (graph replay)", us[1], "us", "cufftExecC2C", raw_us);
  csv.row("b", what, "FFT::execute into out, graph_replay = false", us[5], "us", "cufftExecC2C", raw_us);
  csv.row("b", what, "FFT::execute with a new result", us[2], "us", "cufftExecC2C", raw_us);
  csv.row("c", what, "fft(x, out)", us[3], "us", "cufftExecC2C", raw_us);
  csv.row("c", what, "fft(x) with a new result", us[4], "us", "cufftExecC2C", raw_us);
}

void cpu_case(bool quick, bench::Csv& csv) {
  const long long batch = quick ? 16 : 64, n = 4096;
  const int reps = quick ? 5 : 30;
  auto in = random_values(static_cast<std::size_t>(batch * n));
  std::vector<cfloat> out(in.size());
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  fftwf_init_threads();
  fftwf_plan_with_nthreads(threads);
  const int len = static_cast<int>(n);
  fftwf_plan raw = fftwf_plan_many_dft(1, &len, static_cast<int>(batch), reinterpret_cast<fftwf_complex*>(in.data()),
                                       nullptr, 1, len, reinterpret_cast<fftwf_complex*>(out.data()), nullptr, 1, len,
                                       FFTW_FORWARD, FFTW_ESTIMATE);
  auto time_us = [&](const std::function<void()>& run) { return bench::host_median<std::micro>(3, reps, run); };
  const double raw_us = time_us([&] {
    fftwf_execute_dft(raw, reinterpret_cast<fftwf_complex*>(in.data()), reinterpret_cast<fftwf_complex*>(out.data()));
  });
  fftwf_destroy_plan(raw);

  const cp::TensorView x(in.data(), {batch, n}), y(out.data(), {batch, n});
  cp::FFT f(x, {.axes = {1}, .execution = cp::Execution::cpu(threads)});
  f.plan();
  const double out_us = time_us([&] { f.execute({.out = y}); });
  const double new_us = time_us([&] { (void)f.execute(); });
  std::printf("(d) CPU, C2C c64 %lld x %lld, %d threads, FFTW_ESTIMATE: %s\n", batch, n, threads, f.describe().c_str());
  ratio_line("FFT::execute into out", out_us, raw_us, "us");
  ratio_line("FFT::execute with a new result", new_us, raw_us, "us");
  const std::string what =
      "CPU C2C c64 " + std::to_string(batch) + " x " + std::to_string(n) + ", " + std::to_string(threads) + " threads";
  csv.row("d", what, "FFT::execute into out", out_us, "us", "fftwf_execute_dft", raw_us);
  csv.row("d", what, "FFT::execute with a new result", new_us, "us", "fftwf_execute_dft", raw_us);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options options = bench::parse_options(argc, argv);
  const bool quick = options.quick;
  bench::Csv csv(options.csv, "fft");
  try {
    std::printf("cuplan FFT benchmarks%s\n", quick ? " (--quick: small sizes, few repetitions)" : "");
    if (cp::cuda_available()) {
      cudaDeviceProp prop{};
      BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
      std::printf("device: %s\n", prop.name);
      cp::Stream s;
      const int reps = quick ? 5 : 25;
      if (quick) {
        throughput_case("C2C c64 n=4096 x 1024", {4096}, 1024, reps, s, csv);
        throughput_case("C2C c64 n=1000 x 4096", {1000}, 4096, reps, s, csv);
        throughput_case("C2C c64 128^3", {128, 128, 128}, 1, reps, s, csv);
      } else {
        throughput_case("C2C c64 n=4096 x 16384", {4096}, 16384, reps, s, csv);
        throughput_case("C2C c64 n=1000 x 65536", {1000}, 65536, reps, s, csv);
        throughput_case("C2C c64 512^3", {512, 512, 512}, 1, reps, s, csv);
      }
      host_cost(quick, s, csv);
    } else {
      std::printf("no CUDA device: GPU benchmarks (a)-(c) skipped\n");
    }
    cpu_case(quick, csv);
    return 0;
  } catch (const cp::Error& e) {
    std::fprintf(stderr, "cuplan error: %s\n", e.what());
    return 1;
  }
}
