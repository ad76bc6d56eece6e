// SPDX-License-Identifier: Apache-2.0
// The CPU-only build's device strided copy (CUPLAN_ENABLE_CUDA=OFF): no kernel, answered as a CUDA runtime without
// a device answers a launch. cuplan::copy reaches it only for device memory, which this build never has.

#include "runtime/copy_kernels.hpp"

namespace cuplan::detail {

cudaError_t launch_strided_copy(const StridedCopyArgs& /*args*/, cudaStream_t /*stream*/) noexcept {
  return cudaErrorNoDevice;
}

cudaError_t load_strided_copy_kernels() noexcept {
  return cudaErrorNoDevice;
}

}  // namespace cuplan::detail
