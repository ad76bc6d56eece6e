// SPDX-License-Identifier: Apache-2.0
#pragma once
// Operands: shapes and strides, the non-owning TensorView and the owning Tensor (docs/getting-started.md).

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "cuplan/config.hpp"
#include "cuplan/device.hpp"
#include "cuplan/dlpack.hpp"
#include "cuplan/dtype.hpp"
#include "cuplan/export.hpp"
#include "cuplan/stream.hpp"

namespace cuplan {
// The library's internals, outside the versioned namespace (src/ declares them there too).
namespace detail {
class Storage;  // owned device or host memory with its stream-use record
struct Access;  // the library's own access to ownership (defined inside the library only)
}  // namespace detail
inline namespace CUPLAN_ABI_NAMESPACE {

class TensorRef;

/// Up to `max_rank` extents or strides, stored inline (no allocation). Shapes and strides count elements.
class CUPLAN_API Dims {
 public:
  /// Most entries a Dims holds.
  static constexpr int max_rank = 8;
  /// No entries (rank 0).
  Dims() = default;
  /// The values given, `{64, 256}` (InvalidArgument past max_rank).
  Dims(std::initializer_list<std::int64_t> values);  // InvalidArgument past max_rank
  /// The values of a span (InvalidArgument past max_rank).
  explicit Dims(std::span<const std::int64_t> values);
  /// `rank` entries, each `value` (InvalidArgument for a negative rank or one past max_rank).
  static Dims filled(int rank, std::int64_t value);

  /// Number of entries (the rank).
  int size() const noexcept { return rank_; }
  /// True for rank 0.
  bool empty() const noexcept { return rank_ == 0; }
  /// \name Element access
  /// @{

  /// Entry `i` (0 <= i < size(); not checked).
  std::int64_t operator[](int i) const noexcept { return values_[static_cast<std::size_t>(i)]; }
  std::int64_t& operator[](int i) noexcept { return values_[static_cast<std::size_t>(i)]; }
  /// @}
  /// \name Iteration
  /// @{

  /// The entries as a range.
  const std::int64_t* begin() const noexcept { return values_.data(); }
  const std::int64_t* end() const noexcept { return values_.data() + rank_; }
  std::int64_t* begin() noexcept { return values_.data(); }
  std::int64_t* end() noexcept { return values_.data() + rank_; }
  /// @}
  /// The entries as a span.
  std::span<const std::int64_t> span() const noexcept { return {values_.data(), static_cast<std::size_t>(rank_)}; }
  /// Appends `v` (InvalidArgument past max_rank).
  void push_back(std::int64_t v);  // InvalidArgument past max_rank

  /// Same rank and entries.
  friend bool operator==(const Dims& a, const Dims& b) noexcept;

 private:
  std::array<std::int64_t, max_rank> values_{};
  int rank_ = 0;
};
/// Same rank and entries.
CUPLAN_API bool operator==(const Dims& a, const Dims& b) noexcept;
/// Extents of a tensor, in elements.
using Shape = Dims;
/// Strides of a tensor, in elements.
using Strides = Dims;

/// Product of extents with overflow check (InvalidArgument naming `what` on overflow or a negative extent).
CUPLAN_API std::int64_t checked_numel(const Shape& shape, const char* what = "shape");
/// Row-major (C order) strides for `shape`.
CUPLAN_API Strides row_major_strides(const Shape& shape);
/// Column-major (Fortran order) strides for `shape`.
CUPLAN_API Strides column_major_strides(const Shape& shape);

/// Find the memory space and device of a pointer (cudaPointerGetAttributes). Where no driver or no GPU exists,
/// every pointer is pageable host memory.
struct PointerInfo {
  MemorySpace space = MemorySpace::host_pageable;  ///< where the memory lives
  Device device = Device::cpu();                   ///< the device of device and managed memory, else the CPU
};
/// The memory space and device of `pointer` (see PointerInfo); never throws.
CUPLAN_API PointerInfo pointer_info(const void* pointer) noexcept;

/// A non-owning view of memory: {data pointer, dtype, shape, strides in elements, device, memory space}.
/// Strides default to row-major. Device and memory space are found from the pointer unless stated.
class CUPLAN_API TensorView {
 public:
  /// An empty view (null data, rank 0).
  TensorView() = default;
  /// A view of `data` with `dtype` and `shape`; `strides` in elements (row-major if empty); `device` states the
  /// device (found from the pointer if empty). Strides may be negative (a reversed axis). InvalidArgument for a layout
  /// that does not fit (negative extents, misaligned data, overflow) and for a CUDA device of negative index.
  TensorView(const void* data, DType dtype, Shape shape, std::optional<Strides> strides = {},
             std::optional<Device> device = {});
  /// The same with the dtype taken from the pointer type (dtype_of<T>).
  template <class T>
  TensorView(T* data, Shape shape, std::optional<Strides> strides = {}, std::optional<Device> device = {})
      : TensorView(static_cast<const void*>(data), dtype_of<T>, shape, strides, device) {}
  /// Strides as a braced list, `{1, 64}`, which cannot become a std::optional<Strides>; `{}` means row-major.
  TensorView(const void* data, DType dtype, Shape shape, std::initializer_list<std::int64_t> strides,
             std::optional<Device> device = {})
      : TensorView(data, dtype, shape, braced_strides(strides), device) {}
  /// Braced strides with the dtype taken from the pointer type.
  template <class T>
  TensorView(T* data, Shape shape, std::initializer_list<std::int64_t> strides, std::optional<Device> device = {})
      : TensorView(static_cast<const void*>(data), dtype_of<T>, shape, braced_strides(strides), device) {}
  /// Full description with the memory space stated: no pointer query (used where the space is known).
  TensorView(const void* data, DType dtype, Shape shape, Strides strides, Device device, MemorySpace space);
  /// From a DLPack tensor (CPU, CUDA, CUDA host and managed devices; f16/bf16/f32/f64/complex/int types and f8).
  /// Borrowed: nothing is ordered or kept alive; Tensor::from_dlpack takes ownership and makes the stream handshake.
  explicit TensorView(const dlpack::DLTensor& tensor);
  /// The same from the `DLTensor` of a DLPack header the caller includes (any version: the layout is the same).
  template <class T>
  requires detail::DLPackForeignTensor<T>
  explicit TensorView(const T& tensor) : TensorView(*dlpack::cast<const dlpack::DLTensor>(&tensor)) {}

  /// Pointer to the element at index 0 of every axis.
  void* data() const noexcept { return data_; }
  /// The same as `T*` (not checked against dtype()).
  template <class T>
  T* data() const noexcept {
    return static_cast<T*>(data_);
  }
  /// Element type.
  DType dtype() const noexcept { return dtype_; }
  /// Extents.
  const Shape& shape() const noexcept { return shape_; }
  /// Strides in elements.
  const Strides& strides() const noexcept { return strides_; }
  /// Extent / stride of axis `axis`; negative indices count from the end (InvalidArgument if out of range).
  std::int64_t size(int axis) const;
  /// Stride of axis `axis` in elements; negative indices count from the end (InvalidArgument if out of range).
  std::int64_t stride(int axis) const;
  /// The device of the memory (the CPU for host memory).
  Device device() const noexcept { return device_; }
  /// Where the memory lives.
  MemorySpace memory_space() const noexcept { return space_; }
  /// True for host memory, pageable or pinned.
  bool on_host() const noexcept { return space_ == MemorySpace::host_pageable || space_ == MemorySpace::host_pinned; }
  /// Number of axes.
  int ndim() const noexcept { return shape_.size(); }
  /// Number of elements (product of the extents).
  std::int64_t numel() const noexcept { return numel_; }
  /// True for dense row-major layout (size-1 axes may have any stride).
  bool is_contiguous() const noexcept;
  /// Bytes between the lowest and highest addressed element, plus one element (0 when empty).
  std::size_t span_bytes() const noexcept;
  /// True when the memory may only be read: cuplan refuses the view wherever it would write (an `out`, the operand
  /// of an in-place FFT, the `dst` of copy) with InvalidArgument naming the operand. Set by as_read_only() and by
  /// Tensor::from_dlpack for a DLPack 1.x tensor flagged read-only; kept by copies of the view.
  bool read_only() const noexcept { return read_only_; }
  /// The same view, read-only (read_only()).
  TensorView as_read_only() const noexcept {
    TensorView view = *this;
    view.read_only_ = true;
    return view;
  }

 private:
  static std::optional<Strides> braced_strides(std::initializer_list<std::int64_t> strides) {
    if (strides.size() == 0) return std::nullopt;
    return Strides(strides);
  }
  void* data_ = nullptr;
  DType dtype_ = f32;
  Shape shape_;
  Strides strides_;
  Device device_ = Device::cpu();
  MemorySpace space_ = MemorySpace::host_pageable;
  std::int64_t numel_ = 0;
  bool read_only_ = false;
};

/// The stream handshake of a DLPack exchange (the `stream` argument of DLPack's `__dlpack__`): after the call, work
/// enqueued on the consumer's stream sees the producer's writes. The ordering is made on the GPU (an event recorded
/// on each producer stream and waited for on the consumer's); the host does not wait.
struct DLPackExchange {
  /// The consumer's stream. Unset: the current stream of the tensor's device (`current_stream()`); for host memory,
  /// none (cuplan's writes to host memory have finished when its calls return).
  std::optional<StreamRef> stream{};
  /// The stream whose work produced the data. Unset on export: every stream cuplan ran work on with the tensor (its
  /// allocation stream and each recorded use, Tensor::record_stream), a stricter order than needed, never a weaker
  /// one. Unset on import: no ordering is made (the producer ordered the exchange itself, as `__dlpack__` does).
  std::optional<StreamRef> producer{};
};

/// How host memory of an owning Tensor is allocated.
enum class HostMemory : std::uint8_t { pageable, pinned };

/// An owning tensor. Copies share the same memory (like a reference-counted array); the memory is released when
/// the last copy is gone. Device memory is allocated stream-ordered from a per-device pool on the stream given at
/// creation; every stream that uses the tensor through cuplan is recorded, and the release is ordered after all of
/// that work, so "allocated on s1, used on s2, dropped" is safe. Host memory is 64-byte aligned.
class CUPLAN_API Tensor {
 public:
  /// An undefined tensor (defined() is false): a placeholder. As an operand, and for to(), record_stream() and
  /// to_dlpack(), it is a StateError.
  Tensor() = default;
  /// Shares `other`'s memory.
  Tensor(const Tensor& other) = default;
  /// Shares `other`'s memory.
  Tensor& operator=(const Tensor& other) = default;
  /// Takes over `other`'s view and memory; `other` is left undefined (never a view of memory it no longer owns).
  Tensor(Tensor&& other) noexcept : view_(std::exchange(other.view_, {})), storage_(std::move(other.storage_)) {}
  /// Takes over `other`'s view and memory; `other` is left undefined.
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      view_ = std::exchange(other.view_, {});
      storage_ = std::move(other.storage_);
    }
    return *this;
  }
  ~Tensor() = default;
  /// Uninitialised tensor of `shape` and `dtype` on `device`, allocated on `stream` (current stream if omitted).
  static Tensor empty(Shape shape, DType dtype, Device device = Device::cpu(), std::optional<StreamRef> stream = {},
                      HostMemory host_memory = HostMemory::pageable);
  /// Uninitialised tensor with the given strides (in elements; non-negative, no two elements sharing memory), e.g.
  /// column-major. Allocates the span the strides cover.
  static Tensor empty_strided(Shape shape, Strides strides, DType dtype, Device device = Device::cpu(),
                              std::optional<StreamRef> stream = {}, HostMemory host_memory = HostMemory::pageable);
  /// Uninitialised tensor with the shape and dtype of `like`.
  static Tensor empty_like(const TensorView& like, Device device, std::optional<StreamRef> stream = {});
  /// A Tensor that aliases memory owned elsewhere (e.g. an in-place result); it frees nothing.
  static Tensor wrap(const TensorView& view);
  /// A Tensor for `view` that shares ownership with `owner` (e.g. the complex view of an in-place R2C result keeps
  /// the real operand's memory alive). A wrap when `owner` owns nothing. `view` must lie inside the owner's memory.
  static Tensor alias(const TensorRef& owner, const TensorView& view);

