// SPDX-License-Identifier: Apache-2.0
// FFT of device data: non-blocking calls, ordered between two streams with an event (docs/streams.md).
//
// fft() on s1 returns as soon as the work is enqueued. Before s2 consumes the result, it waits for an event
// recorded on s1 (passed as `.after`, or with s2.wait(event)). The host synchronises s2 only at the end.
#include <complex>
#include <cstdio>
#include <random>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;
using cdouble = std::complex<double>;

int main() {
  const cp::Device device = sample::device("fft_device_streams");
  try {
    cp::Stream s1, s2;
    const cp::Shape shape{64, 256, 128};
    const std::size_t n = 64 * 256 * 128;
    std::vector<cdouble> host(n);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& x : host) x = {u(rng), u(rng)};

    // a is allocated and filled on s1.
    cp::Tensor a = cp::Tensor::empty(shape, cp::c128, device, s1);
    cp::copy(cp::TensorView(host.data(), shape), a, s1);

    cp::Tensor b = cp::fft(a, {.axes = {0, 1}, .stream = s1});  // returns at once
    cp::Event e1 = s1.record();
    // s2 starts the inverse only after s1's forward transform: the event is the ordering edge.
    cp::Tensor c =
        cp::ifft(b, {.axes = {0, 1}, .normalization = cp::Normalization::inverse, .stream = s2, .after = {e1}});
    s2.synchronize();  // before the host reads c

    cp::Tensor check = c.to(cp::Device::cpu());
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(check.data<cdouble>()[i] - host[i]));
    std::printf("max |ifft(fft(a)) - a| = %.3g\n", worst);
    sample::check(worst < 1e-10, "s2 consumed s1's result in order");
    return 0;
  } catch (const cp::Error& e) {
    return sample::report_error(e);
  }
}
