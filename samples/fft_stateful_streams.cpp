// SPDX-License-Identifier: Apache-2.0
// A stateful FFT over device data used on two streams (docs/streams.md).
//
//   1. plan() and execute() on s1, then reset_operand(x2, s2) and execute() on s2. When a phase arrives on a new
//      stream, the object makes that stream wait for its last phase on the old one, so s2 never overtakes f's work
//      on s1 (its plan, workspace and the operand it read) without any user ordering.
//   2. The current stream: a phase without a stream runs on FFTOptions::stream when the object was made with one,
//      else on the current stream of the calling thread, here the one of a StreamScope (like CuPy's `with s:`).
// Results are checked by transforming back on the host side.
#include <complex>
#include <cstdio>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;
using cdouble = std::complex<double>;

namespace {

// ifft with 1/N on the host side of the check: the round trip must give the input back.
double round_trip_error(const cp::Tensor& spectrum, const std::vector<cdouble>& input, cp::StreamRef stream) {
  cp::Tensor back = cp::ifft(spectrum, {.axes = {0, 1}, .normalization = cp::Normalization::inverse, .stream = stream});
  cp::Tensor host = back.to(cp::Device::cpu(), stream);
  double worst = 0;
  for (std::size_t i = 0; i < input.size(); ++i) worst = std::max(worst, std::abs(host.data<cdouble>()[i] - input[i]));
  return worst;
}

}  // namespace

int main() {
  const cp::Device device = sample::device("fft_stateful_streams");
  try {
    const cp::Shape shape{512, 64, 64};
    const std::size_t n = 512 * 64 * 64;
    cp::Stream s1, s2;
    const auto h1 = sample::random_complex<double>(n, 1), h2 = sample::random_complex<double>(n, 2);

    cp::Tensor a = cp::Tensor::empty(shape, cp::c128, device, s1);
    cp::copy(cp::TensorView(h1.data(), shape), a, s1);
    cp::FFT f(a, {.axes = {0, 1}});  // no options stream: phases without one use the current stream
    f.plan(s1);
    std::printf("plan: %s\n", f.describe().c_str());
    cp::Tensor b = f.execute({.stream = s1});

    cp::Tensor c = cp::Tensor::empty(shape, cp::c128, device, s2);
    cp::copy(cp::TensorView(h2.data(), shape), c, s2);
    f.reset_operand(c, s2);  // s2 now runs after f's execute on s1
    cp::Tensor d = f.execute({.stream = s2});
    s2.synchronize();
    sample::check(round_trip_error(d, h2, s2) < 1e-10, "execute on s2 after reset_operand transformed c");
    sample::check(round_trip_error(b, h1, s1) < 1e-10, "execute on s1 transformed a");

    // 2. No stream argument: the current stream of the scope.
    {
      cp::StreamScope scope(s1);
      f.reset_operand(a);  // on s1, ordered after the execute on s2
      cp::Tensor r = f.execute();
      s1.synchronize();
      sample::check(round_trip_error(r, h1, s1) < 1e-10, "execute() without a stream ran on the scope's stream");
    }
    f.free();
    return 0;
  } catch (const cp::Error& e) {
    return sample::report_error(e);
  }
}
