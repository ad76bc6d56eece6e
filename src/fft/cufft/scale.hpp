// SPDX-License-Identifier: Apache-2.0
#pragma once
// Normalisation of an FFT result on the device: cuplan's own kernel (scale.cu, launched through scale_kernel.hpp),
// not cuFFT's. The CPU-only build answers it from cufft_no_device.cpp.

#include <cuda_runtime_api.h>

#include "cuplan/dtype.hpp"
#include "fft/planner.hpp"

namespace cuplan::detail {

/// Multiplies every element of the compute output by `scale` on `stream` (one kernel).
void scale_device(void* data, DType dtype, const OutputWalk& walk, double scale, cudaStream_t stream);

}  // namespace cuplan::detail
