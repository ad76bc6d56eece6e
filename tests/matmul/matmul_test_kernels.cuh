// SPDX-License-Identifier: Apache-2.0
#pragma once
// Kernels for the Matmul stream and replay tests: a spin that delays a stream, and a fill of constant values (the
// product of constant matrices is exact in f32 at the test sizes, so results compare with ==).
#include <cuda_runtime.h>

#include <cstdint>

#include "base/cuda_check.hpp"

namespace cuplan::testing {

static __global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
static __global__ void fill(float* p, std::int64_t n, float value) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = value;
}
constexpr long long long_spin = 200'000'000;  // ~0.1 s at GPU clocks

inline void launch_fill(float* p, std::int64_t n, float v, cudaStream_t s) {
  fill<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(p, n, v);
  CUPLAN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cuplan::testing
