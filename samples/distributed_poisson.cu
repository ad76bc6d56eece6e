// SPDX-License-Identifier: Apache-2.0
// A 3D spectral Poisson solve, lap(u) = f on the periodic cube [0, 2 pi)^3, on every visible GPU (one rank per GPU,
// ranks as threads of this process over Communicator::local_all; one GPU works too).
//
// Per rank: R2C forward with ResultLayout::optimized (the spectrum stays in the transposed layout, skipping the
// exchanges back), a kernel that divides by -|k|^2 using the rank's output_box() offsets to know its wave numbers,
// then C2R with InputLayout::transposed and Normalization::inverse back to the rank's natural box. The right-hand
// side f = -(1 + 4 + 9) sin(x) sin(2y) cos(3z) has the exact solution u = sin(x) sin(2y) cos(3z), which checks the
// result. Exits 0 on success, 1 on a wrong result, 77 without a GPU.

#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>
#include <vector>

#include <cuplan/distributed.hpp>

#include "sample_support.hpp"

namespace cp = cuplan;

namespace {

constexpr std::int64_t kN = 64;

double exact(std::int64_t i, std::int64_t j, std::int64_t k) {
  const double h = 2 * std::numbers::pi / kN;
  return std::sin(i * h) * std::sin(2 * j * h) * std::cos(3 * k * h);
}

// Divides each spectral coefficient of the box (global offsets o, extents e, complex shape N x N x N/2+1) by
// -|k|^2; the mean (k = 0) is set to zero, the solution's free constant.
__global__ void inverse_laplacian(double2* u, std::int64_t o0, std::int64_t o1, std::int64_t o2, std::int64_t e0,
                                  std::int64_t e1, std::int64_t e2) {
  const std::int64_t total = e0 * e1 * e2;
  for (std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = o0 + t / (e1 * e2), j = o1 + (t / e2) % e1, k = o2 + t % e2;
    const double kx = i <= kN / 2 ? i : i - kN, ky = j <= kN / 2 ? j : j - kN, kz = k;
    const double k2 = kx * kx + ky * ky + kz * kz;
    const double scale = k2 == 0 ? 0.0 : -1.0 / k2;
    u[t].x *= scale;
    u[t].y *= scale;
  }
}

double solve_on_rank(cp::Communicator& comm) {
  const cp::Shape global{kN, kN, kN};
  const cp::Stream stream(comm.device());
  cp::DistributedFFTOptions forward_options;
  forward_options.result_layout = cp::ResultLayout::optimized;
  forward_options.stream = stream.ref();
  const auto boxes = cp::DistributedFFT::boxes(comm, global, cp::f64, forward_options);

  // The right-hand side on this rank's box, built on the host and copied over.
  std::vector<double> f(static_cast<std::size_t>(boxes.input.numel()));
  const auto& o = boxes.input.offset;
  const auto& e = boxes.input.extent;
  for (std::int64_t i = 0; i < e[0]; ++i)
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t k = 0; k < e[2]; ++k)
        f[static_cast<std::size_t>((i * e[1] + j) * e[2] + k)] = -14.0 * exact(o[0] + i, o[1] + j, o[2] + k);
  const auto rhs = cp::Tensor::wrap(cp::TensorView(f.data(), boxes.input.shape())).to(comm.device(), stream.ref());

  // Ranks are threads of one process: load this file's kernel before the first exchange. Under CUDA's lazy module
  // loading a first launch waits, holding the process's loader lock, for its GPU to idle, and a GPU whose exchange
  // waits for a peer still inside a cuFFT call that needs that lock never idles (docs/distributed.md).
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, inverse_laplacian) != cudaSuccess) sample::check(false, "kernel load");
  cp::DistributedFFT forward(comm, global, rhs, forward_options);
  forward.plan();
  auto spectrum = forward.execute();
  const auto& so = boxes.output.offset;
  const auto& se = boxes.output.extent;
  inverse_laplacian<<<256, 256, 0, stream>>>(spectrum.data<double2>(), so[0], so[1], so[2], se[0], se[1], se[2]);
  if (cudaGetLastError() != cudaSuccess) sample::check(false, "inverse_laplacian launch");

  cp::DistributedFFTOptions inverse_options;
  inverse_options.fft_type = cp::FFTType::c2r;
  inverse_options.input_layout = cp::InputLayout::transposed;
  inverse_options.normalization = cp::Normalization::inverse;
  inverse_options.stream = stream.ref();
  cp::DistributedFFT inverse(comm, global, spectrum, inverse_options);
  inverse.plan();
  const auto u = inverse.execute().to(cp::Device::cpu(), stream.ref());

  double worst = 0;
  const auto& uo = inverse.output_box().offset;
  for (std::int64_t i = 0; i < e[0]; ++i)
    for (std::int64_t j = 0; j < e[1]; ++j)
      for (std::int64_t k = 0; k < e[2]; ++k)
        worst = std::max(
            worst, std::abs(u.data<double>()[(i * e[1] + j) * e[2] + k] - exact(uo[0] + i, uo[1] + j, uo[2] + k)));
  return worst;
}

}  // namespace

int main() {
  sample::require_gpu("distributed_poisson");
  const int gpus = cp::cuda_device_count();
  std::vector<int> devices;
  for (int d = 0; d < gpus; ++d) devices.push_back(d);
  auto comms = cp::Communicator::local_all(devices);
  std::vector<double> errors(comms.size(), 0.0);
  // One thread per rank, each on its rank's GPU.
  const bool all_ranks_ran = sample::run_rank_threads(comms.size(), [&](std::size_t r) {
    comms[r].device().use();
    errors[r] = solve_on_rank(comms[r]);
  });
  if (!all_ranks_ran) return 1;
  double worst = 0;
  for (double e : errors) worst = std::max(worst, e);
  std::printf("%lld^3 Poisson solve on %d GPU(s): max |u - exact| = %.3e\n", static_cast<long long>(kN), gpus, worst);
  sample::check(worst < 1e-10, "distributed spectral Poisson solve matches the exact solution");
  return 0;
}
