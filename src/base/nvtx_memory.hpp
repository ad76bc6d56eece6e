// SPDX-License-Identifier: Apache-2.0
#pragma once
// Tells compute-sanitizer's initcheck that a library kernel wrote a range of device memory. Some cuBLASLt kernels
// store their result in a way initcheck does not follow (an f16 64 x 40 product written by cuBLASLt alone, no
// cuplan involved, gives one report per 32-byte sector of its result on the copy that reads it back), so every later
// read of a Matmul result would be reported as uninitialized. With no tool attached the call returns at once.

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExtMemCudaRt.h>

#include <cstddef>

#include "base/nvtx.hpp"

namespace cuplan::detail {

/// Marks [ptr, ptr + bytes) as written by work enqueued on `stream`.
inline void nvtx_mark_written(void* ptr, std::size_t bytes, cudaStream_t stream) noexcept {
  if (ptr == nullptr || bytes == 0) return;
  nvtx_ready();
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA("cuplan");
  nvtxMemVirtualRangeDesc_t range{};
  range.ptr = ptr;
  range.size = bytes;
  nvtxMemMarkInitializedBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof(batch);
  batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  batch.regionDescCount = 1;
  batch.regionDescElementSize = sizeof(range);
  batch.regionDescElements = &range;
  nvtxMemCudaMarkInitialized(domain, stream, 0, &batch);
}

}  // namespace cuplan::detail
