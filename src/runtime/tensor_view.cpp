// SPDX-License-Identifier: Apache-2.0
// TensorView: validation of a described layout, memory-space detection from a pointer, and DLPack import.

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <type_traits>

#include "base/cuda_check.hpp"
#include "base/geometry.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "cuplan/tensor.hpp"
#include "runtime/dlpack_dtypes.hpp"
#include "runtime/memory_space.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

using namespace dlpack;  // DLPack's names (cuplan/dlpack.hpp)

PointerInfo pointer_info(const void* pointer) noexcept {
  PointerInfo info;
  // Without a usable device every pointer is host memory; do not touch the CUDA runtime at all.
  if (pointer == nullptr || !cuda_available()) return info;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the error so it does not surface in an unrelated later call
    return info;
  }
  switch (attributes.type) {
    case cudaMemoryTypeHost:
      info.space = MemorySpace::host_pinned;
      break;
    case cudaMemoryTypeDevice:
      info.space = MemorySpace::device;
      info.device = Device::cuda(attributes.device);
      break;
    case cudaMemoryTypeManaged:
      info.space = MemorySpace::managed;
      info.device = Device::cuda(attributes.device);
      break;
    default:
      break;  // unregistered: pageable host memory
  }
  return info;
}

namespace {

// Validates the layout and returns the element count; the byte span must be addressable in 64 bits.
std::int64_t validate_layout(const void* data, DType dtype, const Shape& shape, const Strides& strides) {
  // A code outside DTypeCode has no element size: every byte count of the view would be 0.
  if (static_cast<unsigned>(dtype.code()) > static_cast<unsigned>(DTypeCode::i64)) [[unlikely]] {
    throw InvalidArgument(fmt::format("TensorView: dtype: expected a DTypeCode from 0 to {}, got {}",
                                      static_cast<unsigned>(DTypeCode::i64), static_cast<unsigned>(dtype.code())));
  }
  if (strides.size() != shape.size()) {
    throw InvalidArgument(fmt::format("TensorView: strides {} have rank {}, expected rank {} (the rank of shape {})",
                                      strides, strides.size(), shape.size(), shape));
  }
  const std::int64_t numel = checked_numel(shape, "TensorView: shape");
  if (numel == 0) return 0;
  if (data == nullptr) {
    throw InvalidArgument(
        fmt::format("TensorView: data is null, expected a non-null pointer for shape {} ({} elements)", shape, numel));
  }
  const detail::OffsetRange range = detail::offset_range(shape, strides, "TensorView");
  std::int64_t elements = 0, bytes = 0;
  if (__builtin_sub_overflow(range.highest, range.lowest, &elements) ||
      __builtin_add_overflow(elements, 1, &elements) ||
      __builtin_mul_overflow(elements, static_cast<std::int64_t>(dtype.size()), &bytes)) {
    throw InvalidArgument(
        fmt::format("TensorView: shape {} with strides {} of {} spans more than 2^63 bytes", shape, strides, dtype));
  }
  return numel;
}

// The memory space for a stated device: checked against what the runtime knows about the pointer.
MemorySpace stated_space(const void* data, Device device) {
  detail::require_device_index_sign(device, "TensorView: device");
  const PointerInfo found = pointer_info(data);
  const bool on_device = found.space == MemorySpace::device || found.space == MemorySpace::managed;
  if (device.is_cpu()) {
    if (found.space == MemorySpace::device) {
      throw InvalidArgument(
          fmt::format("TensorView: device stated as cpu, but the pointer is device memory of {}: expected host memory",
                      found.device));
    }
    // Managed memory stated as cpu is used as the host memory it also is.
    return found.space == MemorySpace::managed ? MemorySpace::host_pageable : found.space;
  }
  if (on_device && found.device != device) {
    throw InvalidArgument(fmt::format("TensorView: device stated as {}, but the pointer is {} memory of {}", device,
                                      found.space, found.device));
  }
  if (on_device) return found.space;
  // Stated CUDA device for memory the runtime does not know as device memory. Without a GPU the runtime cannot
  // tell, so the statement is taken as given; with one, host memory here is a mistake worth naming.
  if (cuda_available() && data != nullptr) {
    throw InvalidArgument(
        fmt::format("TensorView: device stated as {}, but the pointer is {} memory: expected device or managed memory",
                    device, found.space));
  }
  return MemorySpace::device;
}

}  // namespace

TensorView::TensorView(const void* data, DType dtype, Shape shape, std::optional<Strides> strides,
                       std::optional<Device> device)
    : data_(const_cast<void*>(data)),
      dtype_(dtype),
      shape_(shape),
      strides_(strides ? *strides : row_major_strides(shape)) {
  numel_ = validate_layout(data, dtype_, shape_, strides_);
  if (device) {
    space_ = stated_space(data, *device);
    device_ = detail::is_host(space_) ? Device::cpu() : *device;
  } else {
    const PointerInfo found = pointer_info(data);
    space_ = found.space;
    device_ = found.device;
  }
}

TensorView::TensorView(const void* data, DType dtype, Shape shape, Strides strides, Device device, MemorySpace space)
    : data_(const_cast<void*>(data)), dtype_(dtype), shape_(shape), strides_(strides), device_(device), space_(space) {
  numel_ = validate_layout(data, dtype_, shape_, strides_);
  if (static_cast<unsigned>(space) > static_cast<unsigned>(MemorySpace::managed)) [[unlikely]] {
    throw InvalidArgument(fmt::format("TensorView: space: expected a MemorySpace from 0 to {}, got {}",
                                      static_cast<unsigned>(MemorySpace::managed), static_cast<unsigned>(space)));
  }
  detail::require_device_index_sign(device, "TensorView: device");
  const bool host = detail::is_host(space);
  if (host != device.is_cpu()) {
    throw InvalidArgument(fmt::format("TensorView: memory space {} does not fit device {}: expected {}", space, device,
                                      host ? "cpu" : "a CUDA device"));
  }
}

