// SPDX-License-Identifier: Apache-2.0
// RowBlockKernel (see row_block_kernel.hpp).

#include "runtime/row_block_kernel.hpp"

#include "base/cuda_check.hpp"

namespace cuplan::detail {

std::optional<int> RowBlockKernel::shared_memory_short_on(int device) const {
  int shared = 0;
  CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (shared < 0 || shared_bytes > static_cast<unsigned>(shared)) return shared;
  return std::nullopt;
}

}  // namespace cuplan::detail
