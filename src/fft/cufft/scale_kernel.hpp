// SPDX-License-Identifier: Apache-2.0
#pragma once
// Interface of the normalisation kernel, kept free of fmt and cuplan headers so that nvcc compiles it alone.

#include <cuda_runtime_api.h>

namespace cuplan::detail {

enum class ScalePrecision { f16, f32, f64 };

/// Multiplies the `components` (1 real, 2 complex) values of every element of a strided walk by `scale` on
/// `stream`. Returns the launch status.
cudaError_t launch_scale(void* data, ScalePrecision precision, int components, int rank, const long long* extent,
                         const long long* stride, double scale, cudaStream_t stream);

/// Loads the normalisation kernels' code now (cudaFuncGetAttributes forces it). Under lazy module loading a
/// kernel's first launch loads its module and can wait for work already running on the device; plan() calls this
/// so that a planned execute never does (docs/streams.md). Returns the status.
cudaError_t load_scale_kernels() noexcept;

}  // namespace cuplan::detail
