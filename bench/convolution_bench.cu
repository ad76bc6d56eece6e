// SPDX-License-Identifier: Apache-2.0
// Convolution (docs/convolution.md): every figure is GPU time (CUDA events), the median of 21 runs after 3 warm-up
// runs, on random data, all rows of one shape in the same run.
//   For c64 and for real f32 rows at [4096, 16384], [16384, 4096], [65536, 1024] and [262144, 256], a circular
//   convolution along axis 1 with one full-length filter (its spectrum computed once, at plan):
//     plain     one raw cuFFT forward transform of the operand (the traffic bound of a one-pass kernel)
//     raw sep.  raw cuFFT forward + a product kernel + raw cuFFT inverse, in place (the separate passes, written
//               by hand)
//     separate  Convolution, route separate (pad, forward, product, inverse, crop)
//     fused     Convolution, route fused (one cuFFTDx kernel); absent without MathDx
//   and the ratios raw sep./fused and fused/plain. The fused and separate results are compared (relative difference).
//   c64 2D [8192, 8192] with a full-size filter: separate against fused (cuFFT on axis 0, the fused kernel on 1).
//   CPU: fftconvolve (full mode, 4096 real signals of 8192 samples, a 1025-tap kernel) against FFTW forward +
//   product + inverse by hand on the same padded length (host time).
// Usage: convolution_bench [--quick]. GPU rows are skipped (and said so) without a GPU.

#include <cuda_runtime_api.h>
#include <cufft.h>
#include <fftw3.h>

#include <chrono>
#include <complex>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cuplan/cuplan.hpp>

#include "support/bench_check.hpp"
#include "support/fft_timing.hpp"

namespace cp = cuplan;

namespace {

constexpr int kWarmup = 3;

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_same_v<T, float>)
      x = u(rng);
    else
      x = {u(rng), u(rng)};
  }
  return v;
}

__global__ void multiply_rows(float2* spectra, const float2* filter, long long total, long long n, float scale) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float2 x = spectra[i], h = filter[i % n];
    spectra[i] = {(x.x * h.x - x.y * h.y) * scale, (x.x * h.y + x.y * h.x) * scale};
  }
}

