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
//   The same for c128 and real f64 at [65536, 1024].
//   c64 and real f32 2D [8192, 8192] and 3D [512, 512, 512] with a full-size filter: separate against fused (cuFFT
//   on the inner axes, the column kernel on the first).
//   fftconvolve's full mode on 4096 real f32 signals of 8192 samples with a 1025-tap kernel: the separate passes by
//   hand at length 9216 (pad, cuFFT R2C, product, cuFFT C2R, crop) against cuplan's separate, automatic and fused
//   routes (with the 1D rows).
//   CPU: fftconvolve (full mode, 4096 real signals of 8192 samples, a 1025-tap kernel) against FFTW forward +
//   product + inverse by hand on the same padded length (host time).
// Usage: convolution_bench [--quick] [--rows all|1d|nd|tiles|cpu] [--nodes]. --rows runs one group only: the 1D rows,
// the 2D and 3D rows, the batched small 2D and 3D rows (whole-transform tiles), or the CPU row (default all), e.g. to
// profile the 2D and 3D routes alone (nsys). --nodes: after each GPU row, one execute of each cuplan route captured
// into a CUDA graph, its kernels named and timed one by one (support/graph_nodes.hpp), where the time of a route goes
// without a profiler. GPU rows are skipped (and said so) without a GPU.

#include <cuda_runtime_api.h>
#include <cufft.h>
#include <fftw3.h>

#include <chrono>
#include <complex>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <cuplan/cuplan.hpp>

#include "support/bench_check.hpp"
#include "support/fft_timing.hpp"
#include "support/graph_nodes.hpp"

namespace cp = cuplan;

namespace {

constexpr int kWarmup = 3;
bool print_nodes = false;  // --nodes

/// With --nodes: one `execute` captured into a graph, each kernel timed alone (`bytes`: the operand's size). The
/// nodes run alone over the route's own buffers, an in-place product or fused kernel again and again on what the
/// last run left, so the result is computed once more afterwards: the routes' results are compared after this.
void nodes_of(const char* what, cudaStream_t stream, int reps, double bytes, const std::function<void()>& execute) {
  if (!print_nodes) return;
  std::printf("  %s, one execute:\n", what);
  cudaGraph_t graph = bench::capture_call(stream, execute);
  if (graph == nullptr) return;
  bench::print_kernel_nodes(graph, stream, reps, bytes);
  BENCH_CUDA_CHECK(cudaGraphDestroy(graph));
  execute();
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::fflush(stdout);
}

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>)
      x = static_cast<T>(u(rng));
    else
      x = {static_cast<typename T::value_type>(u(rng)), static_cast<typename T::value_type>(u(rng))};
  }
  return v;
}

// A row of complex spectra times one filter row, scaled: Complex is float2 or double2.
template <class Complex, class Real>
__global__ void multiply_rows(Complex* spectra, const Complex* filter, long long total, long long n, Real scale) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const Complex x = spectra[i], h = filter[i % n];
    spectra[i] = {(x.x * h.x - x.y * h.y) * scale, (x.x * h.y + x.y * h.x) * scale};
  }
}

