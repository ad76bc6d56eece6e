// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs one planned copy of the exchange layer over host arrays the way the copy engine does: n[0] planes of n[1]
// rows of n[2] contiguous elements, at the transfer's offsets and strides.
#include <cstdint>
#include <vector>

#include "distributed/exchange/box_transfer.hpp"

namespace cuplan::testing {

inline void apply(const detail::dist::BoxTransfer& t, const std::vector<std::int64_t>& src,
                  std::vector<std::int64_t>& dst) {
  for (std::int64_t i = 0; i < t.n[0]; ++i)
    for (std::int64_t j = 0; j < t.n[1]; ++j)
      for (std::int64_t k = 0; k < t.n[2]; ++k) {
        const std::int64_t s = t.src_offset + i * t.src_stride[0] + j * t.src_stride[1] + k;
        const std::int64_t d = t.dst_offset + i * t.dst_stride[0] + j * t.dst_stride[1] + k;
        dst.at(static_cast<std::size_t>(d)) = src.at(static_cast<std::size_t>(s));
      }
}

}  // namespace cuplan::testing
