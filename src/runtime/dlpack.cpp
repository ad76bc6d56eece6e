// SPDX-License-Identifier: Apache-2.0
// DLPack exchange with ownership: Tensor::to_dlpack (a managed tensor sharing the Tensor's storage) and
// Tensor::from_dlpack (a Tensor owning a managed tensor), each with the consumer-stream handshake of `__dlpack__`.
// The unowned import, TensorView(const DLTensor&), is in tensor_view.cpp.

#include "cuplan/tensor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "base/geometry.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "runtime/access.hpp"
#include "runtime/dlpack_dtypes.hpp"
#include "runtime/storage.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

using namespace dlpack;  // DLPack's names (cuplan/dlpack.hpp)

namespace {

DLDataType dlpack_type(DType dtype, const char* who) {
  const std::optional<detail::DlpackDtype> row = detail::dlpack_of(dtype);
  if (!row)
    throw NotSupported(
        fmt::format("{}: dtype: expected a dtype with a DLPack type code, got {} (not supported)", who, dtype));
  DLDataType type{};
  type.lanes = 1;
  type.bits = row->bits;
  type.code = row->code;
  return type;
}

DLDevice dlpack_device(const TensorView& view) {
  switch (view.memory_space()) {
    case MemorySpace::host_pinned:
      return {kDLCUDAHost, 0};
    case MemorySpace::device:
      return {kDLCUDA, view.device().index()};
    case MemorySpace::managed:
      return {kDLCUDAManaged, 0};  // DLPack gives managed memory device id 0
    case MemorySpace::host_pageable:
      break;
  }
  return {kDLCPU, 0};
}

// The managed tensor and everything it points to, in one allocation that the deleter frees.
template <class Managed>
struct ExportContext {
  Managed managed{};
  std::shared_ptr<detail::Storage> storage;
  std::array<std::int64_t, Dims::max_rank> shape{};
  std::array<std::int64_t, Dims::max_rank> strides{};

