// SPDX-License-Identifier: Apache-2.0
// Tensor (owning, stream-ordered device memory or aligned host memory) and TensorRef (what calls take).

#include <fmt/format.h>

#include <cstdint>
#include <utility>

#include "base/cuda_check.hpp"
#include "base/geometry.hpp"
#include "base/overlap.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "cuplan/tensor.hpp"
#include "runtime/access.hpp"
#include "runtime/copy.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/storage.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

Tensor Tensor::empty(Shape shape, DType dtype, Device device, std::optional<StreamRef> stream, HostMemory host_memory) {
  return empty_strided(shape, row_major_strides(shape), dtype, device, stream, host_memory);
}

Tensor Tensor::empty_strided(Shape shape, Strides strides, DType dtype, Device device, std::optional<StreamRef> stream,
                             HostMemory host_memory) {
  const std::int64_t numel = checked_numel(shape, "Tensor::empty: shape");
  if (static_cast<unsigned>(dtype.code()) > static_cast<unsigned>(DTypeCode::i64)) [[unlikely]] {
    throw InvalidArgument(fmt::format("Tensor::empty: dtype: expected a DTypeCode from 0 to {}, got {}",
                                      static_cast<unsigned>(DTypeCode::i64), static_cast<unsigned>(dtype.code())));
  }
  if (static_cast<unsigned>(host_memory) > static_cast<unsigned>(HostMemory::pinned)) [[unlikely]] {
    throw InvalidArgument(
        fmt::format("Tensor::empty: host_memory: expected a HostMemory from 0 (pageable) to 1 "
                    "(pinned), got {}",
                    static_cast<unsigned>(host_memory)));
  }
  if (strides.size() != shape.size()) {
    throw InvalidArgument(
        fmt::format("Tensor::empty_strided: strides: expected {} strides (one per axis of shape {}), "
                    "got {}",
                    shape.size(), shape, strides));
  }
  // Elements spanned by the layout; strides must be non-negative and must not make two indices share an element.
  std::int64_t span = numel > 0 ? 1 : 0;
  for (int axis = 0; axis < shape.size() && numel > 0; ++axis) {
    if (strides[axis] < 0) {
      throw InvalidArgument(fmt::format("Tensor::empty_strided: strides[{}]: expected a non-negative stride, got {}",
                                        axis, strides[axis]));
    }
    std::int64_t extent = 0;
    if (__builtin_mul_overflow(shape[axis] - 1, strides[axis], &extent) ||
        __builtin_add_overflow(span, extent, &span)) {
      throw InvalidArgument(
          fmt::format("Tensor::empty_strided: shape {} with strides {} spans more than 2^63 elements", shape, strides));
    }
  }
  if (!detail::is_non_overlapping(shape, strides)) {
    throw InvalidArgument(
        fmt::format("Tensor::empty_strided: strides: expected a layout where no two elements share "
                    "memory, got strides {} for shape {}",
                    strides, shape));
  }
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(span, static_cast<std::int64_t>(dtype.size()), &bytes)) {
    throw InvalidArgument(fmt::format("Tensor::empty: shape {} of {} needs more than 2^63 bytes", shape, dtype));
  }
  if (device.is_cuda()) {
    detail::require_device_index_sign(device, "Tensor::empty: device");
    if (!cuda_available()) detail::require_cuda(fmt::format("Tensor::empty on {}", device).c_str());
    device.check_valid("Tensor::empty: device");
    const StreamRef on = stream ? *stream : current_stream(device);
    const Device stream_device = detail::is_default_stream_handle(on.native()) ? device : on.device();
    if (stream_device != device) {
      throw InvalidArgument(
          fmt::format("Tensor::empty: stream belongs to {}, expected a stream of {} (the device of the tensor)",
                      stream_device, device));
    }
    auto storage = detail::Storage::allocate(static_cast<std::size_t>(bytes), device, MemorySpace::device, on);
    TensorView view(storage->data(), dtype, shape, strides, device, MemorySpace::device);
    return detail::Access::make_tensor(std::move(view), std::move(storage));
  }
  const MemorySpace space = host_memory == HostMemory::pinned ? MemorySpace::host_pinned : MemorySpace::host_pageable;
  // Host memory is not stream-ordered; the stream given (if any) only names where later uses are recorded.
  auto storage =
      detail::Storage::allocate(static_cast<std::size_t>(bytes), Device::cpu(), space, stream.value_or(StreamRef{}));
  TensorView view(storage->data(), dtype, shape, strides, Device::cpu(), space);
  return detail::Access::make_tensor(std::move(view), std::move(storage));
}

Tensor Tensor::empty_like(const TensorView& like, Device device, std::optional<StreamRef> stream) {
  return empty(like.shape(), like.dtype(), device, stream);
}

Tensor Tensor::alias(const TensorRef& owner, const TensorView& view) {
  detail::require_defined(owner, "Tensor::alias", "owner");
  const std::shared_ptr<detail::Storage>& storage = detail::Access::storage(owner);
  if (storage && view.numel() > 0) {
    // The bytes the view reaches, lowest first: with negative strides data() is not the lowest byte.
    const detail::ByteRange reach = detail::byte_range(view);
    const auto begin = reinterpret_cast<std::uintptr_t>(storage->data());
    const std::uintptr_t end = begin + storage->bytes();
    if (reach.begin < begin || reach.end > end) {
      const auto offset = [&](std::uintptr_t at) {
        return at < begin ? -static_cast<std::int64_t>(begin - at) : static_cast<std::int64_t>(at - begin);
      };
      throw InvalidArgument(fmt::format(
          "Tensor::alias: view: expected memory inside the owner's bytes [0, {}), got a view of {} {} "
          "strides {} reaching bytes [{}, {}) of the owner",
          storage->bytes(), view.dtype(), view.shape(), view.strides(), offset(reach.begin), offset(reach.end)));
    }
  }
  return detail::Access::make_tensor(view, storage);
}

Tensor Tensor::wrap(const TensorView& view) {
  return detail::Access::make_tensor(view, nullptr);
}

Tensor Tensor::to(Device device, std::optional<StreamRef> stream) const {
  if (!defined()) [[unlikely]]
    detail::throw_undefined("Tensor::to", nullptr);
  Tensor result = empty(shape(), dtype(), device, stream);
  // The public copy: ordered after this tensor's pending producer on the copy's stream (so a blocking read given no
  // stream still sees a write on another one), seen by the ordering checker, and staged when large and pageable.
  copy(TensorRef(*this), TensorRef(result), stream);
  return result;
}

void Tensor::record_stream(StreamRef stream) const {
  if (!defined()) [[unlikely]]
    detail::throw_undefined("Tensor::record_stream", nullptr);
  if (storage_) storage_->record_use(stream);
}

StreamRef Tensor::allocation_stream() const noexcept {
  return storage_ ? storage_->allocation_stream() : StreamRef{};
}

void TensorRef::record_stream(StreamRef stream) const {
  if (storage_) storage_->record_use(stream);
}

Tensor TensorRef::as_tensor() const {
  return detail::Access::make_tensor(view_, storage_);
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
