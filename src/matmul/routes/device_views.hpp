// SPDX-License-Identifier: Apache-2.0
#pragma once
// Views of device buffers that the CUDA routes copy operands into and results out of.

#include <cstddef>

#include "cuplan/tensor.hpp"

namespace cuplan::detail::mm {

/// A device view of memory at `data` of `shape` with `strides`; dense row-major for dense_view.
inline TensorView device_view(void* data, DType dtype, const Shape& shape, const Strides& strides, int device) {
  return TensorView(data, dtype, shape, strides, Device::cuda(device), MemorySpace::device);
}
inline TensorView dense_view(void* data, DType dtype, const Shape& shape, int device) {
  return device_view(data, dtype, shape, row_major_strides(shape), device);
}

inline std::size_t bytes_of(const Shape& shape, DType dtype) {
  return static_cast<std::size_t>(checked_numel(shape)) * dtype.size();
}

}  // namespace cuplan::detail::mm