  /// The view of this tensor's memory.
  const TensorView& view() const noexcept { return view_; }
  /// The view of this tensor's memory, so that a Tensor goes where a TensorView is taken.
  operator const TensorView&() const noexcept { return view_; }  // NOLINT(google-explicit-constructor)
  /// \name Accessors
  /// @{

  /// As the TensorView accessors of view().
  void* data() const noexcept { return view_.data(); }
  template <class T>
  T* data() const noexcept {
    return view_.data<T>();
  }
  DType dtype() const noexcept { return view_.dtype(); }
  const Shape& shape() const noexcept { return view_.shape(); }
  const Strides& strides() const noexcept { return view_.strides(); }
  Device device() const noexcept { return view_.device(); }
  MemorySpace memory_space() const noexcept { return view_.memory_space(); }
  int ndim() const noexcept { return view_.ndim(); }
  std::int64_t numel() const noexcept { return view_.numel(); }
  /// @}
  /// False for a default-constructed Tensor (e.g. an output an epilog did not produce); true for every Tensor made
  /// by a factory, a call or a wrap, including one with no elements.
  bool defined() const noexcept { return storage_ != nullptr || view_.data() != nullptr || view_.ndim() > 0; }
  /// True when this Tensor owns its memory (false for Tensor::wrap).
  bool owning() const noexcept { return storage_ != nullptr; }
  /// True when the memory may only be read (TensorView::read_only()).
  bool read_only() const noexcept { return view_.read_only(); }
  /// A Tensor sharing this one's memory whose view is read-only: cuplan refuses it wherever it would write.
  Tensor as_read_only() const {
    Tensor tensor = *this;
    tensor.view_ = view_.as_read_only();
    return tensor;
  }

