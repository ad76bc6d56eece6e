// SPDX-License-Identifier: Apache-2.0
#pragma once
// The device strided copy kernel behind cuplan::copy for layouts cudaMemcpy2DAsync cannot express.

#include <cuda_runtime_api.h>

#include "base/geometry.hpp"

namespace cuplan::detail {

/// Arguments of the device strided copy kernel: elements of `word_size` bytes (1, 2, 4 or 8); strides in words.
struct StridedCopyArgs {
  CopyGeometry geometry;
  const void* src = nullptr;
  void* dst = nullptr;
  int word_size = 1;
};
/// Launches the strided copy kernel on `stream` (the caller has made the stream's device current). Returns the
/// launch status for the caller to check.
cudaError_t launch_strided_copy(const StridedCopyArgs& args, cudaStream_t stream) noexcept;
/// Loads the kernel's code now, so that a later first launch does not (a lazy module load can wait for work already
/// running on the device). Returns the status.
cudaError_t load_strided_copy_kernels() noexcept;

}  // namespace cuplan::detail
