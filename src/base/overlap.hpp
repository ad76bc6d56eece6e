// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one overlap analysis every operation uses: whether a view reaches an element twice (self-overlap) and whether
// two views share memory. Exact where that is cheap (1-D, 2-D, disjoint or dense ranges, or small views), otherwise
// conservative: "overlaps" is answered when it cannot be ruled out. No CUDA calls here.

#include <cstdint>

#include "cuplan/tensor.hpp"

namespace cuplan::detail {

/// The bytes a view can reach: [begin, end).
struct ByteRange {
  std::uintptr_t begin = 0;  ///< first byte
  std::uintptr_t end = 0;    ///< one past the last byte
};
/// Byte range of a non-empty view (its constructor checked that the offsets fit in 64 bits).
ByteRange byte_range(const TensorView& v) noexcept;

/// True when two index tuples of the layout reach the same element. Exact for up to two axes of extent > 1 and
/// whenever the sorted-stride test or an enumeration (small views) decides; otherwise true (conservative).
bool self_overlaps(const Shape& shape, const Strides& strides) noexcept;

/// True when the views share at least one byte. Disjoint byte ranges answer false at once; where the ranges meet
/// the element sets are intersected exactly (dense views, equal layouts, or enumeration of small views),
/// otherwise true (conservative).
bool views_overlap(const TensorView& a, const TensorView& b) noexcept;

/// True when `a` and `b` describe exactly the same elements in the same order (data, dtype, shape and strides on
/// every axis of extent > 1): the aliasing some operations support (in place, Matmul's D over C).
bool same_elements(const TensorView& a, const TensorView& b) noexcept;

/// InvalidArgument "<op>: <operand>: expected writable memory, got a read-only view ..." when a view the operation
/// would write is read-only (TensorView::read_only). A flag test: cheap enough for every call.
[[noreturn]] void throw_read_only(const TensorView& view, const char* operand, const char* op);
inline void check_writable(const TensorView& view, const char* operand, const char* op) {
  if (view.read_only()) [[unlikely]]
    throw_read_only(view, operand, op);
}
/// InvalidArgument "<op>: <operand> overlaps itself ..." when `view` is an output that reaches an element twice.
void check_no_self_overlap(const TensorView& view, const char* operand, const char* op);
/// InvalidArgument "<op>: <output> overlaps <input> ..." naming both byte ranges, when the views share memory.
void check_no_overlap(const TensorView& output, const char* output_name, const TensorView& input,
                      const char* input_name, const char* op);

}  // namespace cuplan::detail
