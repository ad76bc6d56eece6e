// SPDX-License-Identifier: Apache-2.0
#pragma once
// Bias gradient of the bgrada / bgradb epilogs computed by a separate reduction, for the products cuBLASLt has no
// fused algorithm for (it offers these epilogs only for some dtype and transposition combinations).

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuplan/dtype.hpp"

namespace cuplan::detail::mm {

/// out[b * length + l] = sum over s < sum_length of x[b * batch_stride + l * stride_l + s * stride_s], accumulated
/// in f64 for f64 input and in f32 otherwise. x: f16, bf16, f32 or f64; out: f16, bf16, f32 or f64 (dense).
struct BiasGradientReduction {
  const void* x = nullptr;
  DType x_dtype = f32;
  void* out = nullptr;
  DType out_dtype = f32;
  std::int64_t batch_count = 1, length = 0, sum_length = 0;
  std::int64_t stride_l = 0, stride_s = 0, batch_stride = 0;
};

/// True when launch_bias_gradient handles these dtypes.
bool bias_gradient_supported(DType x_dtype, DType out_dtype) noexcept;

/// Enqueues the reduction on `stream`; CudaError when the launch fails.
void launch_bias_gradient(const BiasGradientReduction& r, cudaStream_t stream);

}  // namespace cuplan::detail::mm