  /// A copy on `device` (stream-ordered; blocking when host memory is involved, the blocking rule,
  /// docs/getting-started.md).
  Tensor to(Device device, std::optional<StreamRef> stream = {}) const;
  /// Record that `stream` uses this tensor: its memory is not reused before that stream's work enqueued so far
  /// is done. cuplan calls this itself for every stream it runs work on; call it for your own kernels.
  void record_stream(StreamRef stream) const;
  /// The stream the memory was allocated on (the stream its release is enqueued on).
  StreamRef allocation_stream() const noexcept;

  /// Export as a DLPack managed tensor that shares ownership of the memory: this Tensor may be destroyed first, and
  /// the memory stays alive until the consumer calls the returned tensor's deleter (exactly once). Shape and strides
  /// are owned by the returned object; `data` is the start of the owned memory and `byte_offset` leads to element 0.
  /// The consumer's stream is ordered after the producer's work (DLPackExchange) and recorded as a use of the
  /// memory. InvalidArgument for a Tensor that owns nothing (Tensor::wrap). A caller holding a DLPack header's own
  /// `DLManagedTensor*` converts with dlpack::cast.
  dlpack::DLManagedTensor* to_dlpack(const DLPackExchange& exchange = {}) const;
  /// The same as a DLPack 1.x versioned managed tensor (version 1.1, dlpack::version; flags dlpack::flag_read_only
  /// for a read-only Tensor, else 0). The legacy DLManagedTensor of to_dlpack has no flags to say it.
  dlpack::DLManagedTensorVersioned* to_dlpack_versioned(const DLPackExchange& exchange = {}) const;
  /// Import a DLPack managed tensor, taking ownership: the Tensor and its copies keep the memory alive, and the
  /// managed tensor's deleter is called exactly once, when the last copy is gone and the work cuplan recorded on
  /// the memory has finished (the host waits for it then: the deleter is a host call). The DLTensor is checked as
  /// TensorView(const dlpack::DLTensor&) checks it; on an error the deleter is not called and ownership stays with
  /// the caller. The consumer's stream (DLPackExchange::stream) becomes the tensor's allocation stream, and it waits
  /// for DLPackExchange::producer when one is given. InvalidArgument for a null pointer.
  static Tensor from_dlpack(dlpack::DLManagedTensor* managed, const DLPackExchange& exchange = {});
  /// The same for a DLPack 1.x versioned managed tensor. NotSupported for a major version other than 1 (the
  /// deleter is then called, as DLPack requires of a consumer that cannot read the tensor). A tensor flagged
  /// read-only (dlpack::flag_read_only) gives a read-only Tensor (read_only()): cuplan reads it and refuses to write
  /// it.
  static Tensor from_dlpack(dlpack::DLManagedTensorVersioned* managed, const DLPackExchange& exchange = {});
  /// The same for the `DLManagedTensor` of a DLPack header the caller includes.
  template <class M>
  requires detail::DLPackForeignManaged<M>
  static Tensor from_dlpack(M* managed, const DLPackExchange& exchange = {}) {
    return from_dlpack(dlpack::cast<dlpack::DLManagedTensor>(managed), exchange);
  }
  /// The same for the `DLManagedTensorVersioned` of a DLPack 1.x header the caller includes.
  template <class M>
  requires detail::DLPackForeignManagedVersioned<M>
  static Tensor from_dlpack(M* managed, const DLPackExchange& exchange = {}) {
    return from_dlpack(dlpack::cast<dlpack::DLManagedTensorVersioned>(managed), exchange);
  }

