// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes a callback's caller_info block into device memory in stream order: a one-thread kernel whose argument is
// the block, so the write needs no host memory that must outlive the call and never waits for the stream (a copy
// from pageable memory may).

#include <cuda_runtime_api.h>

#include "cuplan/fft_callback_device.hpp"

namespace cuplan::detail {

/// Enqueues `*destination = value` on `stream`. Returns the launch status.
cudaError_t launch_write_callback_info(fft_callback::Info* destination, const fft_callback::Info& value,
                                       cudaStream_t stream);
/// Loads the kernel's code now (see load_scale_kernels). Returns the status.
cudaError_t load_callback_info_kernel() noexcept;

}  // namespace cuplan::detail
