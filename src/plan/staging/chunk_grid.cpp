// SPDX-License-Identifier: Apache-2.0
#include "plan/staging/chunk_grid.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cuplan/errors.hpp"

namespace cuplan::detail::staging {

std::int64_t ChunkBlock::offset(const Strides& strides) const noexcept {
  std::int64_t at = 0;
  for (int a = 0; a < begin.size(); ++a) at += begin[a] * strides[a];
  return at;
}

ChunkGrid::ChunkGrid(const Shape& shape, std::span<const int> outer_axes, int split_axis, const ChunkPlan& split,
                     const char* who)
    : shape_(shape), split_axis_(split_axis), split_(split), outer_count_(1) {
  if (shape.empty()) throw InvalidArgument(fmt::format("{}: staging: shape: expected rank >= 1, got rank 0", who));
  for (int a = 0; a < shape.size(); ++a)
    if (shape[a] < 1)
      throw InvalidArgument(
          fmt::format("{}: staging: shape: expected every extent >= 1, got {} along axis {}", who, shape[a], a));
  // An axis of the shape, not yet an outer axis.
  auto check_axis = [&](int axis, const char* what) {
    if (axis < 0 || axis >= shape.size())
      throw InvalidArgument(
          fmt::format("{}: staging: {}: expected an axis in [0, {}), got {}", who, what, shape.size(), axis));
    for (std::int64_t seen : outer_axes_)
      if (seen == axis)
        throw InvalidArgument(fmt::format("{}: staging: {}: axis {} is already an outer axis", who, what, axis));
  };
  for (int axis : outer_axes) {
    check_axis(axis, "outer axes");
    outer_axes_.push_back(axis);
    outer_count_ *= shape[axis];
  }
  std::int64_t units = 1;
  if (split_axis >= 0) {
    check_axis(split_axis, "split axis");
    units = shape[split_axis];
  }
  const std::int64_t covered = split.count < 1 ? 0 : split.begin(split.count - 1) + split.last;
  if (split.units != units || covered != units)
    throw InvalidArgument(fmt::format(
        "{}: staging: split: expected chunks covering the {} units of the split axis, got {} chunks of {} covering {}",
        who, units, split.count, split.chunk, covered));
}

ChunkBlock ChunkGrid::block(std::int64_t c) const noexcept {
  ChunkBlock b{Shape::filled(shape_.size(), 0), shape_};
  std::int64_t rest = c / split_.count;
  for (int i = outer_axes_.size() - 1; i >= 0; --i) {
    const int a = static_cast<int>(outer_axes_[i]);
    b.begin[a] = rest % shape_[a];
    b.extent[a] = 1;
    rest /= shape_[a];
  }
  if (split_axis_ >= 0) {
    const ChunkRange r = range(c);
    b.begin[split_axis_] = r.begin;
    b.extent[split_axis_] = r.size;
  }
  return b;
}

std::int64_t ChunkGrid::offset(std::int64_t c, const Strides& strides) const noexcept {
  std::int64_t at = 0, rest = c / split_.count;
  for (int i = outer_axes_.size() - 1; i >= 0; --i) {
    const int a = static_cast<int>(outer_axes_[i]);
    at += rest % shape_[a] * strides[a];
    rest /= shape_[a];
  }
  if (split_axis_ >= 0) at += range(c).begin * strides[split_axis_];
  return at;
}

ChunkPlan fixed_chunks(std::int64_t units, std::int64_t chunk, const char* who) {
  if (units < 0) throw InvalidArgument(fmt::format("{}: staging: units: expected a count >= 0, got {}", who, units));
  if (chunk < 1) throw InvalidArgument(fmt::format("{}: staging: chunk: expected >= 1 units, got {}", who, chunk));
  ChunkPlan plan;
  plan.units = units;
  if (units == 0) return plan;
  plan.chunk = std::min(chunk, units);
  plan.count = (units + plan.chunk - 1) / plan.chunk;
  plan.last = units - (plan.count - 1) * plan.chunk;
  plan.slots = static_cast<int>(std::min<std::int64_t>(max_slots, plan.count));
  return plan;
}

}  // namespace cuplan::detail::staging