 private:
  friend class TensorRef;
  friend struct detail::Access;
  TensorView view_;
  std::shared_ptr<detail::Storage> storage_;
};

/// What cuplan calls take as an operand: a Tensor (kept alive, its stream uses recorded) or a TensorView
/// (borrowed: the caller keeps the memory alive and orders its own producers and consumers).
class CUPLAN_API TensorRef {
 public:
  /// No operand (an empty view).
  TensorRef() = default;
  /// `tensor`, sharing its ownership. An undefined Tensor (default-constructed or moved from) has no memory to
  /// operate on: the call it is given to raises StateError naming the parameter (`out`, `operand`, `b`, ...).
  TensorRef(const Tensor& tensor) noexcept  // NOLINT(google-explicit-constructor)
      : view_(tensor.view()), storage_(tensor.storage_), undefined_(!tensor.defined()) {}
  /// Takes over `other`'s operand; `other` is left as no operand.
  TensorRef(TensorRef&& other) noexcept
      : view_(std::exchange(other.view_, {})),
        storage_(std::move(other.storage_)),
        undefined_(std::exchange(other.undefined_, false)) {}
  /// Takes over `other`'s operand; `other` is left as no operand.
  TensorRef& operator=(TensorRef&& other) noexcept {
    if (this != &other) {
      view_ = std::exchange(other.view_, {});
      storage_ = std::move(other.storage_);
      undefined_ = std::exchange(other.undefined_, false);
    }
    return *this;
  }
  /// Shares `other`'s operand.
  TensorRef(const TensorRef& other) = default;
  /// Shares `other`'s operand.
  TensorRef& operator=(const TensorRef& other) = default;
  ~TensorRef() = default;
  /// `view`, borrowed.
  TensorRef(const TensorView& view) : view_(view) {}  // NOLINT
  /// The operand's view (an empty one for an undefined Tensor).
  const TensorView& view() const noexcept { return view_; }
  /// True when cuplan owns the memory (an owning Tensor); false for a borrowed view.
  bool owning() const noexcept { return storage_ != nullptr; }
  /// Record a stream use when cuplan owns the memory (no-op for a borrowed view).
  void record_stream(StreamRef stream) const;
  /// This operand as a Tensor (sharing ownership when there is an owner, else a wrap).
  Tensor as_tensor() const;

