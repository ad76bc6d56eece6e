// SPDX-License-Identifier: Apache-2.0
// An operand allocated on one stream and released while another stream still reads it (docs/getting-started.md).
//
// In CuPy or PyTorch the user must make the allocation stream wait for the consumer before dropping the last
// reference. A cuplan Tensor records every stream that used it through cuplan, and its memory returns to the pool
// only after that work: here the FFT object is the operand's only owner, release_operand() drops it while s_exec is
// still busy, and a new allocation on s_alloc (overwritten at once) cannot receive the same bytes too early.
#include <complex>
#include <cstdio>
#include <random>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;
using cfloat = std::complex<float>;

namespace {

// The operand is created inside and owned only by the returned FFT object.
cp::FFT make_fft(cp::Device device, cp::StreamRef stream, const std::vector<cfloat>& values) {
  cp::Tensor a = cp::Tensor::empty({64, 128}, cp::c64, device, stream);
  cp::copy(cp::TensorView(values.data(), {64, 128}), a, stream);
  return cp::FFT(a, {.axes = {-2, -1}, .stream = stream});
}

}  // namespace

int main() {
  const cp::Device device = sample::device("fft_operand_lifetime");
  try {
    std::vector<cfloat> values(64 * 128);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (auto& v : values) v = {u(rng), u(rng)};

    cp::Stream s_alloc, s_exec;
    cp::FFT f = make_fft(device, s_alloc, values);
    f.plan(s_alloc);
    // Enough queued work on s_exec that it is still running when the operand is released below.
    cp::Tensor busy = cp::Tensor::empty({1024, 4096}, cp::c64, device, s_exec);
    cp::copy(cp::TensorView(std::vector<cfloat>(1024 * 4096, cfloat(1.f, 0.f)).data(), {1024, 4096}), busy, s_exec);
    for (int i = 0; i < 20; ++i) busy = cp::fft(busy, {.axes = {1}, .stream = s_exec});
    cp::Tensor r = f.execute({.stream = s_exec});  // ordered after plan() on s_alloc by the object

    // No s_alloc.wait(s_exec) needed: the release is ordered after s_exec's use of the operand.
    f.release_operand();
    cp::Tensor reuse = cp::Tensor::empty({64, 128}, cp::c64, device, s_alloc);
    cp::copy(cp::TensorView(std::vector<cfloat>(64 * 128, cfloat(-7.f, 7.f)).data(), {64, 128}), reuse, s_alloc);

    cp::Tensor back = cp::ifft(r, {.axes = {-2, -1}, .normalization = cp::Normalization::inverse, .stream = s_exec})
                          .to(cp::Device::cpu(), s_exec);
    double worst = 0;
    for (std::size_t i = 0; i < values.size(); ++i)
      worst = std::max(worst, static_cast<double>(std::abs(back.data<cfloat>()[i] - values[i])));
    std::printf("max |ifft(fft(a)) - a| = %.3g\n", worst);
    sample::check(worst < 1e-4, "the released operand was read intact by s_exec");
    f.free();
    return 0;
  } catch (const cp::Error& e) {
    return sample::report_error(e);
  }
}
