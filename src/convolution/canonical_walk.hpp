// SPDX-License-Identifier: Apache-2.0
#pragma once
// Element offsets of an operand in the planner's canonical order (batch axes, then convolved axes), shared by the
// CPU runner's loops and the device kernels' parameters: one batch entry's base offset in the operand, the kernel
// entry it uses (broadcast axes contribute nothing), and the convolved axes' strides padded to three.

#include <cstdint>

#include "convolution/planner.hpp"

#if defined(__CUDACC__)
#define CUPLAN_WALK_HD __host__ __device__
#else
#define CUPLAN_WALK_HD
#endif

namespace cuplan::detail {

/// The batch axes of one strided tensor (up to 7) and its convolved axes (three, leading ones of extent 1).
struct CanonicalWalk {
  int batch_rank = 0;
  std::int64_t batch_extent[8] = {};   ///< the operand's batch extents (canonical order)
  std::int64_t batch_stride[8] = {};   ///< this tensor's strides along them (0 where it broadcasts)
  std::int64_t extent[3] = {1, 1, 1};  ///< this tensor's extents along the convolved axes
  std::int64_t stride[3] = {0, 0, 0};  ///< its strides along them

  /// Offset of batch entry `b` (0 <= b < product of batch_extent); the device kernels' too.
  CUPLAN_WALK_HD std::int64_t batch_offset(std::int64_t b) const noexcept {
    std::int64_t offset = 0;
    for (int i = batch_rank - 1; i >= 0; --i) {
      const std::int64_t e = batch_extent[i];
      offset += (b % e) * batch_stride[i];
      b /= e;
    }
    return offset;
  }
};

/// The walk over a tensor of `shape` and `strides` (the operand, the kernel or the result) in `geometry`'s canonical
/// order; batch axes where the tensor's extent is 1 get stride 0 (the kernel's broadcast).
inline CanonicalWalk canonical_walk(const ConvolutionGeometry& g, const Shape& shape, const Strides& strides) {
  CanonicalWalk w;
  w.batch_rank = static_cast<int>(g.batch_axes.size());
  for (int i = 0; i < w.batch_rank; ++i) {
    const int a = g.batch_axes[static_cast<std::size_t>(i)];
    w.batch_extent[i] = g.in_shape[a];
    w.batch_stride[i] = shape[a] == 1 ? 0 : strides[a];
  }
  for (int i = 0; i < g.rank; ++i) {
    const int slot = 3 - g.rank + i;
    const int a = g.conv_axes[static_cast<std::size_t>(i)];
    w.extent[slot] = shape[a];
    w.stride[slot] = strides[a];
  }
  return w;
}

/// The walk over the kernel's own entries (its batch extents, each the operand's or 1) in canonical order, for
/// padding the kernel into its work buffer.
inline CanonicalWalk kernel_walk(const ConvolutionGeometry& g, const Strides& strides) {
  CanonicalWalk w = canonical_walk(g, g.kernel_shape, strides);
  for (int i = 0; i < w.batch_rank; ++i) {
    const int a = g.batch_axes[static_cast<std::size_t>(i)];
    w.batch_extent[i] = g.kernel_shape[a];
    w.batch_stride[i] = strides[a];
  }
  return w;
}

/// Operand entry -> kernel entry: the kernel's dense batch strides over the operand's batch extents, 0 where the
/// kernel broadcasts; batch_offset(b) is then the kernel entry that operand entry b uses.
inline CanonicalWalk kernel_entries(const ConvolutionGeometry& g) {
  CanonicalWalk w = canonical_walk(g, g.in_shape, g.out_strides);
  std::int64_t dense = 1;
  for (int i = w.batch_rank - 1; i >= 0; --i) {
    const int a = g.batch_axes[static_cast<std::size_t>(i)];
    w.batch_stride[i] = g.kernel_shape[a] == 1 ? 0 : dense;
    dense *= g.kernel_shape[a];
  }
  return w;
}

/// Dense strides of a canonical work buffer of FFT lengths (padded to three, leading ones), and its entry size.
struct WorkDims {
  std::int64_t length[3] = {1, 1, 1};  ///< the buffer's extents along the convolved axes
  std::int64_t offset[3] = {0, 0, 0};  ///< the result's first index along each (crop)
  std::int64_t entry = 1;              ///< elements per batch entry
};

inline WorkDims work_dims(const ConvolutionGeometry& g, bool spectrum) {
  WorkDims d;
  for (int i = 0; i < g.rank; ++i) {
    const int slot = 3 - g.rank + i;
    d.length[slot] = spectrum && g.real && i == g.rank - 1 ? g.fft_length[i] / 2 + 1 : g.fft_length[i];
    d.offset[slot] = g.out_offset[i];
    d.entry *= d.length[slot];
  }
  return d;
}

}  // namespace cuplan::detail
