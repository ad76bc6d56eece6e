// SPDX-License-Identifier: Apache-2.0
// A Poisson solve -lap(u) = f on the unit square with Dirichlet walls at x = 0 and x = 1 (u = 0: a sine transform,
// DST-I over the interior nodes) and Neumann walls at y = 0 and y = 1 (du/dy = 0: a cosine transform, DCT-II over
// cell centres), by one RealTransform with a kind per axis: forward transform, a division by the eigenvalues of the
// second-order finite-difference Laplacian (Thrust, stream-ordered), inverse transform.
//
// The sampled modes sin(k pi x) cos(m pi y) are exact eigenvectors of that discrete Laplacian, so with the discrete
// right-hand side the solver must return the exact solution to round-off; with the continuous right-hand side it
// must be within the scheme's O(h^2) error (about 4 h^2 for these modes). Runs on the CPU (FFTW) always and on the GPU
// (cuFFT) when there is one.

#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <cmath>
#include <cstdio>
#include <numbers>
#include <optional>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;

namespace {

constexpr long long kNx = 255;  // interior nodes x_i = (i + 1) h_x, h_x = 1 / (kNx + 1); u = 0 at x = 0 and 1
constexpr long long kNy = 256;  // cell centres y_j = (j + 1/2) h_y, h_y = 1 / kNy; du/dy = 0 at y = 0 and 1
constexpr double kPi = std::numbers::pi;
constexpr double kHx = 1.0 / (kNx + 1), kHy = 1.0 / kNy;

// Eigenvalues of the 3-point -d2/dx2 with these walls: DST-I mode k (output index k - 1), DCT-II mode m.
__host__ __device__ inline double lambda_x(long long k) {
  return (2.0 - 2.0 * cos(kPi * static_cast<double>(k) / (kNx + 1))) / (kHx * kHx);
}
__host__ __device__ inline double lambda_y(long long m) {
  return (2.0 - 2.0 * cos(kPi * static_cast<double>(m) / kNy)) / (kHy * kHy);
}

// Divides the transformed right-hand side by the eigenvalues of the discrete Laplacian.
struct DivideByEigenvalues {
  double* spectrum;
  __host__ __device__ void operator()(long long i) const {
    const long long k = i / kNy, m = i % kNy;
    spectrum[i] /= lambda_x(k + 1) + lambda_y(m);  // never zero: the Dirichlet direction has no constant mode
  }
};

// The exact solution, two modes that meet both walls.
double exact(long long i, long long j) {
  const double x = (i + 1) * kHx, y = (j + 0.5) * kHy;
  return std::sin(kPi * x) * std::cos(kPi * y) + 0.5 * std::sin(3 * kPi * x) * std::cos(2 * kPi * y);
}
// Its right-hand side: `discrete` for the finite-difference Laplacian, else the continuous one.
double rhs(long long i, long long j, bool discrete) {
  const double x = (i + 1) * kHx, y = (j + 0.5) * kHy;
  const double l1 = discrete ? lambda_x(1) + lambda_y(1) : 2 * kPi * kPi;
  const double l2 = discrete ? lambda_x(3) + lambda_y(2) : 13 * kPi * kPi;
  return l1 * std::sin(kPi * x) * std::cos(kPi * y) + 0.5 * l2 * std::sin(3 * kPi * x) * std::cos(2 * kPi * y);
}

// Solves on `device` (the CPU or CUDA device 0) and returns the largest error against the exact solution.
double solve(cp::Device device, bool discrete_rhs) {
  const cp::Shape shape{kNx, kNy};
  std::vector<double> host(kNx * kNy);
  for (long long i = 0; i < kNx; ++i)
    for (long long j = 0; j < kNy; ++j) host[i * kNy + j] = rhs(i, j, discrete_rhs);
  // A stream of its own on the GPU; host operands need none (their calls block), and with a GPU present a CPU device
  // has no stream to make.
  std::optional<cp::Stream> own;
  if (device.is_cuda()) own.emplace(device);
  const std::optional<cp::StreamRef> s = own ? std::optional<cp::StreamRef>(*own) : std::nullopt;
  cp::Tensor u = cp::Tensor::empty(shape, cp::f64, device, s);
  cp::copy(cp::TensorView(host.data(), shape), u, s);
  cp::Tensor u_hat = cp::Tensor::empty(shape, cp::f64, device, s);

  // One kind per axis: the boundary condition of each direction. Planned once; a time loop would reuse both.
  const cp::RealTransformOptions options{.axes = {0, 1}, .kinds = {cp::R2RKind::dst1, cp::R2RKind::dct2}, .stream = s};
  cp::RealTransform forward(u, options);
  cp::RealTransform inverse(u_hat, options);
  forward.plan();
  inverse.plan();
  forward.execute({.out = u_hat.view()});
  const DivideByEigenvalues divide{u_hat.data<double>()};
  const thrust::counting_iterator<long long> first(0), last(kNx * kNy);
  if (u_hat.view().on_host())
    thrust::for_each(thrust::host, first, last, divide);  // a host stream: its work so far is done at the call
  else
    thrust::for_each(thrust::cuda::par_nosync.on(s->native()), first, last, divide);
  // The inverse (DST-I and DCT-III, scaled by 1 / (2 (kNx + 1) * 2 kNy) with the default norm) returns u.
  inverse.execute({.direction = cp::Direction::inverse, .out = u.view()});
  std::printf("  %s\n", forward.describe().c_str());

  const cp::Tensor result = u.to(cp::Device::cpu(), s);  // blocking: host memory is involved
  double worst = 0;
  for (long long i = 0; i < kNx; ++i)
    for (long long j = 0; j < kNy; ++j)
      worst = std::max(worst, std::abs(result.data<double>()[i * kNy + j] - exact(i, j)));
  return worst;
}

}  // namespace

int main() {
  return sample::run("r2r_poisson", [] {
    std::vector<cp::Device> devices{cp::Device::cpu()};
    if (cp::cuda_available()) devices.push_back(cp::Device::cuda(0));
    std::printf("r2r_poisson: %lld x %lld grid, Dirichlet in x (DST-I), Neumann in y (DCT-II); on the CPU%s\n", kNx,
                kNy, cp::cuda_available() ? " and CUDA device 0" : " only (no CUDA device)");
    for (const cp::Device& device : devices) {
      const char* where = device.is_cpu() ? "CPU" : "GPU";
      const double discrete = solve(device, true);
      const double continuous = solve(device, false);
      std::printf("%s: max error %.3g (discrete right-hand side), %.3g (continuous; h^2 = %.3g)\n", where, discrete,
                  continuous, kHx * kHx);
      sample::check(discrete < 1e-11, device.is_cpu() ? "CPU: the exact discrete solution to round-off"
                                                      : "GPU: the exact discrete solution to round-off");
      sample::check(continuous < 10 * kHx * kHx, device.is_cpu() ? "CPU: within the second-order scheme's error"
                                                                 : "GPU: within the second-order "
                                                                   "scheme's error");
    }
  });
}
