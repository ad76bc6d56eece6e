// SPDX-License-Identifier: Apache-2.0
#pragma once
// Pure layout helpers on shapes and strides (in elements): axis normalisation, overlap and density tests, and the
// reduced copy geometry that cuplan::copy and its kernels work on. No CUDA calls here.

#include <cstddef>
#include <cstdint>

#include "cuplan/tensor.hpp"

namespace cuplan::detail {

/// Largest power of two, up to 16 (the widest access any library kernel makes), that divides the address: the
/// alignment a plan may assume for this pointer (16 for null).
inline std::uint32_t alignment_class(const void* pointer) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  std::uint32_t alignment = 1;
  while (alignment < 16 && address % (alignment * 2) == 0) alignment *= 2;
  return alignment;
}

/// `axis` in [-ndim, ndim) as a non-negative index; InvalidArgument naming `who`, the range and the value.
int normalize_axis(int axis, int ndim, const char* who);

/// Lowest and highest element offset (relative to the data pointer) that a layout touches.
struct OffsetRange {
  std::int64_t lowest = 0;
  std::int64_t highest = 0;
};
/// Offsets for a non-empty layout, overflow-checked (InvalidArgument naming `operand` on overflow).
OffsetRange offset_range(const Shape& shape, const Strides& strides, const char* operand);

/// InvalidArgument "<who>: operand shape: the result (<dtype> of shape <shape>) needs more than 2^63 bytes" when a
/// dense result of `shape` could not be addressed; planners ask at construction, so the class forms refuse it there
/// and not at their first execute (a stride-0 operand view can describe such a shape in a few bytes).
void require_addressable_result(const char* who, const Shape& shape, DType dtype);

/// True when no two index tuples reach the same element (axes of extent 1 are ignored; empty layouts qualify).
/// Conservative: sorts axes by |stride| and requires each stride to exceed the span of the smaller ones.
bool is_non_overlapping(const Shape& shape, const Strides& strides) noexcept;
/// InvalidArgument ("<who>: <operand> overlaps itself") when `view` is an output whose elements alias (exact for
/// the common layouts: base/overlap.hpp).
void check_non_overlapping(const TensorView& view, const char* operand, const char* who);

/// Dense row-major (C order) layout; axes of extent 1 may have any stride.
bool is_row_major(const Shape& shape, const Strides& strides) noexcept;
/// Dense in some axis order: positive strides that tile a gap-free block of numel elements (any permutation of a
/// row-major layout, e.g. column-major). Axes of extent 1 are ignored.
bool is_dense(const Shape& shape, const Strides& strides) noexcept;
/// Same strides on every axis of extent greater than 1 (the stride of an extent-1 axis is never used); false when
/// either rank differs from the shape's.
bool same_strides(const Shape& shape, const Strides& a, const Strides& b) noexcept;

/// A copy reduced to its simplest equivalent form: axes of extent 1 dropped, axes ordered by decreasing |dst
/// stride| (the same permutation on both sides), and neighbours merged where both sides are contiguous across
/// them. Strides stay in elements; the pointers are the views' data pointers.
struct CopyGeometry {
  static constexpr int max_rank = Dims::max_rank + 1;  // one more for splitting an element into words
  int rank = 0;
  std::int64_t shape[max_rank] = {};
  std::int64_t src_strides[max_rank] = {};
  std::int64_t dst_strides[max_rank] = {};
  std::int64_t numel = 0;
};
CopyGeometry reduce_copy(const Shape& shape, const Strides& src_strides, const Strides& dst_strides) noexcept;

/// True when the reduced copy is one contiguous block on both sides (rank 0, or rank 1 with unit strides).
bool is_single_block(const CopyGeometry& g) noexcept;
/// True when the reduced copy is rows of contiguous elements with positive row pitches on both sides.
bool is_pitched_2d(const CopyGeometry& g) noexcept;

/// Copies elements of `element_size` bytes on the CPU following `g` (both pointers host-accessible).
void copy_strided_host(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size) noexcept;

}  // namespace cuplan::detail
