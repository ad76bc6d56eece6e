// SPDX-License-Identifier: Apache-2.0
#pragma once
// Pack and unpack kernels of the exchanges: copies of 3D sub-boxes between a rank's local array (row-major over its
// box) and the packed exchange buffer (pieces back to back, each row-major). All pieces of one exchange go in one
// launch per 32 pieces.

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace cuplan::detail::dist {

/// One sub-box copy: `n` elements per axis from src (strides in elements) to dst (strides in elements).
struct BoxCopy {
  const void* src = nullptr;
  void* dst = nullptr;
  std::array<std::int64_t, 3> n{};
  std::array<std::int64_t, 3> src_stride{};
  std::array<std::int64_t, 3> dst_stride{};
};

/// Enqueues the copies on `stream`; elements of `element_bytes` (8: c64, 16: c128).
void copy_boxes(std::span<const BoxCopy> copies, std::size_t element_bytes, cudaStream_t stream);

/// Loads the copy kernels' module now (plan time). Under lazy module loading a first launch loads it, which can wait
/// for work already running on the device and so block an execute whose stream is busy.
cudaError_t load_copy_boxes_kernels() noexcept;

}  // namespace cuplan::detail::dist