template <class Real>
double relative_difference_as(const cp::Tensor& ha, const cp::Tensor& hb) {
  const std::size_t values = static_cast<std::size_t>(ha.numel()) * (ha.dtype().is_complex() ? 2 : 1);
  const auto* x = static_cast<const Real*>(ha.data());
  const auto* y = static_cast<const Real*>(hb.data());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < values; ++i) {
    num += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    den += double(y[i]) * y[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

double relative_difference(const cp::Tensor& a, const cp::Tensor& b) {
  const cp::Tensor ha = a.to(cp::Device::cpu()), hb = b.to(cp::Device::cpu());
  const bool single = ha.dtype() == cp::f32 || ha.dtype() == cp::c64;
  return single ? relative_difference_as<float>(ha, hb) : relative_difference_as<double>(ha, hb);
}

// The types and cuFFT calls of one precision.
template <class Real>
struct Precision;
template <>
struct Precision<float> {
  using Complex = float2;
  static constexpr const char* real_name = "f32";
  static constexpr const char* complex_name = "c64";
  static cp::DType real_dtype() { return cp::f32; }
  static cp::DType complex_dtype() { return cp::c64; }
  static constexpr cufftType r2c = CUFFT_R2C, c2r = CUFFT_C2R, c2c = CUFFT_C2C;
  static cufftResult forward(cufftHandle plan, bool real, void* in, void* out) {
    return real ? cufftExecR2C(plan, static_cast<cufftReal*>(in), static_cast<cufftComplex*>(out))
                : cufftExecC2C(plan, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out), CUFFT_FORWARD);
  }
  static cufftResult inverse(cufftHandle plan, bool real, void* in, void* out) {
    return real ? cufftExecC2R(plan, static_cast<cufftComplex*>(in), static_cast<cufftReal*>(out))
                : cufftExecC2C(plan, static_cast<cufftComplex*>(in), static_cast<cufftComplex*>(out), CUFFT_INVERSE);
  }
};
template <>
struct Precision<double> {
  using Complex = double2;
  static constexpr const char* real_name = "f64";
  static constexpr const char* complex_name = "c128";
  static cp::DType real_dtype() { return cp::f64; }
  static cp::DType complex_dtype() { return cp::c128; }
  static constexpr cufftType r2c = CUFFT_D2Z, c2r = CUFFT_Z2D, c2c = CUFFT_Z2Z;
  static cufftResult forward(cufftHandle plan, bool real, void* in, void* out) {
    return real ? cufftExecD2Z(plan, static_cast<cufftDoubleReal*>(in), static_cast<cufftDoubleComplex*>(out))
                : cufftExecZ2Z(plan, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleComplex*>(out),
                               CUFFT_FORWARD);
  }
  static cufftResult inverse(cufftHandle plan, bool real, void* in, void* out) {
    return real ? cufftExecZ2D(plan, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleReal*>(out))
                : cufftExecZ2Z(plan, static_cast<cufftDoubleComplex*>(in), static_cast<cufftDoubleComplex*>(out),
                               CUFFT_INVERSE);
  }
};

template <class Real>
void gpu_rows(bool real, long long rows, long long n, int reps, cp::StreamRef s) {
  using P = Precision<Real>;
  using Complex = typename P::Complex;
  const cudaStream_t stream = s.native();
  const long long spectrum = real ? n / 2 + 1 : n;
  const cp::DType dtype = real ? P::real_dtype() : P::complex_dtype();
  cp::Tensor x = cp::Tensor::empty({rows, n}, dtype, cp::Device::cuda(0), s);
  cp::Tensor k = cp::Tensor::empty({1, n}, dtype, cp::Device::cuda(0), s);
  if (real) {
    const auto hx = random_values<Real>(static_cast<std::size_t>(rows * n), 1);
    const auto hk = random_values<Real>(static_cast<std::size_t>(n), 2);
    cp::copy(cp::TensorView(hx.data(), {rows, n}), x.view(), s);
    cp::copy(cp::TensorView(hk.data(), {1, n}), k.view(), s);
  } else {
    const auto hx = random_values<std::complex<Real>>(static_cast<std::size_t>(rows * n), 1);
    const auto hk = random_values<std::complex<Real>>(static_cast<std::size_t>(n), 2);
    cp::copy(cp::TensorView(hx.data(), {rows, n}), x.view(), s);
    cp::copy(cp::TensorView(hk.data(), {1, n}), k.view(), s);
  }

  // Raw cuFFT: one forward transform, and forward + product + inverse in place.
  cufftHandle forward, inverse;
  int length = static_cast<int>(n);
  BENCH_CUFFT_CHECK(cufftPlanMany(&forward, 1, &length, nullptr, 1, 0, nullptr, 1, 0, real ? P::r2c : P::c2c,
                                  static_cast<int>(rows)));
  BENCH_CUFFT_CHECK(cufftPlanMany(&inverse, 1, &length, nullptr, 1, 0, nullptr, 1, 0, real ? P::c2r : P::c2c,
                                  static_cast<int>(rows)));
  BENCH_CUFFT_CHECK(cufftSetStream(forward, stream));
  BENCH_CUFFT_CHECK(cufftSetStream(inverse, stream));
  cp::Tensor spectra = cp::Tensor::empty({rows, spectrum}, P::complex_dtype(), cp::Device::cuda(0), s);
  cp::Tensor filter = cp::Tensor::empty({spectrum}, P::complex_dtype(), cp::Device::cuda(0), s);
  BENCH_CUDA_CHECK(cudaMemsetAsync(filter.data(), 0, static_cast<std::size_t>(spectrum) * sizeof(Complex), stream));
  cp::Tensor real_out = cp::Tensor::empty({rows, n}, P::real_dtype(), cp::Device::cuda(0), s);
  const auto plain_forward = [&] { BENCH_CUFFT_CHECK(P::forward(forward, real, x.data(), spectra.data())); };
  const double plain = bench::gpu_median_ms(stream, kWarmup, reps, plain_forward);
  const long long total = rows * spectrum;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((total + 255) / 256, 65535LL * 8));
  const double raw_separate = bench::gpu_median_ms(stream, kWarmup, reps, [&] {
    plain_forward();
    multiply_rows<<<blocks, 256, 0, stream>>>(static_cast<Complex*>(spectra.data()),
                                              static_cast<const Complex*>(filter.data()), total, spectrum,
                                              Real(1) / static_cast<Real>(n));
    BENCH_CUDA_CHECK(cudaGetLastError());
    BENCH_CUFFT_CHECK(P::inverse(inverse, real, spectra.data(), real ? real_out.data() : spectra.data()));
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
  const double bytes = static_cast<double>(rows * n) * static_cast<double>(dtype.size());
  nodes_of("separate", stream, reps, bytes, [&] { separate.execute({.out = out_separate.view()}); });
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
    nodes_of("fused", stream, reps, bytes, [&] { fused.execute({.out = out_fused.view()}); });
    s.synchronize();
    difference = relative_difference(out_fused, out_separate);
  } catch (const cp::NotSupported& e) {
    fused_note = e.what();
  }
  std::printf("%-5s [%7lld, %5lld]  plain %8.3f  raw sep. %8.3f  separate %8.3f  ",
              real ? P::real_name : P::complex_name, rows, n, plain, raw_separate, separate_ms);
  if (fused_note.empty())
    std::printf("fused %8.3f ms  raw sep./fused %5.2fx  fused/plain %5.2fx  |fused - separate| %.1e\n", fused_ms,
                raw_separate / fused_ms, fused_ms / plain, difference);
  else
    std::printf("fused: %s\n", fused_note.c_str());
  std::fflush(stdout);
}

/// 2D or 3D c64 or real f32 with a full-size filter (circular, the spectrum computed once): cuplan's separate route
/// against its fused one (cuFFT on the inner axes, the column kernel on the first).
template <class T>
void gpu_nd_row(const cp::Shape& shape, int reps, cp::StreamRef s) {
  constexpr cp::DType dtype = std::is_same_v<T, float> ? cp::f32 : cp::c64;
  const std::string name(dtype.name());
  const cudaStream_t stream = s.native();
  const std::size_t count = static_cast<std::size_t>(cp::checked_numel(shape));
  std::string text = std::to_string(shape.size()) + "D [";
  for (int i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  text += "]";
  cp::Tensor x = cp::Tensor::empty(shape, dtype, cp::Device::cuda(0), s);
  cp::Tensor k = cp::Tensor::empty(shape, dtype, cp::Device::cuda(0), s);
  {
    const auto hx = random_values<T>(count, 5);
    cp::copy(cp::TensorView(hx.data(), shape), x.view(), s);
    const auto hk = random_values<T>(count, 6);
    cp::copy(cp::TensorView(hk.data(), shape), k.view(), s);
    s.synchronize();  // the host vectors go out of scope
  }
  cp::Tensor out_separate = cp::Tensor::empty(shape, dtype, cp::Device::cuda(0), s);
  cp::Convolution separate(
      x, k, {.mode = cp::ConvolutionMode::circular, .route = cp::ConvolutionRoute::separate, .stream = s});
  separate.plan();
  const double separate_ms =
      bench::gpu_median_ms(stream, kWarmup, reps, [&] { separate.execute({.out = out_separate.view()}); });
  const double bytes = static_cast<double>(count) * static_cast<double>(dtype.size());
  nodes_of(("separate, " + name + " " + text).c_str(), stream, reps, bytes,
           [&] { separate.execute({.out = out_separate.view()}); });
  separate.free();
  try {
    cp::Convolution fused(x, k,
                          {.mode = cp::ConvolutionMode::circular, .route = cp::ConvolutionRoute::fused, .stream = s});
    fused.plan();
    cp::Tensor out_fused = cp::Tensor::empty(shape, dtype, cp::Device::cuda(0), s);
    const double fused_ms =
        bench::gpu_median_ms(stream, kWarmup, reps, [&] { fused.execute({.out = out_fused.view()}); });
    nodes_of(("fused, " + name + " " + text).c_str(), stream, reps, bytes,
             [&] { fused.execute({.out = out_fused.view()}); });
    s.synchronize();
    std::printf(
        "%s %s full-size filter: separate %8.3f  fused %8.3f ms  separate/fused %5.2fx  "
        "|fused - separate| %.1e\n",
        name.c_str(), text.c_str(), separate_ms, fused_ms, separate_ms / fused_ms,
        relative_difference(out_fused, out_separate));
  } catch (const cp::NotSupported& e) {
    std::printf("%s %s: separate %8.3f ms; fused: %s\n", name.c_str(), text.c_str(), separate_ms, e.what());
  }
  std::fflush(stdout);
}

/// Batched small 2D and 3D convolutions whose FFT shape is a whole-transform tile: `shape` is [batch, ...], the kernel
/// `kernel` [1, ...] (one filter for every entry). cuplan's separate route (cuFFT forward, product, cuFFT inverse, and
/// the pad and crop passes in the linear modes), its automatic route (the column route where it applies) and the
/// fused route (the whole-transform kernel, one block an entry).
template <class T>
void gpu_tile_row(const cp::Shape& shape, const cp::Shape& kernel, cp::ConvolutionMode mode, int reps,
                  cp::StreamRef s) {
  constexpr cp::DType dtype = std::is_same_v<T, float> ? cp::f32 : cp::c64;
  const std::string name(dtype.name());
  const cudaStream_t stream = s.native();
  const auto text_of = [](const cp::Shape& sh) {
    std::string t = "[";
    for (int i = 0; i < sh.size(); ++i) t += (i ? ", " : "") + std::to_string(sh[i]);
    return t + "]";
  };
  const std::string text = text_of(shape) + " * " + text_of(kernel) + " " + std::string(cp::to_string(mode));
  const auto count = static_cast<std::size_t>(cp::checked_numel(shape));
  const auto kernel_count = static_cast<std::size_t>(cp::checked_numel(kernel));
  cp::Tensor x = cp::Tensor::empty(shape, dtype, cp::Device::cuda(0), s);
  cp::Tensor k = cp::Tensor::empty(kernel, dtype, cp::Device::cuda(0), s);
  {
    const auto hx = random_values<T>(count, 7);
    cp::copy(cp::TensorView(hx.data(), shape), x.view(), s);
    const auto hk = random_values<T>(kernel_count, 8);
    cp::copy(cp::TensorView(hk.data(), kernel), k.view(), s);
    s.synchronize();  // the host vectors go out of scope
  }
  std::vector<int> axes;
  for (int a = 1; a < shape.size(); ++a) axes.push_back(a);
  const auto time_route = [&](cp::ConvolutionRoute route, cp::Tensor& out, std::string& described) {
    cp::Convolution conv(x, k, {.axes = axes, .mode = mode, .route = route, .stream = s});
    conv.plan();
    described = conv.describe();
    out = cp::Tensor::empty(conv.result_shape(), conv.result_dtype(), cp::Device::cuda(0), s);
    const double ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] { conv.execute({.out = out.view()}); });
    s.synchronize();
    return ms;
  };
  cp::Tensor out_separate, out_automatic, out_fused;
  std::string described;
  const double separate_ms = time_route(cp::ConvolutionRoute::separate, out_separate, described);
  const double automatic_ms = time_route(cp::ConvolutionRoute::automatic, out_automatic, described);
  const bool automatic_columns = described.find("inner axes") != std::string::npos;
  try {
    const double fused_ms = time_route(cp::ConvolutionRoute::fused, out_fused, described);
    const bool whole = described.find("whole") != std::string::npos;
    std::printf(
        "%s %s: separate %7.3f  automatic (%s) %7.3f  fused (%s) %7.3f ms  separate/fused %5.2fx  "
        "automatic/fused %5.2fx  |fused - separate| %.1e\n",
        name.c_str(), text.c_str(), separate_ms, automatic_columns ? "columns" : "separate", automatic_ms,
        whole ? "whole" : "columns", fused_ms, separate_ms / fused_ms, automatic_ms / fused_ms,
        relative_difference(out_fused, out_separate));
  } catch (const cp::NotSupported& e) {
    std::printf("%s %s: separate %7.3f ms; fused: %s\n", name.c_str(), text.c_str(), separate_ms, e.what());
  }
  std::fflush(stdout);
}

