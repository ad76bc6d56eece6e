// SPDX-License-Identifier: Apache-2.0
// Destruction of cuplan-made streams: runs when the Stream and every Storage that recorded the stream are gone.

#include "runtime/stream_handle.hpp"

#include "base/cuda_check.hpp"

namespace cuplan::detail {

// cudaStreamDestroy returns at once; work already enqueued on the stream still completes, so stream-ordered frees
// enqueued before this point are safe.
StreamHandle::~StreamHandle() {
  if (host_) return;
  CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
}

}  // namespace cuplan::detail
