// SPDX-License-Identifier: Apache-2.0
// Shapes and strides: inline storage with a rank limit, and overflow-checked element counts.

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

namespace {

[[noreturn]] void throw_rank_too_large(std::size_t rank) {
  throw InvalidArgument(
      fmt::format("Dims: rank must be at most {} (Dims::max_rank), got rank {}", Dims::max_rank, rank));
}

}  // namespace

Dims::Dims(std::initializer_list<std::int64_t> values) : Dims(std::span<const std::int64_t>(values)) {}

Dims::Dims(std::span<const std::int64_t> values) {
  if (values.size() > static_cast<std::size_t>(max_rank)) throw_rank_too_large(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) values_[i] = values[i];
  rank_ = static_cast<int>(values.size());
}

Dims Dims::filled(int rank, std::int64_t value) {
  if (rank < 0) throw InvalidArgument(fmt::format("Dims::filled: expected a rank >= 0, got {}", rank));
  if (rank > max_rank) throw_rank_too_large(static_cast<std::size_t>(rank));
  Dims dims;
  for (int i = 0; i < rank; ++i) dims.values_[static_cast<std::size_t>(i)] = value;
  dims.rank_ = rank;
  return dims;
}

void Dims::push_back(std::int64_t v) {
  if (rank_ == max_rank) throw_rank_too_large(static_cast<std::size_t>(rank_) + 1);
  values_[static_cast<std::size_t>(rank_++)] = v;
}

bool operator==(const Dims& a, const Dims& b) noexcept {
  if (a.rank_ != b.rank_) return false;
  for (int i = 0; i < a.rank_; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

std::int64_t checked_numel(const Shape& shape, const char* what) {
  std::int64_t numel = 1;
  for (int axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] < 0) {
      throw InvalidArgument(fmt::format("{}: extent of axis {} must be >= 0, got {}", what, axis, shape[axis]));
    }
  }
  for (int axis = 0; axis < shape.size(); ++axis) {
    if (__builtin_mul_overflow(numel, shape[axis], &numel)) {
      throw InvalidArgument(
          fmt::format("{}: element count overflows 64 bits at axis {} (extent {})", what, axis, shape[axis]));
    }
  }
  return numel;
}

Strides row_major_strides(const Shape& shape) {
  Strides strides = Dims::filled(shape.size(), 1);
  std::int64_t step = 1;
  for (int axis = shape.size() - 1; axis >= 0; --axis) {
    strides[axis] = step;
    // Saturate on overflow: such a shape is rejected by checked_numel wherever a layout is validated.
    if (shape[axis] > 1 && __builtin_mul_overflow(step, shape[axis], &step)) step = INT64_MAX;
  }
  return strides;
}

Strides column_major_strides(const Shape& shape) {
  Strides strides = Dims::filled(shape.size(), 1);
  std::int64_t step = 1;
  for (int axis = 0; axis < shape.size(); ++axis) {
    strides[axis] = step;
    if (shape[axis] > 1 && __builtin_mul_overflow(step, shape[axis], &step)) step = INT64_MAX;
  }
  return strides;
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
