// SPDX-License-Identifier: Apache-2.0
#pragma once
// The rows of one axis of a real-to-real transform: every index of the other axes, as a mixed-radix number, with the
// offsets of a row in the axis's source and destination. Shared by the pass kernels and the fused kernels.

#include <cstdint>

#include "r2r/algorithms.hpp"

namespace cuplan::detail {

/// The rows of one axis pass: every index of the other axes, as a mixed-radix number (outermost first), with the
/// element strides of the pass's source and destination.
struct R2RRows {
  /// One digit of the row number: an axis's extent and its strides in the source and the destination.
  struct Digit {
    std::int64_t extent = 1;
    std::int64_t src_stride = 0;
    std::int64_t dst_stride = 0;
  };
  static constexpr int max_dims = 8;
  int dims = 0;
  Digit digit[max_dims] = {};
  std::int64_t rows = 0;
};

/// The element offsets of row `row` in the source and the destination.
CUPLAN_R2R_HD void r2r_row_offsets(const R2RRows& r, std::int64_t row, std::int64_t& src, std::int64_t& dst) {
  src = 0;
  dst = 0;
  for (int d = r.dims - 1; d >= 0; --d) {
    const R2RRows::Digit& digit = r.digit[d];
    const std::int64_t i = row % digit.extent;
    row /= digit.extent;
    src += i * digit.src_stride;
    dst += i * digit.dst_stride;
  }
}

}  // namespace cuplan::detail
