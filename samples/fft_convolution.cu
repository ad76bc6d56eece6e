// SPDX-License-Identifier: Apache-2.0
// FFT convolution of a batch of signals with one filter: R2C of the zero-padded signals and of the filter, a
// pointwise product of the spectra (Thrust, on the stream), C2R with 1/N. The padded length holds the whole linear
// convolution, so nothing wraps around. Both transforms are planned once and write into preallocated tensors
// (`.out`), as in a loop over many batches; nothing blocks the host until the check.
//
// Then the same convolution with the product fused into the R2C (docs/fft.md, "Callbacks"): an epilog multiplies
// each spectrum value by the filter's as the transform stores it, so no pass of its own reads and writes the
// spectra. On a GPU the epilog is CUDA source that cuplan compiles with NVRTC and cuFFT links in; on the CPU (always
// run, GPU or not) it is a host callable that FFTW's loop applies chunk by chunk.
//
// The check: at sampled points, the direct convolution sum computed in double on the host, for every variant.
// Without a GPU the same program runs on the CPU: host tensors, host streams, FFTW, and Thrust's host policy.

#include <thrust/complex.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include <cuplan/fft_callback_device.hpp>

#include "sample_support.hpp"

namespace cp = cuplan;

namespace {

constexpr int kBatch = 64;                    // signals
constexpr int kSignal = 3968;                 // samples per signal
constexpr int kTaps = 129;                    // filter length
constexpr int kPadded = kSignal + kTaps - 1;  // 4096: the full linear convolution, no wrap-around
constexpr int kBins = kPadded / 2 + 1;        // R2C spectrum length

// Y[b, k] = X[b, k] * H[k]: every signal's spectrum times the filter's.
struct MultiplyByFilter {
  thrust::complex<float>* spectra;
  const thrust::complex<float>* filter;
  __host__ __device__ void operator()(int i) const { spectra[i] *= filter[i % kBins]; }
};

// The fused product for cuFFT: CUDA source compiled by cuplan (NVRTC) and linked into the R2C's kernels. The
// filter's spectrum is the user data; the helper gives the frequency (axis 1) of the stored element.
const char* kMultiplySource = R"(
#include <cuplan/fft_callback_device.hpp>
__device__ void multiply_by_filter(void* out, unsigned long long offset, float2 v, void* info, void*) {
  const float2* h = cuplan::fft_callback::user_data<const float2>(info);
  const float2 k = h[cuplan::fft_callback::index(offset, info, 1)];
  static_cast<float2*>(out)[offset] = make_float2(v.x * k.x - v.y * k.y, v.x * k.y + v.y * k.x);
}
)";

// The same product as a host callable, for FFTW.
cp::FFTCallback host_multiply_by_filter(const std::complex<float>* filter_spectrum) {
  return cp::FFTCallback::host_epilog<std::complex<float>>(
      [](void* out, std::uint64_t offset, std::complex<float> v, void* info) {
        const auto* h = cp::fft_callback::user_data<const std::complex<float>>(info);
        static_cast<std::complex<float>*>(out)[offset] = v * h[cp::fft_callback::index(offset, info, 1)];
      },
      const_cast<std::complex<float>*>(filter_spectrum));
}

// Largest error of y (row-major [kBatch, kPadded], host) against the direct sum y[b, n] = sum_j h[j] x[b, n - j]
// in double, at 512 sampled points; `largest` gets the largest value seen.
double sampled_error(const float* got, const std::vector<float>& signals, const std::vector<float>& filter,
                     std::mt19937& rng, double& largest) {
  std::uniform_int_distribution<int> pick_batch(0, kBatch - 1), pick_sample(0, kPadded - 1);
  double worst = 0;
  largest = 0;
  for (int trial = 0; trial < 512; ++trial) {
    const int b = pick_batch(rng), n = trial < 4 ? (trial * (kPadded - 1)) / 3 : pick_sample(rng);
    double want = 0;
    for (int j = std::max(0, n - kSignal + 1); j <= std::min(n, kTaps - 1); ++j)
      want += double(filter[j]) * double(signals[static_cast<std::size_t>(b) * kPadded + (n - j)]);
    worst = std::max(worst, std::abs(got[static_cast<std::size_t>(b) * kPadded + n] - want));
    largest = std::max(largest, std::abs(want));
  }
  return worst;
}

