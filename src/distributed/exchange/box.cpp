// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/box.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cuplan/errors.hpp"

namespace cuplan::detail::dist {

std::int64_t Box::numel() const noexcept {
  std::int64_t count = 1;
  for (int d = 0; d < ndim; ++d) count *= n[static_cast<std::size_t>(d)];
  return count;
}

bool Box::empty() const noexcept {
  return numel() == 0;
}

bool Box::contains(const std::array<std::int64_t, 3>& index) const noexcept {
  for (std::size_t d = 0; d < static_cast<std::size_t>(ndim); ++d)
    if (index[d] < lo[d] || index[d] >= lo[d] + n[d]) return false;
  return true;
}

Box intersect(const Box& a, const Box& b) noexcept {
  Box r;
  r.ndim = a.ndim;
  for (std::size_t d = 0; d < 3; ++d) {
    const std::int64_t lo = std::max(a.lo[d], b.lo[d]);
    const std::int64_t hi = std::min(a.lo[d] + a.n[d], b.lo[d] + b.n[d]);
    r.lo[d] = lo;
    r.n[d] = std::max<std::int64_t>(0, hi - lo);
  }
  return r;
}

Block split(std::int64_t extent, int parts, int index) {
  if (parts < 1) throw InvalidArgument(fmt::format("split: parts: expected at least 1, got {}", parts));
  if (extent < 0) throw InvalidArgument(fmt::format("split: extent: expected 0 or more, got {}", extent));
  if (index < 0 || index >= parts)
    throw InvalidArgument(
        fmt::format("split: block index: expected 0..{} ({} parts), got {}", parts - 1, parts, index));
  const std::int64_t base = extent / parts;
  const std::int64_t extra = extent % parts;
  const std::int64_t i = index;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

std::int64_t local_offset(const Box& owner, const std::array<std::int64_t, 3>& index) noexcept {
  return ((index[0] - owner.lo[0]) * owner.n[1] + (index[1] - owner.lo[1])) * owner.n[2] + (index[2] - owner.lo[2]);
}

}  // namespace cuplan::detail::dist
