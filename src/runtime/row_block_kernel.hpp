// SPDX-License-Identifier: Apache-2.0
#pragma once
// The launch shape of a kernel compiled ahead of time whose blocks each take whole rows (the cuFFTDx kernels of the
// fused convolution and real-to-real routes): what a route needs to check a device and launch it, free of cuFFTDx.

#include <cuda_runtime_api.h>

#include <optional>

namespace cuplan::detail {

struct RowBlockKernel {
  unsigned threads_x = 0;       ///< block dimension x (cuFFTDx's suggested one)
  unsigned ffts_per_block = 0;  ///< rows per block (block dimension y)
  unsigned shared_bytes = 0;    ///< dynamic shared memory per block
  /// Sets the kernel's dynamic shared memory limit on the current device; fails (cudaErrorNoKernelImageForDevice,
  /// cudaErrorInvalidDeviceFunction) where the build holds no code for the device's architecture.
  cudaError_t (*prepare)() = nullptr;

  /// The device's opt-in shared memory per block when the kernel needs more than that, else empty.
  std::optional<int> shared_memory_short_on(int device) const;
};

}  // namespace cuplan::detail