std::int64_t TensorView::size(int axis) const {
  return shape_[detail::normalize_axis(axis, ndim(), "TensorView::size")];
}

std::int64_t TensorView::stride(int axis) const {
  return strides_[detail::normalize_axis(axis, ndim(), "TensorView::stride")];
}

bool TensorView::is_contiguous() const noexcept {
  return detail::is_row_major(shape_, strides_);
}

std::size_t TensorView::span_bytes() const noexcept {
  if (numel_ == 0) return 0;
  std::int64_t lowest = 0, highest = 0;  // fits: the constructor checked the span for overflow
  for (int axis = 0; axis < shape_.size(); ++axis) {
    const std::int64_t reach = (shape_[axis] - 1) * strides_[axis];
    (reach < 0 ? lowest : highest) += reach;
  }
  return static_cast<std::size_t>(highest - lowest + 1) * dtype_.size();
}

namespace {

DType dlpack_dtype(DLDataType type) {
  if (type.lanes == 1)
    if (const std::optional<DType> dtype = detail::dtype_of_dlpack(type.code, type.bits)) return *dtype;
  throw NotSupported(
      fmt::format("TensorView(DLTensor): dtype: expected float 16/32/64, bfloat 16, complex 32/64/128, int 8/32/64 or "
                  "float8 e4m3fn/e5m2 with 1 lane, got (code {}, bits {}, lanes {}) (not supported)",
                  static_cast<int>(type.code), static_cast<int>(type.bits), static_cast<int>(type.lanes)));
}

}  // namespace

TensorView::TensorView(const DLTensor& tensor) {
  // Every field is checked before it is read: a DLTensor comes from another library and may be malformed.
  if (tensor.ndim < 0 || tensor.ndim > Dims::max_rank) {
    throw InvalidArgument(
        fmt::format("TensorView(DLTensor): ndim: expected 0 to {}, got {}", Dims::max_rank, tensor.ndim));
  }
  const DType dtype = dlpack_dtype(tensor.dtype);
  const auto rank = static_cast<std::size_t>(tensor.ndim);
  if (rank > 0 && tensor.shape == nullptr) {
    throw InvalidArgument(fmt::format(
        "TensorView(DLTensor): shape: expected a pointer to {} extents (ndim = {}), got null", rank, tensor.ndim));
  }
  for (std::size_t i = 0; i < rank; ++i) {
    if (tensor.shape[i] < 0)
      throw InvalidArgument(
          fmt::format("TensorView(DLTensor): shape[{}]: expected an extent >= 0, got {}", i, tensor.shape[i]));
  }
  const Shape shape(std::span<const std::int64_t>(tensor.shape, rank));
  const std::int64_t numel = checked_numel(shape, "TensorView(DLTensor): shape");  // names an overflow first
  // Null strides mean row-major (DLPack's compact layout).
  const Strides strides =
      tensor.strides ? Strides(std::span<const std::int64_t>(tensor.strides, rank)) : row_major_strides(shape);
  if (tensor.data == nullptr && tensor.byte_offset != 0) {
    throw InvalidArgument(fmt::format("TensorView(DLTensor): byte_offset: expected 0 with a null data pointer, got {}",
                                      tensor.byte_offset));
  }
  const void* data =
      tensor.data ? static_cast<const void*>(static_cast<const std::byte*>(tensor.data) + tensor.byte_offset) : nullptr;
  if (data == nullptr && numel > 0) {
    throw InvalidArgument(fmt::format(
        "TensorView(DLTensor): data: expected a non-null pointer for shape {} ({} elements), got null", shape, numel));
  }
  Device device = Device::cpu();
  MemorySpace space = MemorySpace::host_pageable;
  // Read as its underlying integer: a producer in another language may store a value the C++ enum does not name,
  // and loading that as the enum would be undefined behaviour.
  std::underlying_type_t<DLDeviceType> device_type = 0;
  static_assert(sizeof(device_type) == sizeof(tensor.device.device_type));
  std::memcpy(&device_type, &tensor.device.device_type, sizeof(device_type));
  switch (device_type) {
    case kDLCPU:
      space =
          pointer_info(data).space == MemorySpace::host_pinned ? MemorySpace::host_pinned : MemorySpace::host_pageable;
      break;
    case kDLCUDAHost:
      space = MemorySpace::host_pinned;
      break;
    case kDLCUDA:
      if (tensor.device.device_id < 0 || (cuda_available() && tensor.device.device_id >= cuda_device_count()))
        throw InvalidArgument(fmt::format(
            "TensorView(DLTensor): device.device_id: expected a CUDA device index {}, got {}",
            cuda_available() ? fmt::format("in [0, {}) (the visible devices)", cuda_device_count()) : ">= 0",
            tensor.device.device_id));
      space = MemorySpace::device;
      device = Device::cuda(tensor.device.device_id);
      break;
    case kDLCUDAManaged: {
      // DLPack gives managed memory device id 0; the runtime knows the device it was allocated for.
      const PointerInfo found = pointer_info(data);
      space = MemorySpace::managed;
      device = found.space == MemorySpace::managed ? found.device : Device::cuda(tensor.device.device_id);
      break;
    }
    default:
      throw NotSupported(
          fmt::format("TensorView(DLTensor): device.device_type: expected kDLCPU, kDLCUDA, kDLCUDAHost or "
                      "kDLCUDAManaged, got {} (not supported)",
                      static_cast<long long>(device_type)));
  }
  *this = TensorView(data, dtype, shape, strides, device, space);
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
