// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes a callback's caller_info block into device memory in stream order: a one-thread kernel whose argument is
// the block, so the write needs no host memory that must outlive the call and never waits for the stream (a copy
// from pageable memory may).

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuplan/fft_callback_device.hpp"
#include "fft/callbacks/callback_set.hpp"

namespace cuplan::detail {

/// Enqueues `*destination = value` on `stream`. Returns the launch status.
cudaError_t launch_write_callback_info(fft_callback::Info* destination, const fft_callback::Info& value,
                                       cudaStream_t stream);
/// Writes the caller_info block of each callback `callbacks` has into blocks[0] (prolog) or blocks[1] (epilog), device
/// memory, on `stream`, when callbacks.version() differs from `written`, which it then becomes (one comparison
/// otherwise). Called before a transform, outside any graph capture. CudaError when a launch fails.
void write_callback_blocks(const CallbackSet& callbacks, void* const (&blocks)[2], std::uint64_t& written,
                           cudaStream_t stream);
/// Loads the kernel's code now (see load_scale_kernels). Returns the status.
cudaError_t load_callback_info_kernel() noexcept;

}  // namespace cuplan::detail
