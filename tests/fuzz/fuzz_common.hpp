// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the libFuzzer targets: layouts drawn from the input bytes, and a host buffer that holds a view's span.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cuplan/cuplan.hpp"

namespace cuplan::fuzz {

inline DType pick_dtype(FuzzedDataProvider& in, bool complex_too = true) {
  static const DType all[] = {f32, f64, c64, c128, f16, bf16, i8, i32};
  const std::size_t n = complex_too ? std::size(all) : 2;
  return all[in.ConsumeIntegralInRange<std::size_t>(0, n - 1)];
}

/// A small shape (rank 0..max_rank, extents 0..max_extent) and strides that may be negative, zero or padded.
inline void pick_layout(FuzzedDataProvider& in, int max_rank, std::int64_t max_extent, Shape& shape, Strides& strides) {
  const int rank = in.ConsumeIntegralInRange<int>(0, max_rank);
  shape = Dims::filled(rank, 1);
  strides = Dims::filled(rank, 1);
  for (int a = 0; a < rank; ++a) shape[a] = in.ConsumeIntegralInRange<std::int64_t>(0, max_extent);
  if (in.ConsumeBool()) {
    strides = row_major_strides(shape);
  } else {
    for (int a = 0; a < rank; ++a) strides[a] = in.ConsumeIntegralInRange<std::int64_t>(-40, 40);
  }
}

/// Zeroed host memory that holds every element of (shape, strides) of `dtype`, and the data pointer of the view
/// inside it (offset so negative strides stay inside). Empty when the span is too large to bother.
struct Backing {
  std::vector<std::uint64_t> words;  // 8-byte aligned; 16-byte types get an aligned base below
  void* data = nullptr;
};
inline bool back(Backing& b, DType dtype, const Shape& shape, const Strides& strides, std::size_t limit = 1 << 16) {
  std::int64_t lowest = 0, highest = 0;
  for (int a = 0; a < shape.size(); ++a) {
    if (shape[a] == 0) return false;
    const std::int64_t reach = (shape[a] - 1) * strides[a];
    (reach < 0 ? lowest : highest) += reach;
  }
  const auto elements = static_cast<std::size_t>(highest - lowest + 1);
  const std::size_t bytes = elements * dtype.size() + 16;
  if (bytes > limit) return false;
  b.words.assign(bytes / 8 + 2, 0);
  auto base = reinterpret_cast<std::uintptr_t>(b.words.data());
  base = (base + 15) & ~std::uintptr_t{15};
  b.data = reinterpret_cast<void*>(base + static_cast<std::uintptr_t>(-lowest) * dtype.size());
  return true;
}

}  // namespace cuplan::fuzz
