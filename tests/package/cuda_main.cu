// SPDX-License-Identifier: Apache-2.0
// CUDA consumer of cuplan: a kernel of its own writes a device tensor on a cuplan stream, cuplan transforms it on
// the same stream, and the result is checked on the host. Without a GPU the device part is skipped (said on stdout)
// and the same transform runs on host memory with a host stream.
#include <complex>
#include <cstdio>
#include <vector>

#include <cuplan/cuplan.hpp>
#include <cuplan/format.hpp>

namespace cp = cuplan;

__global__ void fill_ones(float2* values, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) values[i] = make_float2(1.0F, 0.0F);
}

int main() {
  constexpr int n = 256;
  cp::Stream s;  // a host stream without a GPU
  cp::Tensor spectrum;
  if (cp::cuda_available()) {
    auto x = cp::Tensor::empty({n}, cp::c64, cp::Device::cuda(0), s);
    fill_ones<<<1, n, 0, s.native()>>>(x.data<float2>(), n);
    spectrum = cp::fft(x, {.stream = s}).to(cp::Device::cpu(), s);
  } else {
    std::printf("no GPU: the kernel part is skipped; the transform runs on the CPU\n");
    std::vector<std::complex<float>> ones(n, {1.0F, 0.0F});
    spectrum = cp::fft(cp::TensorView(ones.data(), {n}), {.stream = s});
  }
  const float dc = spectrum.data<std::complex<float>>()[0].real();
  std::printf("%s: X[0] = %g (expected %d), stream on %s\n", fmt::format("{}", spectrum).c_str(), dc, n,
              fmt::format("{}", s.device()).c_str());
  return dc == static_cast<float>(n) ? 0 : 1;
}
