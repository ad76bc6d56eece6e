// SPDX-License-Identifier: Apache-2.0
#pragma once
// Flags that order work across GPUs without a kernel: a stream waits until a 32-bit word in device memory reaches
// a value, and a stream writes a word, both done by the GPU's front end (CUDA stream memory operations). A NCCL
// barrier is a kernel, and a kernel waits for free multiprocessors: behind a GEMM that fills them all it starts
// only when the GEMM ends, which serializes a copy-engine exchange with the products it should overlap.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace cuplan::detail::dist {

/// Enqueues on `stream` a wait until `*flag >= value`, compared cyclically: (int32_t)(*flag - value) >= 0. `flag` is
/// device memory of the stream's device. With `flush`, writes that peers made before the one that satisfies the wait
/// are visible to the work after it on every platform; without, on those that keep a peer's writes in order (NVLink and
/// PCIe do).
void wait_flag_at_least(cudaStream_t stream, const std::uint32_t* flag, std::uint32_t value, bool flush);
/// Whether `device` can flush remote writes at a wait (CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES).
bool can_flush_remote_writes(int device);
/// Enqueues on `stream` a write of `value` to `*flag`, after the work before it on the stream.
void write_flag(cudaStream_t stream, std::uint32_t* flag, std::uint32_t value);

}  // namespace cuplan::detail::dist
