// SPDX-License-Identifier: Apache-2.0
// Overlap analysis: self-overlap of one layout and shared memory between two views (see overlap.hpp).

#include "base/overlap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <utility>
#include <vector>

#include "base/geometry.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"

namespace cuplan::detail {
namespace {

// Enumerating offsets costs memory and time linear in the element count; past this the answer is conservative.
constexpr std::int64_t kEnumerationLimit = std::int64_t{1} << 20;

// Element offsets of every index tuple, sorted (the caller bounds numel).
std::vector<std::int64_t> sorted_offsets(const Shape& shape, const Strides& strides) {
  std::vector<std::int64_t> offsets{0};
  for (int axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] <= 1) continue;
    std::vector<std::int64_t> next;
    next.reserve(offsets.size() * static_cast<std::size_t>(shape[axis]));
    for (std::int64_t base : offsets)
      for (std::int64_t i = 0; i < shape[axis]; ++i) next.push_back(base + i * strides[axis]);
    offsets = std::move(next);
  }
  std::sort(offsets.begin(), offsets.end());
  return offsets;
}

std::int64_t numel_of(const Shape& shape) noexcept {
  std::int64_t n = 1;
  for (std::int64_t e : shape) n *= e;
  return n;
}

// Dense: the elements tile their byte range without gaps (any axis order).
bool covers_range(const TensorView& v) noexcept {
  return !self_overlaps(v.shape(), v.strides()) &&
         static_cast<std::size_t>(v.numel()) * v.dtype().size() == v.span_bytes();
}

std::string describe(const TensorView& v) {
  const ByteRange r = byte_range(v);
  return fmt::format("{} {} strides {} at bytes [{:#x}, {:#x})", v.dtype(), v.shape(), v.strides(), r.begin, r.end);
}

}  // namespace

ByteRange byte_range(const TensorView& v) noexcept {
  std::int64_t lowest = 0, highest = 0;
  for (int axis = 0; axis < v.ndim(); ++axis) {
    const std::int64_t reach = (v.shape()[axis] - 1) * v.strides()[axis];
    (reach < 0 ? lowest : highest) += reach;
  }
  const auto base = reinterpret_cast<std::uintptr_t>(v.data());
  const auto size = static_cast<std::int64_t>(v.dtype().size());
  return {base + static_cast<std::uintptr_t>(lowest * size), base + static_cast<std::uintptr_t>((highest + 1) * size)};
}

bool self_overlaps(const Shape& shape, const Strides& strides) noexcept {
  if (is_non_overlapping(shape, strides)) return false;
  // Axes of extent > 1; a zero stride on any of them reaches one element twice.
  std::int64_t extent[Dims::max_rank], stride[Dims::max_rank];
  int n = 0;
  for (int axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] == 0) return false;
    if (shape[axis] == 1) continue;
    if (strides[axis] == 0) return true;
    extent[n] = shape[axis];
    stride[n++] = std::llabs(strides[axis]);
  }
  if (n <= 1) return false;
  if (n == 2) {
    // i0 * s0 == i1 * s1 with 0 < i0 < n0, 0 < i1 < n1 has a solution iff the smallest one does:
    // i0 = s1 / g, i1 = s0 / g with g = gcd(s0, s1).
    const std::int64_t g = std::gcd(stride[0], stride[1]);
    return stride[1] / g < extent[0] && stride[0] / g < extent[1];
  }
  const std::int64_t count = numel_of(shape);
  if (count > kEnumerationLimit) return true;
  try {
    const std::vector<std::int64_t> offsets = sorted_offsets(shape, strides);
    return std::adjacent_find(offsets.begin(), offsets.end()) != offsets.end();
  } catch (...) {
    return true;  // out of memory for the enumeration: stay conservative
  }
}

bool same_elements(const TensorView& a, const TensorView& b) noexcept {
  return a.data() == b.data() && a.dtype() == b.dtype() && a.shape() == b.shape() &&
         same_strides(a.shape(), a.strides(), b.strides());
}

bool views_overlap(const TensorView& a, const TensorView& b) noexcept {
  if (a.numel() == 0 || b.numel() == 0 || a.data() == nullptr || b.data() == nullptr) return false;
  const ByteRange ra = byte_range(a), rb = byte_range(b);
  if (ra.end <= rb.begin || rb.end <= ra.begin) return false;
  // The ranges meet. Two views that each cover their whole range then share a byte.
  const bool dense_a = covers_range(a), dense_b = covers_range(b);
  if ((dense_a && dense_b) || same_elements(a, b)) return true;
  try {
    if (dense_a || dense_b) {
      // One covers its range: the other overlaps it iff one of its elements reaches into that range.
      const TensorView& sparse = dense_a ? b : a;
      const ByteRange dense = dense_a ? ra : rb;
      if (sparse.numel() > kEnumerationLimit) return true;
      const auto size = static_cast<std::int64_t>(sparse.dtype().size());
      const auto base = reinterpret_cast<std::uintptr_t>(sparse.data());
      for (std::int64_t offset : sorted_offsets(sparse.shape(), sparse.strides())) {
        const std::uintptr_t begin = base + static_cast<std::uintptr_t>(offset * size);
        if (begin < dense.end && dense.begin < begin + static_cast<std::uintptr_t>(size)) return true;
      }
      return false;
    }
    if (a.numel() + b.numel() > kEnumerationLimit) return true;
    // Byte intervals of every element on each side, then a merge: exact for any strides and dtypes.
    const auto intervals = [](const TensorView& v) {
      const auto size = static_cast<std::int64_t>(v.dtype().size());
      std::vector<std::pair<std::intptr_t, std::intptr_t>> out;
      for (std::int64_t offset : sorted_offsets(v.shape(), v.strides())) {
        const auto begin = reinterpret_cast<std::intptr_t>(v.data()) + static_cast<std::intptr_t>(offset * size);
        out.emplace_back(begin, begin + static_cast<std::intptr_t>(size));
      }
      return out;
    };
    const auto ia = intervals(a), ib = intervals(b);
    std::size_t i = 0, j = 0;
    while (i < ia.size() && j < ib.size()) {
      if (ia[i].second <= ib[j].first) {
        ++i;
      } else if (ib[j].second <= ia[i].first) {
        ++j;
      } else {
        return true;
      }
    }
    return false;
  } catch (...) {
    return true;
  }
}

void throw_read_only(const TensorView& view, const char* operand, const char* op) {
  throw InvalidArgument(fmt::format(
      "{}: {}: expected writable memory (the operation writes it), got a read-only view ({}); pass a writable view "
      "or a copy",
      op, operand, view));
}

void check_no_self_overlap(const TensorView& view, const char* operand, const char* op) {
  if (self_overlaps(view.shape(), view.strides())) {
    throw InvalidArgument(
        fmt::format("{}: {} overlaps itself (shape {}, strides {}): expected strides that give every element its own "
                    "address, got index tuples that reach the same element",
                    op, operand, view.shape(), view.strides()));
  }
}

void check_no_overlap(const TensorView& output, const char* output_name, const TensorView& input,
                      const char* input_name, const char* op) {
  if (views_overlap(output, input)) {
    throw InvalidArgument(fmt::format(
        "{}: {} overlaps {}: expected {} in memory separate from {}, got {} = {} and {} = {} sharing memory", op,
        output_name, input_name, output_name, input_name, output_name, describe(output), input_name, describe(input)));
  }
}

}  // namespace cuplan::detail
