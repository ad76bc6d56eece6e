// SPDX-License-Identifier: Apache-2.0
// FFT convolution of a batch of signals with one filter through cuplan::Convolution (docs/convolution.md): the
// object is planned once with the filter, whose spectrum it computes once, and then convolves batch after batch
// into a preallocated result (`.out`), as a loop over many batches would.
//
// On a GPU the same convolution runs on both CUDA routes and each is timed:
// - fused: one kernel of cuplan's own (cuFFTDx) loads each row, runs the forward FFT, multiplies by the filter's
//   spectrum, runs the inverse FFT and stores the row (in a build with MathDx; without it the fused route is absent
//   and the sample says so);
// - separate: cuFFT forward, a product kernel and cuFFT inverse.
// On the CPU (always run, GPU or not) the convolution runs with FFTW, the product inside its chunked loop.
//
// The check: every output value of every route against the direct convolution sum computed in double on the host,
// with the result poisoned (NaN) before each run, so a value the convolution never wrote fails the check.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;

namespace {

constexpr int kBatch = 256;                 // signals
constexpr int kSignal = 3968;               // samples per signal
constexpr int kTaps = 129;                  // filter length
constexpr int kFull = kSignal + kTaps - 1;  // 4096: the full linear convolution
constexpr int kTimedRuns = 20;              // executes timed per route (after one warm-up)

// y[b, n] = sum_j h[j] x[b, n - j] in double, for every b and n of the full convolution.
std::vector<double> direct_convolution(const std::vector<float>& signals, const std::vector<float>& filter) {
  std::vector<double> y(static_cast<std::size_t>(kBatch) * kFull, 0.0);
  for (int b = 0; b < kBatch; ++b) {
    const float* x = signals.data() + static_cast<std::size_t>(b) * kSignal;
    double* row = y.data() + static_cast<std::size_t>(b) * kFull;
    for (int n = 0; n < kSignal; ++n)
      for (int j = 0; j < kTaps; ++j) row[n + j] += double(filter[j]) * double(x[n]);
  }
  return y;
}

// Largest error of `got` (host, [kBatch, kFull]) against the reference, relative to the reference's largest value;
// a NaN (an output never written over the poison) gives infinity.
double relative_error(const float* got, const std::vector<double>& want) {
  double worst = 0, largest = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(double(got[i]) - want[i]);
    worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(worst, e);
    largest = std::max(largest, std::abs(want[i]));
  }
  return worst / largest;
}

// Plans the convolution of `x` with `h` on `route`, runs it once into a poisoned result, checks every value and,
// on a GPU, times kTimedRuns executes (milliseconds each, median). Returns nullopt where the route does not apply
// (the fused route in a build without MathDx): the reason is printed.
std::optional<double> run_route(const cp::Device& device, const cp::Tensor& x, const cp::Tensor& h,
                                cp::ConvolutionRoute route, const std::vector<double>& reference) {
  const bool gpu = device.is_cuda();
  std::optional<cp::Stream> gpu_stream;
  if (gpu) gpu_stream.emplace(device);
  const std::optional<cp::StreamRef> s = gpu ? std::optional<cp::StreamRef>(gpu_stream->ref()) : std::nullopt;
  std::optional<cp::Convolution> conv;
  try {
    conv.emplace(x, h,
                 cp::ConvolutionOptions{.axes = {1},
                                        .mode = cp::ConvolutionMode::full,
                                        .route = route,
                                        .execution = gpu ? cp::Execution::cuda() : cp::Execution::cpu(),
                                        .stream = s});
  } catch (const cp::NotSupported& e) {
    std::printf("route %s not available: %s\n", cp::to_string(route).data(), e.what());
    return std::nullopt;
  }
  conv->plan(s);  // the filter's spectrum, computed once
  std::printf("%s\n", conv->describe().c_str());

  // One run into a result poisoned with NaN, then every value checked against the sum in double.
  const std::vector<float> poison(static_cast<std::size_t>(kBatch) * kFull, std::numeric_limits<float>::quiet_NaN());
  cp::Tensor y = cp::Tensor::empty({kBatch, kFull}, cp::f32, device, s);
  cp::copy(cp::TensorView(const_cast<float*>(poison.data()), {kBatch, kFull}), y, s);
  conv->execute({.stream = s, .out = y});
  const cp::Tensor result = y.to(cp::Device::cpu(), s);  // blocking: waits for s
  const double error = relative_error(result.data<float>(), reference);
  std::printf("route %s on %s: largest error %.3g relative to the largest value\n", cp::to_string(conv->route()).data(),
              gpu ? "the GPU" : "the CPU", error);
  sample::check(error <= 1e-5 * std::log2(double(kFull)), gpu ? "GPU convolution matches the direct sum in double"
                                                              : "CPU convolution matches the direct sum in double");
  if (!gpu) return 0.0;

  // Timing: events around each execute on the stream, the median of kTimedRuns.
  std::vector<float> times;
  for (int run = 0; run < kTimedRuns; ++run) {
    cp::Event start(device, true), stop(device, true);
    start.record(s);
    conv->execute({.stream = s, .out = y});
    stop.record(s);
    stop.synchronize();
    times.push_back(cp::Event::elapsed_ms(start, stop));
  }
  std::nth_element(times.begin(), times.begin() + kTimedRuns / 2, times.end());
  return double(times[kTimedRuns / 2]);
}

}  // namespace

int main() {
  const cp::Device device = sample::device("fft_convolution");
  return sample::run("fft_convolution", [&] {
    std::mt19937 rng(7);
    const std::vector<float> signals = sample::random_real<float>(static_cast<std::size_t>(kBatch) * kSignal, rng);
    std::vector<float> filter(kTaps);
    for (int j = 0; j < kTaps; ++j) filter[j] = std::exp(-0.5f * ((j - 64) / 16.0f) * ((j - 64) / 16.0f)) / 40.0f;
    const std::vector<double> reference = direct_convolution(signals, filter);
    std::printf("%d signals of %d samples * a %d-tap filter (full mode: %d values per row)\n", kBatch, kSignal, kTaps,
                kFull);

    const auto make = [&](const cp::Device& where) {
      cp::Tensor x = cp::Tensor::empty({kBatch, kSignal}, cp::f32, where);
      cp::Tensor h = cp::Tensor::empty({1, kTaps}, cp::f32, where);
      cp::copy(cp::TensorView(const_cast<float*>(signals.data()), {kBatch, kSignal}), x);
      cp::copy(cp::TensorView(filter.data(), {1, kTaps}), h);
      if (where.is_cuda()) cp::current_stream(where).synchronize();  // the copies above ran on the current stream
      return std::pair(std::move(x), std::move(h));
    };

    if (device.is_cuda()) {
      const auto [x, h] = make(device);
      const std::optional<double> separate = run_route(device, x, h, cp::ConvolutionRoute::separate, reference);
      const std::optional<double> fused = run_route(device, x, h, cp::ConvolutionRoute::fused, reference);
      std::printf("GPU, median of %d executes: separate passes %.3f ms", kTimedRuns, *separate);
      if (fused)
        std::printf(", fused %.3f ms: fused is %.2fx the speed of separate passes\n", *fused, *separate / *fused);
      else
        std::printf(" (no fused route in this build)\n");
    }
    const auto [x, h] = make(cp::Device::cpu());
    run_route(cp::Device::cpu(), x, h, cp::ConvolutionRoute::automatic, reference);
  });
}
