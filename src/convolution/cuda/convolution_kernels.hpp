// SPDX-License-Identifier: Apache-2.0
#pragma once
// The separate-pass route's own kernels around cuFFT's transforms: pad an operand into the canonical work buffer,
// multiply the spectrum by the kernel's, crop the work buffer into the result; and the fused column kernel's layout
// of the kernel's spectrum. Each returns the launch's status.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "convolution/canonical_walk.hpp"
#include "cuplan/dtype.hpp"

namespace cuplan::detail {

/// Entries [0, entries) of `src` (of `src_dtype`, walked by `walk`) into the dense work buffer `dst` of `dst_dtype`
/// (the same, or its complex type for a real `src`), zeros beyond the extents.
cudaError_t pad_device(const void* src, DType src_dtype, const CanonicalWalk& walk, std::int64_t entries,
                       const WorkDims& dims, void* dst, DType dst_dtype, cudaStream_t stream);
/// spectrum[b][i] *= kernel[kernel_entries.batch_offset(b)][i] for b < entries, i < entry (c64 or c128).
cudaError_t multiply_device(void* spectrum, const void* kernel, DType dtype, std::int64_t entries, std::int64_t entry,
                            const CanonicalWalk& kernel_entries, cudaStream_t stream);
/// The kernel's spectrum [entries][length][columns] (c64 or c128) tiled for the fused column kernel (fused_launch.hpp,
/// FusedColumns::spectrum): groups of `width` neighbouring columns, each column's `length` values contiguous, zeros
/// past the last column; `split` > 1 (the split route): per outer frequency k2 < split, the frequencies split * k1 +
/// k2 of each column contiguous.
cudaError_t tile_column_spectrum_device(const void* src, void* dst, DType dtype, std::int64_t entries,
                                        std::int64_t length, std::int64_t columns, std::int64_t width,
                                        std::int64_t split, cudaStream_t stream);
/// The result's part of each work buffer entry (of `dtype`) into `dst` (walked by `walk`).
cudaError_t crop_device(const void* src, DType dtype, const WorkDims& dims, std::int64_t entries,
                        const CanonicalWalk& walk, void* dst, cudaStream_t stream);

}  // namespace cuplan::detail
