// SPDX-License-Identifier: Apache-2.0
// The callbacks' caller_info blocks written in stream order (see callback_info_kernel.hpp), for cuFFT's plans and the
// fused route's kernels alike.

#include "base/cuda_check.hpp"
#include "fft/cufft/callback_info_kernel.hpp"

namespace cuplan::detail {

void write_callback_blocks(const CallbackSet& callbacks, void* const (&blocks)[2], std::uint64_t& written,
                           cudaStream_t stream) {
  if (callbacks.version() == written) return;
  for (CallbackRole role : {CallbackRole::prolog, CallbackRole::epilog})
    if (callbacks.has(role)) {
      const int i = CallbackSet::index(role);
      CUPLAN_CUDA_CHECK(
          launch_write_callback_info(static_cast<fft_callback::Info*>(blocks[i]), callbacks.info(role), stream));
    }
  written = callbacks.version();
}

}  // namespace cuplan::detail
