// SPDX-License-Identifier: Apache-2.0
// FFT of host data: the blocking case (the blocking rule, docs/getting-started.md).
//
//   1. Stateless: cuplan::fft(host_view) stages the data to the GPU, transforms, copies back and synchronises, so
//      the result is a host Tensor usable at once, whatever stream is passed. Without a GPU the same call runs on
//      the CPU (FFTW); the program says which.
//   2. Stateful: an FFT object over host data blocks in every execute; reset_operand swaps in new host data.
// Each result is checked by transforming back (ifft with 1/N normalisation gives the input again).
#include <cmath>
#include <complex>
#include <cstdio>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;
using cfloat = std::complex<float>;

namespace {

double max_difference(const cp::Tensor& t, const std::vector<cfloat>& expected) {
  double worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::abs(t.data<cfloat>()[i] - expected[i])));
  return worst;
}

}  // namespace

int main() {
  try {
    const bool gpu = cp::cuda_available();
    std::printf(gpu ? "running on the GPU (cuFFT)\n" : "no CUDA device: running on the CPU (FFTW)\n");
    const cp::Shape shape{64, 256, 128};
    auto a = sample::random_complex<float>(64 * 256 * 128, 1);
    const cp::TensorView va(a.data(), shape);

    // 1. Stateless, on two streams in turn: each call blocks, so no ordering is needed between them.
    std::optional<cp::Stream> s1, s2;
    if (gpu) s1.emplace(), s2.emplace();
    auto on = [&](std::optional<cp::Stream>& s) { return s ? std::optional<cp::StreamRef>(*s) : std::nullopt; };
    cp::Tensor r1 = cp::fft(va, {.axes = {0, 1}, .stream = on(s1)});
    sample::check(r1.view().on_host(), "the result of a host operand is a host Tensor");
    cp::Tensor back = cp::ifft(r1, {.axes = {0, 1}, .normalization = cp::Normalization::inverse, .stream = on(s1)});
    sample::check(max_difference(back, a) < 1e-4, "ifft(fft(a)) == a, usable at once");
    a[0] += 1.f;  // another operation changes a in place; the next call sees the new value
    cp::Tensor r2 = cp::fft(va, {.axes = {0, 1}, .stream = on(s2)});
    const auto delta = r2.data<cfloat>()[0] - r1.data<cfloat>()[0];
    sample::check(std::abs(delta - cfloat(1.f, 0.f)) < 1e-3f, "the second call transformed the modified data");

    // 2. Stateful over host data: every execute blocks.
    auto b = sample::random_complex<float>(a.size(), 2);
    cp::FFT f(va, {.axes = {0, 1}});
    f.plan();
    std::printf("plan: %s\n", f.describe().c_str());
    cp::Tensor fa = f.execute();
    f.reset_operand(cp::TensorView(b.data(), shape), on(s1));
    cp::Tensor fb = f.execute({.stream = on(s1)});
    cp::Tensor ib = cp::ifft(fb, {.axes = {0, 1}, .normalization = cp::Normalization::inverse});
    sample::check(max_difference(ib, b) < 1e-4, "stateful execute after reset_operand transformed the new data");
    f.free();
    return 0;
  } catch (const cp::Error& e) {
    return sample::report_error(e);
  }
}