double relative_difference(const cp::Tensor& a, const cp::Tensor& b) {
  const cp::Tensor ha = a.to(cp::Device::cpu()), hb = b.to(cp::Device::cpu());
  const std::size_t values = static_cast<std::size_t>(ha.numel()) * (ha.dtype().is_complex() ? 2 : 1);
  const auto* x = static_cast<const float*>(ha.data());
  const auto* y = static_cast<const float*>(hb.data());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < values; ++i) {
    num += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    den += double(y[i]) * y[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

void gpu_rows(bool real, long long rows, long long n, int reps, cp::StreamRef s) {
  const cudaStream_t stream = s.native();
  const long long spectrum = real ? n / 2 + 1 : n;
  const cp::DType dtype = real ? cp::f32 : cp::c64;
  cp::Tensor x = cp::Tensor::empty({rows, n}, dtype, cp::Device::cuda(0), s);
  cp::Tensor k = cp::Tensor::empty({1, n}, dtype, cp::Device::cuda(0), s);
  if (real) {
    const auto hx = random_values<float>(static_cast<std::size_t>(rows * n), 1);
    const auto hk = random_values<float>(static_cast<std::size_t>(n), 2);
    cp::copy(cp::TensorView(hx.data(), {rows, n}), x.view(), s);
    cp::copy(cp::TensorView(hk.data(), {1, n}), k.view(), s);
  } else {
    const auto hx = random_values<std::complex<float>>(static_cast<std::size_t>(rows * n), 1);
    const auto hk = random_values<std::complex<float>>(static_cast<std::size_t>(n), 2);
    cp::copy(cp::TensorView(hx.data(), {rows, n}), x.view(), s);
    cp::copy(cp::TensorView(hk.data(), {1, n}), k.view(), s);
  }

  // Raw cuFFT: one forward transform, and forward + product + inverse in place.
  cufftHandle forward, inverse;
  int length = static_cast<int>(n);
  BENCH_CUFFT_CHECK(cufftPlanMany(&forward, 1, &length, nullptr, 1, 0, nullptr, 1, 0, real ? CUFFT_R2C : CUFFT_C2C,
                                  static_cast<int>(rows)));
  BENCH_CUFFT_CHECK(cufftPlanMany(&inverse, 1, &length, nullptr, 1, 0, nullptr, 1, 0, real ? CUFFT_C2R : CUFFT_C2C,
                                  static_cast<int>(rows)));
  BENCH_CUFFT_CHECK(cufftSetStream(forward, stream));
  BENCH_CUFFT_CHECK(cufftSetStream(inverse, stream));
  cp::Tensor spectra = cp::Tensor::empty({rows, spectrum}, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor filter = cp::Tensor::empty({spectrum}, cp::c64, cp::Device::cuda(0), s);
  BENCH_CUDA_CHECK(cudaMemsetAsync(filter.data(), 0, static_cast<std::size_t>(spectrum) * 8, stream));
  cp::Tensor real_out = cp::Tensor::empty({rows, n}, cp::f32, cp::Device::cuda(0), s);
  const auto plain_forward = [&] {
    if (real)
      BENCH_CUFFT_CHECK(
          cufftExecR2C(forward, static_cast<float*>(x.data()), static_cast<cufftComplex*>(spectra.data())));
    else
      BENCH_CUFFT_CHECK(cufftExecC2C(forward, static_cast<cufftComplex*>(x.data()),
                                     static_cast<cufftComplex*>(spectra.data()), CUFFT_FORWARD));
  };
  const double plain = bench::gpu_median_ms(stream, kWarmup, reps, plain_forward);
  const long long total = rows * spectrum;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((total + 255) / 256, 65535LL * 8));
  const double raw_separate = bench::gpu_median_ms(stream, kWarmup, reps, [&] {
    plain_forward();
    multiply_rows<<<blocks, 256, 0, stream>>>(static_cast<float2*>(spectra.data()),
                                              static_cast<const float2*>(filter.data()), total, spectrum,
                                              1.0f / static_cast<float>(n));
    BENCH_CUDA_CHECK(cudaGetLastError());
    if (real)
      BENCH_CUFFT_CHECK(
          cufftExecC2R(inverse, static_cast<cufftComplex*>(spectra.data()), static_cast<float*>(real_out.data())));
    else
      BENCH_CUFFT_CHECK(cufftExecC2C(inverse, static_cast<cufftComplex*>(spectra.data()),
                                     static_cast<cufftComplex*>(spectra.data()), CUFFT_INVERSE));
  });
  BENCH_CUFFT_CHECK(cufftDestroy(forward));
  BENCH_CUFFT_CHECK(cufftDestroy(inverse));
  spectra = cp::Tensor{};
  real_out = cp::Tensor{};

  const cp::ConvolutionOptions base{.mode = cp::ConvolutionMode::circular, .stream = s};
  cp::ConvolutionOptions separate_options = base;
  separate_options.route = cp::ConvolutionRoute::separate;
  cp::Convolution separate(x, k, separate_options);
  separate.plan();
  cp::Tensor out_separate = cp::Tensor::empty({rows, n}, dtype, cp::Device::cuda(0), s);
  const double separate_ms =
      bench::gpu_median_ms(stream, kWarmup, reps, [&] { separate.execute({.out = out_separate.view()}); });
  separate.free();

  double fused_ms = 0, difference = 0;
  std::string fused_note;
  try {
    cp::ConvolutionOptions fused_options = base;
    fused_options.route = cp::ConvolutionRoute::fused;
    cp::Convolution fused(x, k, fused_options);
    fused.plan();
    cp::Tensor out_fused = cp::Tensor::empty({rows, n}, dtype, cp::Device::cuda(0), s);
    fused_ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] { fused.execute({.out = out_fused.view()}); });
    s.synchronize();
    difference = relative_difference(out_fused, out_separate);
  } catch (const cp::NotSupported& e) {
    fused_note = e.what();
  }
  std::printf("%-5s [%7lld, %5lld]  plain %8.3f  raw sep. %8.3f  separate %8.3f  ", real ? "f32" : "c64", rows, n,
              plain, raw_separate, separate_ms);
  if (fused_note.empty())
    std::printf("fused %8.3f ms  raw sep./fused %5.2fx  fused/plain %5.2fx  |fused - separate| %.1e\n", fused_ms,
                raw_separate / fused_ms, fused_ms / plain, difference);
  else
    std::printf("fused: %s\n", fused_note.c_str());
  std::fflush(stdout);
}

