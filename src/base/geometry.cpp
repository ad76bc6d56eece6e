// SPDX-License-Identifier: Apache-2.0
// Layout helpers: axis normalisation, overlap and density tests, copy reduction and the CPU strided copy.

#include "base/geometry.hpp"

#include "base/overlap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"

namespace cuplan::detail {

int normalize_axis(int axis, int ndim, const char* who) {
  if (axis < -ndim || axis >= ndim) {
    throw InvalidArgument(fmt::format("{}: axis {} is out of range for a {}-D tensor (expected {} <= axis < {})", who,
                                      axis, ndim, -ndim, ndim));
  }
  return axis < 0 ? axis + ndim : axis;
}

OffsetRange offset_range(const Shape& shape, const Strides& strides, const char* operand) {
  OffsetRange range;
  for (int axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] <= 1) continue;
    std::int64_t reach = 0;
    const bool overflow = __builtin_mul_overflow(shape[axis] - 1, strides[axis], &reach) ||
                          __builtin_add_overflow(strides[axis] < 0 ? range.lowest : range.highest, reach,
                                                 strides[axis] < 0 ? &range.lowest : &range.highest);
    if (overflow) {
      throw InvalidArgument(
          fmt::format("{}: shape {} with strides {} addresses beyond 64-bit element offsets", operand, shape, strides));
    }
  }
  return range;
}

void require_addressable_result(const char* who, const Shape& shape, DType dtype) {
  for (int axis = 0; axis < shape.size(); ++axis)
    if (shape[axis] == 0) return;  // an empty result, whatever the other extents
  std::int64_t bytes = static_cast<std::int64_t>(dtype.size());
  for (int axis = 0; axis < shape.size(); ++axis) {
    if (!__builtin_mul_overflow(bytes, shape[axis], &bytes)) continue;
    throw InvalidArgument(
        fmt::format("{}: operand shape: the result ({} of shape {}) needs more than 2^63 bytes", who, dtype, shape));
  }
}

namespace {

// Axes of extent > 1, ordered by increasing |stride|.
int sorted_axes(const Shape& shape, const Strides& strides, int (&order)[Dims::max_rank]) noexcept {
  int n = 0;
  for (int axis = 0; axis < shape.size(); ++axis)
    if (shape[axis] > 1) order[n++] = axis;
  std::stable_sort(order, order + n, [&](int a, int b) { return std::llabs(strides[a]) < std::llabs(strides[b]); });
  return n;
}

// Whether the axes in `order` (innermost first, extents > 1) have the running products of the extents before them
// as strides: a dense block in that order.
bool running_product_strides(const Shape& shape, const Strides& strides, const int* order, int n) noexcept {
  std::int64_t expected = 1;
  for (int i = 0; i < n; ++i) {
    if (strides[order[i]] != expected) return false;
    expected *= shape[order[i]];
  }
  return true;
}

bool has_zero_extent(const Shape& shape) noexcept {
  return std::any_of(shape.begin(), shape.end(), [](std::int64_t e) { return e == 0; });
}

}  // namespace

bool is_non_overlapping(const Shape& shape, const Strides& strides) noexcept {
  if (has_zero_extent(shape)) return true;
  int order[Dims::max_rank];
  const int n = sorted_axes(shape, strides, order);
  // The elements reached by the smaller axes span [0, covered]; the next stride must step past that span.
  std::int64_t covered = 0;
  for (int i = 0; i < n; ++i) {
    const std::int64_t stride = std::llabs(strides[order[i]]);
    if (stride <= covered) return false;
    std::int64_t reach = 0;
    if (__builtin_mul_overflow(stride, shape[order[i]] - 1, &reach) ||
        __builtin_add_overflow(covered, reach, &covered)) {
      return i + 1 == n;  // a span past 64 bits leaves no room for a larger stride after it
    }
  }
  return true;
}

void check_non_overlapping(const TensorView& view, const char* operand, const char* who) {
  check_no_self_overlap(view, operand, who);  // the one analysis (base/overlap.hpp)
}

bool is_row_major(const Shape& shape, const Strides& strides) noexcept {
  if (has_zero_extent(shape)) return true;
  int order[Dims::max_rank];
  int n = 0;
  for (int axis = shape.size() - 1; axis >= 0; --axis)
    if (shape[axis] > 1) order[n++] = axis;
  return running_product_strides(shape, strides, order, n);
}

bool is_dense(const Shape& shape, const Strides& strides) noexcept {
  if (has_zero_extent(shape)) return true;
  int order[Dims::max_rank];
  const int n = sorted_axes(shape, strides, order);
  return running_product_strides(shape, strides, order, n);
}

bool same_strides(const Shape& shape, const Strides& a, const Strides& b) noexcept {
  if (a.size() != shape.size() || b.size() != shape.size()) return false;
  for (int axis = 0; axis < shape.size(); ++axis)
    if (shape[axis] > 1 && a[axis] != b[axis]) return false;
  return true;
}