  static void deleter(Managed* self) noexcept { delete static_cast<ExportContext*>(self->manager_ctx); }
};

// Orders the consumer's stream after the producer's work and records it as a use of the storage.
void export_handshake(detail::Storage& storage, const TensorView& view, const DLPackExchange& exchange) {
  std::optional<StreamRef> consumer = exchange.stream;
  if (!consumer && !view.on_host()) consumer = current_stream(view.device());
  if (!consumer) return;  // host memory and no consumer stream: the library's writes to it have finished
  // cuplan's own pending write (and, since the consumer may write, its reads on other streams) come first in either
  // case; the named producer, else every recorded use, covers the work cuplan cannot see.
  storage.order_access(*consumer, true);
  if (exchange.producer)
    consumer->wait(*exchange.producer);
  else
    storage.order_after_uses(*consumer);
  storage.record_use(*consumer);
  // What the consumer enqueues from now on may write the memory: cuplan's later accesses on other streams wait for
  // its stream (as far as the event that orders them can see).
  storage.note_access(*consumer, true);
}

template <class Managed>
Managed* export_managed(const TensorView& view, const std::shared_ptr<detail::Storage>& storage,
                        const DLPackExchange& exchange, const char* who) {
  if (!storage) {
    throw InvalidArgument(fmt::format(
        "{}: tensor: expected an owning Tensor (one that keeps its memory alive), got a Tensor::wrap of borrowed "
        "memory; export the owner, or copy into a Tensor::empty first",
        who));
  }
  const DLDataType type = dlpack_type(view.dtype(), who);
  auto context = std::make_unique<ExportContext<Managed>>();
  context->storage = storage;
  std::copy(view.shape().begin(), view.shape().end(), context->shape.begin());
  std::copy(view.strides().begin(), view.strides().end(), context->strides.begin());
  DLTensor& tensor = context->managed.dl_tensor;
  auto* base = static_cast<std::byte*>(storage->data());
  auto* first = static_cast<std::byte*>(view.data());
  tensor.data = base != nullptr ? base : first;
  tensor.byte_offset = base != nullptr && first != nullptr ? static_cast<std::uint64_t>(first - base) : 0;
  tensor.device = dlpack_device(view);
  tensor.ndim = view.ndim();
  tensor.dtype = type;
  tensor.shape = context->shape.data();
  tensor.strides = context->strides.data();
  context->managed.manager_ctx = context.get();
  context->managed.deleter = &ExportContext<Managed>::deleter;
  export_handshake(*storage, view, exchange);  // last: a failure leaves nothing to release
  return &context.release()->managed;
}

// Takes ownership of `managed` once its DLTensor is valid; the deleter runs when the last Tensor copy is gone.
template <class Managed>
Tensor import_managed(Managed* managed, const DLPackExchange& exchange, const char* who) {
  TensorView view(managed->dl_tensor);  // every field checked; an error leaves ownership with the caller
  // DLPack 1.x: the producer may declare the memory read-only (a NumPy array that is not writeable, a read-only
  // mapping); cuplan then refuses to write it.
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    if ((managed->flags & dlpack::flag_read_only) != 0) view = view.as_read_only();
  }
  std::optional<StreamRef> consumer = exchange.stream;
  if (!consumer && !view.on_host()) consumer = current_stream(view.device());
  // The owned bytes: from the lower of `data` and the lowest element to the end of the highest element.
  auto* base = static_cast<std::byte*>(managed->dl_tensor.data);
  std::byte* start = base;
  std::size_t bytes = 0;
  if (view.numel() > 0) {
    const detail::OffsetRange range = detail::offset_range(view.shape(), view.strides(), who);
    std::byte* lowest =
        static_cast<std::byte*>(view.data()) + range.lowest * static_cast<std::int64_t>(view.dtype().size());
    start = std::min(base, lowest);
    bytes = static_cast<std::size_t>(lowest - start) + view.span_bytes();
  }
  if (consumer && exchange.producer) consumer->wait(*exchange.producer);
  auto storage = detail::Storage::adopt(start, bytes, view.device(), view.memory_space(),
                                        consumer.value_or(StreamRef{}), [managed] {
                                          if (managed->deleter != nullptr) managed->deleter(managed);
                                        });
  return detail::Access::make_tensor(view, std::move(storage));
}

template <class Managed>
void require_managed(const Managed* managed, const char* who) {
  if (managed == nullptr)
    throw InvalidArgument(fmt::format("{}: managed: expected a pointer to a DLPack managed tensor, got null", who));
}

}  // namespace

DLManagedTensor* Tensor::to_dlpack(const DLPackExchange& exchange) const {
  return export_managed<DLManagedTensor>(view_, storage_, exchange, "Tensor::to_dlpack");
}

Tensor Tensor::from_dlpack(DLManagedTensor* managed, const DLPackExchange& exchange) {
  require_managed(managed, "Tensor::from_dlpack");
  return import_managed(managed, exchange, "Tensor::from_dlpack");
}

DLManagedTensorVersioned* Tensor::to_dlpack_versioned(const DLPackExchange& exchange) const {
  auto* managed = export_managed<DLManagedTensorVersioned>(view_, storage_, exchange, "Tensor::to_dlpack_versioned");
  managed->version.major = dlpack::version.major;
  managed->version.minor = dlpack::version.minor;
  managed->flags = view_.read_only() ? dlpack::flag_read_only : 0;
  return managed;
}

Tensor Tensor::from_dlpack(DLManagedTensorVersioned* managed, const DLPackExchange& exchange) {
  require_managed(managed, "Tensor::from_dlpack");
  if (managed->version.major != dlpack::version.major) {
    // DLPack: a consumer that cannot read the layout calls the deleter and reads nothing else.
    const std::uint32_t major = managed->version.major;
    if (managed->deleter != nullptr) managed->deleter(managed);
    throw NotSupported(fmt::format(
        "Tensor::from_dlpack: version.major: expected {} (the DLPack header cuplan was built with), got {} (not "
        "supported; the managed tensor's deleter was called)",
        dlpack::version.major, major));
  }
  return import_managed(managed, exchange, "Tensor::from_dlpack");
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