 private:
  friend struct detail::Access;
  TensorView view_;
  std::shared_ptr<detail::Storage> storage_;
  bool undefined_ = false;  // made from an undefined Tensor: refused by the call, which names the parameter
};

/// Copy `src` into `dst` (same shape and dtype; any memory spaces and strides) in stream order on `stream`
/// (current stream if omitted). Blocking when either side is host memory and a GPU is involved, or both are host.
CUPLAN_API void copy(const TensorView& src, const TensorView& dst, std::optional<StreamRef> stream = {});
/// The same for operands that may be owning Tensors: their use by `stream` is recorded (Tensor::record_stream), so
/// dropping them right after the call is safe. Overloads for Tensor arguments keep calls unambiguous.
CUPLAN_API void copy(const TensorRef& src, const TensorRef& dst, std::optional<StreamRef> stream = {});
/// \name Overloads for Tensor arguments
/// @{

/// As copy(const TensorRef&, const TensorRef&, std::optional<StreamRef>).
CUPLAN_API void copy(const Tensor& src, const Tensor& dst, std::optional<StreamRef> stream = {});
CUPLAN_API void copy(const Tensor& src, const TensorView& dst, std::optional<StreamRef> stream = {});
CUPLAN_API void copy(const TensorView& src, const Tensor& dst, std::optional<StreamRef> stream = {});
/// @}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