/// 2D c64 with a full-size filter (circular, the spectrum computed once): cuplan's separate route against its fused
/// one (cuFFT on axis 0, the fused kernel on axis 1).
void gpu_2d_row(long long n, int reps, cp::StreamRef s) {
  const cudaStream_t stream = s.native();
  cp::Tensor x = cp::Tensor::empty({n, n}, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor k = cp::Tensor::empty({n, n}, cp::c64, cp::Device::cuda(0), s);
  const auto hx = random_values<std::complex<float>>(static_cast<std::size_t>(n * n), 5);
  cp::copy(cp::TensorView(hx.data(), {n, n}), x.view(), s);
  cp::copy(cp::TensorView(hx.data(), {n, n}), k.view(), s);
  cp::Tensor out_separate = cp::Tensor::empty({n, n}, cp::c64, cp::Device::cuda(0), s);
  cp::Convolution separate(
      x, k, {.mode = cp::ConvolutionMode::circular, .route = cp::ConvolutionRoute::separate, .stream = s});
  separate.plan();
  const double separate_ms =
      bench::gpu_median_ms(stream, kWarmup, reps, [&] { separate.execute({.out = out_separate.view()}); });
  separate.free();
  try {
    cp::Convolution fused(x, k,
                          {.mode = cp::ConvolutionMode::circular, .route = cp::ConvolutionRoute::fused, .stream = s});
    fused.plan();
    cp::Tensor out_fused = cp::Tensor::empty({n, n}, cp::c64, cp::Device::cuda(0), s);
    const double fused_ms =
        bench::gpu_median_ms(stream, kWarmup, reps, [&] { fused.execute({.out = out_fused.view()}); });
    s.synchronize();
    std::printf(
        "c64 2D [%lld, %lld] full-size filter: separate %8.3f  fused %8.3f ms  separate/fused %5.2fx  "
        "|fused - separate| %.1e\n",
        n, n, separate_ms, fused_ms, separate_ms / fused_ms, relative_difference(out_fused, out_separate));
  } catch (const cp::NotSupported& e) {
    std::printf("c64 2D [%lld, %lld]: separate %8.3f ms; fused: %s\n", n, n, separate_ms, e.what());
  }
  std::fflush(stdout);
}

void cpu_row(bool quick) {
  const long long rows = quick ? 256 : 4096, n = 8192, taps = 1025;
  const long long length = 9216;  // the 2-3-5-7-smooth length >= n + taps - 1 = 9216 (fftconvolve picks the same)
  const auto hx = random_values<float>(static_cast<std::size_t>(rows * n), 3);
  const auto hk = random_values<float>(static_cast<std::size_t>(taps), 4);
  const cp::ConvolutionOptions options{.execution = cp::Execution::cpu()};
  const cp::TensorView xv(hx.data(), {rows, n}), kv(hk.data(), {1, taps});
  cp::Tensor out = cp::Tensor::empty({rows, n + taps - 1}, cp::f32);
  const double cuplan_ms =
      bench::host_median<std::milli>(1, quick ? 3 : 7, [&] { cp::fftconvolve(xv, kv, out.view(), options); });
  const cp::ConvolutionOptions one_thread{.execution = cp::Execution::cpu(1)};
  const double cuplan_one_ms =
      bench::host_median<std::milli>(1, quick ? 3 : 7, [&] { cp::fftconvolve(xv, kv, out.view(), one_thread); });

  // By hand: FFTW plans over the whole batch, pad, forward, product, inverse, crop.
  const long long spectrum = length / 2 + 1;
  std::vector<float> padded(static_cast<std::size_t>(rows * length));
  auto* spec = fftwf_alloc_complex(static_cast<std::size_t>(rows * spectrum));
  std::vector<std::complex<float>> filter(static_cast<std::size_t>(spectrum));
  int len = static_cast<int>(length);
  fftwf_plan forward = fftwf_plan_many_dft_r2c(1, &len, static_cast<int>(rows), padded.data(), nullptr, 1, len, spec,
                                               nullptr, 1, static_cast<int>(spectrum), FFTW_ESTIMATE);
  fftwf_plan inverse =
      fftwf_plan_many_dft_c2r(1, &len, static_cast<int>(rows), spec, nullptr, 1, static_cast<int>(spectrum),
                              padded.data(), nullptr, 1, len, FFTW_ESTIMATE);
  std::vector<float> by_hand(static_cast<std::size_t>(rows * (n + taps - 1)));
  const double hand_ms = bench::host_median<std::milli>(1, quick ? 3 : 7, [&] {
    std::fill(padded.begin(), padded.end(), 0.f);
    for (long long r = 0; r < rows; ++r) std::memcpy(&padded[r * length], &hx[r * n], n * sizeof(float));
    fftwf_execute(forward);
    auto* c = reinterpret_cast<std::complex<float>*>(spec);
    for (long long r = 0; r < rows; ++r)
      for (long long i = 0; i < spectrum; ++i) c[r * spectrum + i] *= filter[static_cast<std::size_t>(i)];
    fftwf_execute(inverse);
    for (long long r = 0; r < rows; ++r)
      std::memcpy(&by_hand[r * (n + taps - 1)], &padded[r * length], (n + taps - 1) * sizeof(float));
  });
  fftwf_destroy_plan(forward);
  fftwf_destroy_plan(inverse);
  fftwf_free(spec);
  std::printf(
      "CPU fftconvolve full f32 [%lld, %lld] * %lld taps: %.2f ms (1 thread: %.2f ms); FFTW by hand on 1 thread %.2f "
      "ms; ratios %.2fx, %.2fx\n",
      rows, n, taps, cuplan_ms, cuplan_one_ms, hand_ms, cuplan_ms / hand_ms, cuplan_one_ms / hand_ms);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) quick = quick || std::string(argv[i]) == "--quick";
  std::printf("cuplan %s, MathDx fused kernels: %s\n", CUPLAN_VERSION_STRING,
              CUPLAN_HAS_FUSED_FFT ? "built" : "absent");
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: the GPU rows are skipped\n");
  } else {
    cp::Stream stream;
    const int reps = quick ? 5 : 21;
    const long long shapes[][2] = {{4096, 16384}, {16384, 4096}, {65536, 1024}, {262144, 256}};
    for (bool real : {false, true})
      for (const auto& shape : shapes) gpu_rows(real, quick ? shape[0] / 16 : shape[0], shape[1], reps, stream);
    gpu_2d_row(quick ? 2048 : 8192, reps, stream);
  }
  cpu_row(quick);
  return 0;
}