CopyGeometry reduce_copy(const Shape& shape, const Strides& src_strides, const Strides& dst_strides) noexcept {
  CopyGeometry g;
  g.numel = 1;
  for (int axis = 0; axis < shape.size(); ++axis) g.numel *= shape[axis];
  if (g.numel == 0) return g;

  // Largest |dst stride| first, so the innermost axis is the one the destination walks fastest.
  int order[Dims::max_rank];
  int n = sorted_axes(shape, dst_strides, order);
  std::reverse(order, order + n);

  for (int i = 0; i < n; ++i) {
    const int axis = order[i];
    if (g.rank > 0) {
      const int last = g.rank - 1;
      // Merge when one step of the outer axis equals a full sweep of the new inner axis, on both sides.
      if (g.src_strides[last] == src_strides[axis] * shape[axis] &&
          g.dst_strides[last] == dst_strides[axis] * shape[axis]) {
        g.shape[last] *= shape[axis];
        g.src_strides[last] = src_strides[axis];
        g.dst_strides[last] = dst_strides[axis];
        continue;
      }
    }
    g.shape[g.rank] = shape[axis];
    g.src_strides[g.rank] = src_strides[axis];
    g.dst_strides[g.rank] = dst_strides[axis];
    ++g.rank;
  }
  return g;
}

bool is_single_block(const CopyGeometry& g) noexcept {
  return g.rank == 0 || (g.rank == 1 && g.src_strides[0] == 1 && g.dst_strides[0] == 1);
}

bool is_pitched_2d(const CopyGeometry& g) noexcept {
  return g.rank == 2 && g.src_strides[1] == 1 && g.dst_strides[1] == 1 && g.src_strides[0] > 0 && g.dst_strides[0] > 0;
}

namespace {

template <std::size_t Size>
void copy_rows(const CopyGeometry& g, const std::byte* src, std::byte* dst) noexcept {
  const int inner = g.rank - 1;
  const std::int64_t count = g.shape[inner];
  const std::int64_t ss = g.src_strides[inner] * static_cast<std::int64_t>(Size);
  const std::int64_t ds = g.dst_strides[inner] * static_cast<std::int64_t>(Size);
  const bool contiguous = g.src_strides[inner] == 1 && g.dst_strides[inner] == 1;
  std::int64_t index[CopyGeometry::max_rank] = {};
  std::int64_t src_offset = 0, dst_offset = 0;  // bytes, of the current row's first element
  for (;;) {
    if (contiguous) {
      std::memcpy(dst + dst_offset, src + src_offset, static_cast<std::size_t>(count) * Size);
    } else {
      const std::byte* s = src + src_offset;
      std::byte* d = dst + dst_offset;
      for (std::int64_t i = 0; i < count; ++i, s += ss, d += ds) std::memcpy(d, s, Size);
    }
    // Odometer over the outer axes.
    int axis = inner - 1;
    for (; axis >= 0; --axis) {
      src_offset += g.src_strides[axis] * static_cast<std::int64_t>(Size);
      dst_offset += g.dst_strides[axis] * static_cast<std::int64_t>(Size);
      if (++index[axis] < g.shape[axis]) break;
      src_offset -= g.src_strides[axis] * g.shape[axis] * static_cast<std::int64_t>(Size);
      dst_offset -= g.dst_strides[axis] * g.shape[axis] * static_cast<std::int64_t>(Size);
      index[axis] = 0;
    }
    if (axis < 0) return;
  }
}

}  // namespace

void copy_strided_host(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size) noexcept {
  if (g.numel == 0) return;
  const auto* s = static_cast<const std::byte*>(src);
  auto* d = static_cast<std::byte*>(dst);
  if (g.rank == 0) {
    std::memcpy(d, s, element_size);
    return;
  }
  switch (element_size) {
    case 1:
      return copy_rows<1>(g, s, d);
    case 2:
      return copy_rows<2>(g, s, d);
    case 4:
      return copy_rows<4>(g, s, d);
    case 8:
      return copy_rows<8>(g, s, d);
    case 16:
      return copy_rows<16>(g, s, d);
    default:
      break;
  }
  // Any other size: one byte-sized "element" axis appended innermost.
  CopyGeometry bytes = g;
  for (int axis = 0; axis < g.rank; ++axis) {
    bytes.src_strides[axis] *= static_cast<std::int64_t>(element_size);
    bytes.dst_strides[axis] *= static_cast<std::int64_t>(element_size);
  }
  bytes.shape[g.rank] = static_cast<std::int64_t>(element_size);
  bytes.src_strides[g.rank] = 1;
  bytes.dst_strides[g.rank] = 1;
  bytes.rank = g.rank + 1;
  copy_rows<1>(bytes, s, d);
}

}  // namespace cuplan::detail
