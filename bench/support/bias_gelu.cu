// SPDX-License-Identifier: Apache-2.0
#include "support/bias_gelu.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>

#include "support/bench_check.hpp"

namespace bench {
namespace {

template <class T>
__global__ void bias_gelu_kernel(T* d, const T* bias, std::int64_t m, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= m * n) return;
  const float x = static_cast<float>(d[i]) + static_cast<float>(bias[i / n]);
  d[i] = static_cast<T>(0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))));
}

template <class T>
void launch(void* d, const void* bias, std::int64_t m, std::int64_t n, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((m * n + 255) / 256);
  bias_gelu_kernel<<<blocks, 256, 0, stream>>>(static_cast<T*>(d), static_cast<const T*>(bias), m, n);
}

}  // namespace

void launch_bias_gelu(void* d, const void* bias, cuplan::DType dtype, std::int64_t m, std::int64_t n,
                      cudaStream_t stream) {
  if (m * n == 0) return;
  using cuplan::bf16, cuplan::f16, cuplan::f32;
  if (dtype == bf16)
    launch<__nv_bfloat16>(d, bias, m, n, stream);
  else if (dtype == f16)
    launch<__half>(d, bias, m, n, stream);
  else if (dtype == f32)
    launch<float>(d, bias, m, n, stream);
  else
    throw std::invalid_argument("launch_bias_gelu: dtype must be f16, bf16 or f32");
  BENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace bench
