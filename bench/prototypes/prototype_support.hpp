// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the prototypes share: random c64 data, the comparison of a device result with a reference, and the check that
// a GPU is there.

#include <cuda_runtime_api.h>

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdio>
#include <random>
#include <vector>

#include "support/bench_check.hpp"

namespace prototype {

/// `n` complex values, real and imaginary parts uniform in [-1, 1).
inline std::vector<std::complex<float>> random_c64(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<std::complex<float>> v(n);
  for (auto& x : v) x = {u(rng), u(rng)};
  return v;
}

/// Relative L2 difference of `got` from `factor` times `want`, both `count` c64 values in device memory.
inline double relative_difference(const void* got, const void* want, std::size_t count, double factor = 1.0) {
  std::vector<std::complex<float>> a(count), b(count);
  BENCH_CUDA_CHECK(cudaMemcpy(a.data(), got, count * sizeof(a[0]), cudaMemcpyDeviceToHost));
  BENCH_CUDA_CHECK(cudaMemcpy(b.data(), want, count * sizeof(b[0]), cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::complex<double> w = std::complex<double>(b[i]) * factor;
    num += std::norm(std::complex<double>(a[i]) - w);
    den += std::norm(w);
  }
  return std::sqrt(num / den);
}

/// True when a GPU is there; else says that nothing is measured.
inline bool gpu_present() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) return true;
  std::printf("no GPU: nothing to measure\n");
  return false;
}

}  // namespace prototype
