// SPDX-License-Identifier: Apache-2.0
#pragma once
// An unfused bias + gelu pass over a row-major M x N matrix, in place: the baseline the fused epilog is measured
// against, and a building block for callers that cannot fuse.

#include <cstdint>

#include <cuda_runtime_api.h>

#include "cuplan/dtype.hpp"

namespace bench {

/// d[m, n] = gelu(d[m, n] + bias[m]) for f16, bf16 or f32 `dtype`; enqueued on `stream`.
void launch_bias_gelu(void* d, const void* bias, cuplan::DType dtype, std::int64_t m, std::int64_t n,
                      cudaStream_t stream);

}  // namespace bench
