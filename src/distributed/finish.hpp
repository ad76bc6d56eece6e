// SPDX-License-Identifier: Apache-2.0
#pragma once
// The last elementwise pass of a distributed product where the local GEMMs could not do it themselves (after a
// reduction, after a redistribution, or for a bias on a row-major D): dst = act(src + beta * c + bias[row]), with
// gelu the tanh approximation cuBLASLt computes.

#include <cuda_runtime_api.h>

#include <complex>
#include <cstdint>

#include "cuplan/dtype.hpp"

namespace cuplan::detail::dist {

enum class Activation { none, relu, gelu };

/// Over a rows x cols row-major array of `dtype` (f16, bf16, f32, f64, c64, c128; activations on real types only).
/// `src` may be `dst`; `c` (same layout) and `bias` (one per row) may be null.
cudaError_t finish(void* dst, const void* src, const void* c, std::complex<double> beta, const void* bias,
                   Activation act, std::int64_t rows, std::int64_t cols, DType dtype, cudaStream_t stream);

}  // namespace cuplan::detail::dist
