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

/// Loads the kernels of finish() for `dtype` now (plan time), so that no first execute loads a module: loading
/// waits for the device to go idle, which, with ranks as threads of one process, can wait on a peer's transfer
/// while holding the process's loader lock that the peer needs.
cudaError_t load_finish_kernels(DType dtype);

}  // namespace cuplan::detail::dist