// The fused convolution on `device`: R2C with the product in its epilog, C2R with 1/N; checked like the first.
void fused_convolution(const cp::Device& device, const std::vector<float>& signals, const std::vector<float>& filter,
                       std::mt19937& rng) {
  const bool gpu = device.is_cuda();
  // On the GPU a stream of its own; on the CPU host tensors and Execution::cpu(), with no stream (FFTW runs at the
  // call), which is also how a machine with a GPU runs a transform on its CPU.
  std::optional<cp::Stream> gpu_stream;
  if (gpu) gpu_stream.emplace(device);
  const std::optional<cp::StreamRef> s = gpu ? std::optional<cp::StreamRef>(gpu_stream->ref()) : std::nullopt;
  const cp::Execution execution = gpu ? cp::Execution::cuda() : cp::Execution::cpu();
  cp::Tensor x = cp::Tensor::empty({kBatch, kPadded}, cp::f32, device, s);
  cp::Tensor h = cp::Tensor::empty({kPadded}, cp::f32, device, s);
  cp::copy(cp::TensorView(const_cast<float*>(signals.data()), {kBatch, kPadded}), x, s);
  cp::copy(cp::TensorView(const_cast<float*>(filter.data()), {kPadded}), h, s);
  const cp::Tensor filter_spectrum = cp::rfft(h, {.execution = execution, .stream = s});
  cp::Tensor spectra = cp::Tensor::empty({kBatch, kBins}, cp::c64, device, s);
  cp::Tensor y = cp::Tensor::empty({kBatch, kPadded}, cp::f32, device, s);
  const cp::FFTCallback epilog =
      gpu ? cp::FFTCallback::cuda_source(kMultiplySource, "multiply_by_filter", filter_spectrum.data())
          : host_multiply_by_filter(filter_spectrum.data<std::complex<float>>());
  cp::FFT forward(x, {.axes = {1}, .execution = execution, .stream = s, .epilog = epilog});
  cp::FFT inverse(spectra, {.axes = {1},
                            .normalization = cp::Normalization::inverse,
                            .execution = execution,
                            .stream = s,
                            .fft_type = cp::FFTType::c2r});
  forward.plan(s);  // compiles the epilog (GPU) once; a second plan of the same source compiles nothing
  inverse.plan(s);
  forward.execute({.stream = s, .out = spectra.view()});  // spectra already multiplied by the filter's
  inverse.execute({.direction = cp::Direction::inverse, .stream = s, .out = y.view()});
  const cp::Tensor result = y.to(cp::Device::cpu(), s);
  double largest = 0;
  const double worst = sampled_error(result.data<float>(), signals, filter, rng, largest);
  const cp::FFTCallbackStats stats = cp::fft_callback_stats();
  std::printf(
      "fused epilog on %s: max error %.3g at 512 sampled points (largest value %.3g); NVRTC compilations "
      "in this process: %llu (last %.1f ms)\n",
      gpu ? "the GPU (CUDA source callback)" : "the CPU (host callable)", worst, largest,
      static_cast<unsigned long long>(stats.compilations), stats.last_compile_ms);
  sample::check(worst <= 1e-5 * largest * std::log2(double(kPadded)),
                gpu ? "fused GPU convolution (epilog product) matches the direct sum in double"
                    : "fused CPU convolution (host epilog product) matches the direct sum in double");
}

}  // namespace

int main() {
  const cp::Device device = sample::device("fft_convolution");
  try {
    // Signals (zero-padded to kPadded) and the filter, made on the host.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> signals(static_cast<std::size_t>(kBatch) * kPadded, 0.0f), filter(kPadded, 0.0f);
    for (int b = 0; b < kBatch; ++b)
      for (int n = 0; n < kSignal; ++n) signals[static_cast<std::size_t>(b) * kPadded + n] = uniform(rng);
    for (int j = 0; j < kTaps; ++j) filter[j] = std::exp(-0.5f * ((j - 64) / 16.0f) * ((j - 64) / 16.0f)) / 40.0f;

    cp::Stream s(device);
    cp::Tensor x = cp::Tensor::empty({kBatch, kPadded}, cp::f32, device, s);
    cp::Tensor h = cp::Tensor::empty({kPadded}, cp::f32, device, s);
    cp::copy(cp::TensorView(signals.data(), {kBatch, kPadded}), x, s);
    cp::copy(cp::TensorView(filter.data(), {kPadded}), h, s);

    // Plan once: the signals' R2C, the filter's R2C (done once per filter), the C2R back with 1/N.
    cp::Tensor spectra = cp::Tensor::empty({kBatch, kBins}, cp::c64, device, s);
    cp::Tensor y = cp::Tensor::empty({kBatch, kPadded}, cp::f32, device, s);
    cp::FFT forward(x, {.axes = {1}, .stream = s});
    cp::FFT inverse(
        spectra, {.axes = {1}, .normalization = cp::Normalization::inverse, .stream = s, .fft_type = cp::FFTType::c2r});
    forward.plan(s);
    inverse.plan(s);
    cp::Tensor filter_spectrum = cp::rfft(h, {.stream = s});

    // One batch: R2C, product, C2R, all on s.
    forward.execute({.stream = s, .out = spectra.view()});
    const MultiplyByFilter multiply{reinterpret_cast<thrust::complex<float>*>(spectra.data()),
                                    reinterpret_cast<const thrust::complex<float>*>(filter_spectrum.data())};
    const thrust::counting_iterator<int> first(0), last(kBatch * kBins);
    if (spectra.view().on_host())
      thrust::for_each(thrust::host, first, last, multiply);  // a host stream: its work so far is done at the call
    else
      thrust::for_each(thrust::cuda::par_nosync.on(s.native()), first, last, multiply);
    inverse.execute({.direction = cp::Direction::inverse, .stream = s, .out = y.view()});

    // Check sampled points against the direct sum y[b, n] = sum_j h[j] x[b, n - j], in double.
    const cp::Tensor result = y.to(cp::Device::cpu(), s);  // blocking: waits for s
    double largest = 0;
    const double worst = sampled_error(result.data<float>(), signals, filter, rng, largest);
    std::printf(
        "%d signals of %d samples * %d taps (padded to %d): max error %.3g at 512 sampled points "
        "(largest value %.3g)\n",
        kBatch, kSignal, kTaps, kPadded, worst, largest);
    sample::check(worst <= 1e-5 * largest * std::log2(double(kPadded)),
                  "FFT convolution matches the direct sum in double at the sampled points");

    // The product fused into the R2C: on the GPU when there is one, and on the CPU always.
    if (device.is_cuda()) fused_convolution(device, signals, filter, rng);
    fused_convolution(cp::Device::cpu(), signals, filter, rng);
    return 0;
  } catch (const cp::Error& e) {
    return sample::report_error(e);
  }
}