/// The issue's `full` row on the GPU: 4096 real f32 signals of 8192 samples with a 1025-tap kernel (result 9216
/// samples a row). raw sep.: by hand, as scipy.signal.fftconvolve would, at the 2-3-5-7-smooth length 9216: the pad
/// (2D copy, the tail zeroed), cuFFT R2C, the product, cuFFT C2R, the crop (2D copy). cuplan: the separate and fused
/// routes and the automatic one (automatic runs one FFT of 16384 a row, fused the overlap-save segments its cost model
/// picks; each route's FFT length printed).
void gpu_full_row(bool quick, int reps, cp::StreamRef s) {
  using Complex = float2;
  const cudaStream_t stream = s.native();
  const long long rows = quick ? 256 : 4096, n = 8192, taps = 1025, out_n = n + taps - 1;
  const long long length = 9216, spectrum = length / 2 + 1;
  cp::Tensor x = cp::Tensor::empty({rows, n}, cp::f32, cp::Device::cuda(0), s);
  cp::Tensor k = cp::Tensor::empty({1, taps}, cp::f32, cp::Device::cuda(0), s);
  {
    const auto hx = random_values<float>(static_cast<std::size_t>(rows * n), 7);
    const auto hk = random_values<float>(static_cast<std::size_t>(taps), 8);
    cp::copy(cp::TensorView(hx.data(), {rows, n}), x.view(), s);
    cp::copy(cp::TensorView(hk.data(), {1, taps}), k.view(), s);
    s.synchronize();  // the host vectors go out of scope
  }

  cufftHandle forward, inverse;
  int len = static_cast<int>(length);
  BENCH_CUFFT_CHECK(cufftPlanMany(&forward, 1, &len, nullptr, 1, 0, nullptr, 1, 0, CUFFT_R2C, static_cast<int>(rows)));
  BENCH_CUFFT_CHECK(cufftPlanMany(&inverse, 1, &len, nullptr, 1, 0, nullptr, 1, 0, CUFFT_C2R, static_cast<int>(rows)));
  BENCH_CUFFT_CHECK(cufftSetStream(forward, stream));
  BENCH_CUFFT_CHECK(cufftSetStream(inverse, stream));
  cp::Tensor padded = cp::Tensor::empty({rows, length}, cp::f32, cp::Device::cuda(0), s);
  cp::Tensor spectra = cp::Tensor::empty({rows, spectrum}, cp::c64, cp::Device::cuda(0), s);
  cp::Tensor filter = cp::Tensor::empty({spectrum}, cp::c64, cp::Device::cuda(0), s);
  BENCH_CUDA_CHECK(cudaMemsetAsync(filter.data(), 0, static_cast<std::size_t>(spectrum) * sizeof(Complex), stream));
  cp::Tensor raw_out = cp::Tensor::empty({rows, out_n}, cp::f32, cp::Device::cuda(0), s);
  const auto row_bytes = [](long long values) { return static_cast<std::size_t>(values) * sizeof(float); };
  const long long total = rows * spectrum;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((total + 255) / 256, 65535LL * 8));
  const double raw_separate = bench::gpu_median_ms(stream, kWarmup, reps, [&] {
    auto* pad = static_cast<float*>(padded.data());
    BENCH_CUDA_CHECK(cudaMemset2DAsync(pad + n, row_bytes(length), 0, row_bytes(length - n),
                                       static_cast<std::size_t>(rows), stream));
    BENCH_CUDA_CHECK(cudaMemcpy2DAsync(pad, row_bytes(length), x.data(), row_bytes(n), row_bytes(n),
                                       static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice, stream));
    BENCH_CUFFT_CHECK(cufftExecR2C(forward, pad, static_cast<cufftComplex*>(spectra.data())));
    multiply_rows<<<blocks, 256, 0, stream>>>(static_cast<Complex*>(spectra.data()),
                                              static_cast<const Complex*>(filter.data()), total, spectrum,
                                              1.0f / static_cast<float>(length));
    BENCH_CUDA_CHECK(cudaGetLastError());
    BENCH_CUFFT_CHECK(cufftExecC2R(inverse, static_cast<cufftComplex*>(spectra.data()), pad));
    BENCH_CUDA_CHECK(cudaMemcpy2DAsync(raw_out.data(), row_bytes(out_n), pad, row_bytes(length), row_bytes(out_n),
                                       static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice, stream));
  });
  BENCH_CUFFT_CHECK(cufftDestroy(forward));
  BENCH_CUFFT_CHECK(cufftDestroy(inverse));
  padded = spectra = raw_out = cp::Tensor{};

  const auto time_route = [&](cp::ConvolutionRoute route, cp::Tensor& out, std::string& description) {
    cp::Convolution conv(x, k, {.mode = cp::ConvolutionMode::full, .route = route, .stream = s});
    conv.plan();
    description = std::string(cp::to_string(conv.route())) + ", FFT length " + std::to_string(conv.fft_lengths()[0]);
    if (conv.describe().find("overlap-save") != std::string::npos) description += ", overlap-save";
    out = cp::Tensor::empty({rows, out_n}, cp::f32, cp::Device::cuda(0), s);
    const double ms = bench::gpu_median_ms(stream, kWarmup, reps, [&] { conv.execute({.out = out.view()}); });
    nodes_of(description.c_str(), stream, reps, static_cast<double>(rows * n) * 4.0,
             [&] { conv.execute({.out = out.view()}); });
    s.synchronize();
    return ms;
  };
  cp::Tensor out_separate, out_fused, out_automatic;
  std::string separate_text, fused_text, automatic_text;
  const double separate_ms = time_route(cp::ConvolutionRoute::separate, out_separate, separate_text);
  const double automatic_ms = time_route(cp::ConvolutionRoute::automatic, out_automatic, automatic_text);
  std::printf(
      "f32 full [%lld, %lld] * %lld taps: raw sep. (length %lld) %8.3f  separate (%s) %8.3f  automatic (%s) "
      "%8.3f ms  raw sep./automatic %5.2fx  |automatic - separate| %.1e\n",
      rows, n, taps, length, raw_separate, separate_text.c_str(), separate_ms, automatic_text.c_str(), automatic_ms,
      raw_separate / automatic_ms, relative_difference(out_automatic, out_separate));
  try {
    const double fused_ms = time_route(cp::ConvolutionRoute::fused, out_fused, fused_text);
    std::printf(
        "f32 full [%lld, %lld] * %lld taps: fused (%s) %8.3f ms  raw sep./fused %5.2fx  separate/fused %5.2fx  "
        "|fused - separate| %.1e\n",
        rows, n, taps, fused_text.c_str(), fused_ms, raw_separate / fused_ms, separate_ms / fused_ms,
        relative_difference(out_fused, out_separate));
  } catch (const cp::NotSupported& e) {
    std::printf("f32 full [%lld, %lld] * %lld taps: fused: %s\n", rows, n, taps, e.what());
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
  std::string rows = "all";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--nodes") {
      print_nodes = true;
    } else if (const std::string next = i + 1 < argc ? argv[i + 1] : "";
               arg == "--rows" && (next == "all" || next == "1d" || next == "nd" || next == "tiles" || next == "cpu")) {
      rows = next;
      ++i;
    } else {
      std::fprintf(stderr, "usage: convolution_bench [--quick] [--rows all|1d|nd|tiles|cpu] [--nodes] (got '%s')\n",
                   arg.c_str());
      return 2;
    }
  }
  const bool all = rows == "all";
  std::printf("cuplan %s, MathDx fused kernels: %s\n", CUPLAN_VERSION_STRING,
              CUPLAN_HAS_FUSED_FFT ? "built" : "absent");
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: the GPU rows are skipped\n");
  } else {
    cp::Stream stream;
    const int reps = quick ? 5 : 21;
    const long long shapes[][2] = {{4096, 16384}, {16384, 4096}, {65536, 1024}, {262144, 256}};
    if (all || rows == "1d") {
      for (bool real : {false, true})
        for (const auto& shape : shapes)
          gpu_rows<float>(real, quick ? shape[0] / 16 : shape[0], shape[1], reps, stream);
      for (bool real : {false, true}) gpu_rows<double>(real, quick ? 4096 : 65536, 1024, reps, stream);
      gpu_full_row(quick, reps, stream);
    }
    if (all || rows == "nd") {
      const long long side = quick ? 2048 : 8192, cube = quick ? 128 : 512;
      gpu_nd_row<std::complex<float>>({side, side}, reps, stream);
      gpu_nd_row<std::complex<float>>({cube, cube, cube}, reps, stream);
      gpu_nd_row<float>({side, side}, reps, stream);
      gpu_nd_row<float>({cube, cube, cube}, reps, stream);
    }
    if (all || rows == "tiles") {
      using cp::ConvolutionMode;
      const long long b = quick ? 16 : 1;  // --quick: a sixteenth of the batch
      gpu_tile_row<std::complex<float>>({16384 / b, 64, 64}, {1, 64, 64}, ConvolutionMode::circular, reps, stream);
      gpu_tile_row<std::complex<float>>({65536 / b, 32, 32}, {1, 32, 32}, ConvolutionMode::circular, reps, stream);
      gpu_tile_row<std::complex<float>>({4096 / b, 128, 128}, {1, 128, 128}, ConvolutionMode::circular, reps, stream);
      gpu_tile_row<std::complex<float>>({16384 / b, 16, 16, 16}, {1, 16, 16, 16}, ConvolutionMode::circular, reps,
                                        stream);
      gpu_tile_row<float>({16384 / b, 64, 64}, {1, 64, 64}, ConvolutionMode::circular, reps, stream);
      gpu_tile_row<float>({16384 / b, 60, 60}, {1, 5, 5}, ConvolutionMode::same, reps, stream);
      gpu_tile_row<std::complex<float>>({16384 / b, 56, 56}, {1, 9, 9}, ConvolutionMode::full, reps, stream);
      // Tiles of more values than the separate route's smooth lengths: 64 x 64 against 48 x 60 (1.42x), 32^3 c64 is
      // too large, so 16 x 32 x 32 against 14 x 28 x 28 (1.49x).
      gpu_tile_row<std::complex<float>>({16384 / b, 40, 50}, {1, 9, 11}, ConvolutionMode::full, reps, stream);
      gpu_tile_row<float>({16384 / b, 10, 20, 20}, {1, 5, 9, 9}, ConvolutionMode::full, reps, stream);
    }
  }
  if (all || rows == "cpu") cpu_row(quick);
  return 0;
}
