// SPDX-License-Identifier: Apache-2.0
#pragma once
// Streams, events and the current stream (docs/streams.md): the CuPy model in C++.

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>

#include "cuplan/cuda_compat.hpp"
#include "cuplan/device.hpp"
#include "cuplan/export.hpp"

namespace cuplan {
// The library's internals, outside the versioned namespace (src/ declares them there too).
namespace detail {
class StreamHandle;  // shared owner of a cudaStream_t made by cuplan (see Stream)
struct ScopeEntry;   // an open StreamScope, shared with its thread's current-stream slot
struct Access;       // the library's own access to ownership (defined inside the library only)
}  // namespace detail
inline namespace CUPLAN_ABI_NAMESPACE {

class Stream;
class Event;

/// A non-owning reference to a CUDA stream: what options and calls take. Implicit from Stream, cudaStream_t and
/// cuda::stream_ref. Comparing two refs compares the underlying streams. Without a GPU every stream is a host stream
/// (docs/streams.md, "Without a GPU"): its device is the CPU, work on it runs at the call, synchronize() returns at
/// once and done() is true.
class CUPLAN_API StreamRef {
 public:
  /// The legacy default stream of the current device.
  StreamRef() = default;
  /// Refers to `stream` (keeping a cuplan-made stream alive while tensors record it). StateError for a moved-from
  /// Stream, which refers to no stream: it never stands for the default stream.
  StreamRef(const Stream& stream);  // NOLINT(google-explicit-constructor)
  /// Refers to a stream made elsewhere; null is the legacy default stream.
  StreamRef(cudaStream_t handle) noexcept : handle_(handle) {}  // NOLINT
#if CUPLAN_HAS_CUDA
  /// Refers to the stream of a libcu++ stream reference (CUDA builds only: libcu++ is part of the toolkit).
  StreamRef(cuda::stream_ref ref) noexcept : handle_(ref.get()) {}  // NOLINT
#endif

  /// The CUDA stream handle.
  cudaStream_t native() const noexcept {
    return handle_;
  }
  /// The CUDA stream handle, for CUDA calls and kernel launches.
  operator cudaStream_t() const noexcept {
    return handle_;
  }  // NOLINT
#if CUPLAN_HAS_CUDA
  /// The stream as a libcu++ stream reference (CUDA builds only).
  operator cuda::stream_ref() const noexcept {
    return cuda::stream_ref(handle_);
  }  // NOLINT
#endif
  /// The device the stream belongs to (cudaStreamGetDevice for streams made elsewhere).
  Device device() const;
  /// True for a stream made by cuplan (Stream's constructors), which tensors that used it keep alive.
  bool owning() const noexcept {
    return owner_ != nullptr;
  }

  /// Block the host until all work on the stream is done.
  void synchronize() const;
  /// True when all work enqueued so far is done.
  bool done() const;
  /// Record a new event on the stream and return it.
  Event record() const;
  /// Make later work on the stream wait for `event` (StateError if the event was never recorded).
  void wait(const Event& event) const;
  /// Make later work on the stream wait for all work enqueued on `other` so far.
  void wait(StreamRef other) const;

  /// Same underlying stream.
  friend bool operator==(StreamRef a, StreamRef b) noexcept {
    return a.handle_ == b.handle_;
  }

 private:
  friend class Stream;
  friend struct detail::Access;
  cudaStream_t handle_ = nullptr;
  detail::StreamHandle* owner_ = nullptr;  // owner of a cuplan-made stream, else null
  int device_ = -1;                        // known for cuplan-made streams, else looked up
};

/// A CUDA stream: owning (created and destroyed by cuplan) or wrapping one made elsewhere. Movable, not copyable.
/// An owning stream is destroyed when the Stream and every Tensor that used it are gone, so stream-ordered frees
/// of those tensors never run on a destroyed stream. Without a GPU, Stream() and the two defaults are host streams
/// on Device::cpu(); external() and a stream on a named CUDA device are NotSupported there.
class CUPLAN_API Stream {
 public:
  /// A new non-blocking stream on the current device, default priority.
  Stream();
  /// A new stream on `device` with `priority` (lower is higher priority, clamped to the device's range).
  explicit Stream(Device device, int priority = 0, bool non_blocking = true);
  /// Wraps a stream made elsewhere; cuplan never destroys it. The caller keeps it alive while cuplan uses it.
  static Stream external(cudaStream_t handle);
  /// The legacy default stream (synchronises with all blocking streams) of `device` (current if omitted).
  static Stream legacy_default(std::optional<Device> device = {});
  /// The per-thread default stream of `device` (current if omitted).
  static Stream per_thread_default(std::optional<Device> device = {});

  /// Takes over the stream; the moved-from object refers to no stream: its calls, its handle, its device and a
  /// StreamRef made from it throw StateError (only valid() and owning() answer).
  Stream(Stream&&) noexcept;
  /// Drops this object's stream (see the destructor) and takes over the other's.
  Stream& operator=(Stream&&) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  /// Drops this object's share of an owning stream, which is destroyed when no Tensor that used it is left. The
  /// shared work areas of an owning stream (WorkAreaPolicy::shared) are released here, stream-ordered after their
  /// last use; a stream cuplan did not make keeps its areas until memory::release_work_areas.
  ~Stream();

  /// The CUDA stream handle (StateError for a moved-from Stream).
  cudaStream_t native() const {
    live("native");
    return handle_;
  }
  /// The CUDA stream handle, for CUDA calls and kernel launches (StateError for a moved-from Stream).
  operator cudaStream_t() const {  // NOLINT
    live("the cudaStream_t conversion");
    return handle_;
  }
#if CUPLAN_HAS_CUDA
  /// The stream as a libcu++ stream reference (StateError for a moved-from Stream; CUDA builds only).
  operator cuda::stream_ref() const {  // NOLINT
    live("the cuda::stream_ref conversion");
    return cuda::stream_ref(handle_);
  }
#endif
  /// A non-owning reference to this stream (StateError for a moved-from Stream).
  StreamRef ref() const {
    return StreamRef(*this);
  }
  /// The device the stream belongs to (Device::cpu() for a host stream; StateError for a moved-from Stream).
  Device device() const {
    live("device");
    return host_ ? Device::cpu() : Device::cuda(device_);
  }
  /// The stream's priority (lower is higher priority; 0 for a host stream).
  int priority() const;
  /// True when cuplan created the stream and destroys it (false for external() and the default streams).
  bool owning() const noexcept {
    return owner_ != nullptr;
  }
  /// False for a moved-from Stream, which refers to no stream.
  bool valid() const noexcept {
    return device_ >= 0;
  }

  /// Record a new event on this stream and return it.
  Event record() const;
  /// Make later work on this stream wait for `event` (StateError if the event was never recorded).
  void wait(const Event& event) const;
  /// Make later work on this stream wait for all work enqueued on `other` so far.
  void wait(StreamRef other) const;
  /// Block the host until all work on this stream is done.
  void synchronize() const;
  /// True when all work enqueued so far is done.
  bool done() const;
  /// Make this the calling thread's current stream for its device, until another use() or a scope changes it.
  void use() const;

 private:
  friend class StreamRef;
  Stream(cudaStream_t handle, int device) noexcept : handle_(handle), device_(device) {}
  static Stream host_default(cudaStream_t handle);
  /// StateError naming `what` for a moved-from Stream.
  void live(const char* what) const {
    if (device_ < 0) [[unlikely]]
      throw_moved_from(what);
  }
  [[noreturn]] static void throw_moved_from(const char* what);
  void retire() noexcept;
  cudaStream_t handle_ = nullptr;
  int device_ = 0;
  std::shared_ptr<detail::StreamHandle> owner_;
  bool host_ = false;  // a host stream (no GPU): no CUDA stream behind the handle
};

/// A non-owning reference to a recorded event, for `after` lists.
class CUPLAN_API EventRef {
 public:
  /// No event.
  EventRef() = default;
  /// Refers to `event`, which must have been recorded (StateError otherwise).
  EventRef(const Event& event);  // NOLINT(google-explicit-constructor); StateError if never recorded
  /// Refers to an event made elsewhere; the caller records it before the call that waits for it.
  explicit EventRef(cudaEvent_t handle) noexcept : handle_(handle) {}
  /// The CUDA event handle.
  cudaEvent_t native() const noexcept { return handle_; }

 private:
  cudaEvent_t handle_ = nullptr;
};

/// A CUDA event. Movable, not copyable. Without timing (cheaper) unless asked. Without a GPU it is a host event:
/// record() takes a host timestamp, the event is complete at once, and elapsed_ms() subtracts the timestamps.
class CUPLAN_API Event {
 public:
  /// An event on the current device. `timing` enables elapsed_ms.
  explicit Event(bool timing = false);
  /// An event on `device` (a host event for Device::cpu() without a GPU); `timing` enables elapsed_ms.
  Event(Device device, bool timing);
  /// Takes over the event; the moved-from object holds none.
  Event(Event&&) noexcept;
  /// Destroys this object's event and takes over the other's.
  Event& operator=(Event&&) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  /// Capture the work enqueued on `stream` so far (current stream if omitted).
  void record(std::optional<StreamRef> stream = {});
  /// Block the host until the captured work is done (StateError if never recorded).
  void synchronize() const;
  /// True when the captured work is done (StateError if never recorded).
  bool done() const;
  /// True once record() was called.
  bool recorded() const noexcept { return recorded_; }
  /// True when the event was made with timing (elapsed_ms works).
  bool timing() const noexcept { return timing_; }
  /// The CUDA event handle.
  cudaEvent_t native() const noexcept { return handle_; }
  /// Milliseconds between two recorded timing events (StateError if either was not recorded or lacks timing).
  static float elapsed_ms(const Event& start, const Event& stop);

 private:
  cudaEvent_t handle_ = nullptr;
  bool timing_ = false;
  bool recorded_ = false;
  bool host_ = false;              // a host event (no GPU): handle_ is a unique token, never given to CUDA
  std::int64_t host_time_ns_ = 0;  // steady-clock time of the last record() of a host event
};

/// Events a call must wait for before its work starts (`.after = {e1, e2}`); holds up to 8 without allocating.
class CUPLAN_API EventList {
 public:
  /// Most events a list holds.
  static constexpr std::size_t capacity = 8;
  /// No events.
  EventList() = default;
  /// The events given (InvalidArgument past `capacity`).
  EventList(std::initializer_list<EventRef> events);  // InvalidArgument past `capacity`
  /// Number of events.
  std::size_t size() const noexcept { return size_; }
  /// True when there are no events.
  bool empty() const noexcept { return size_ == 0; }
  /// First event.
  const EventRef* begin() const noexcept { return events_.data(); }
  /// Past the last event.
  const EventRef* end() const noexcept { return events_.data() + size_; }

 private:
  std::array<EventRef, capacity> events_{};
  std::size_t size_ = 0;
};

/// The calling thread's current stream for `device` (current device if omitted): the innermost StreamScope,
/// else the last Stream::use(), else the legacy default stream (the per-thread default stream when the
/// environment variable CUPLAN_PER_THREAD_DEFAULT_STREAM=1).
CUPLAN_API StreamRef current_stream(std::optional<Device> device = {});

/// While alive, `stream` is the current stream of this thread for the stream's device (like CuPy's `with s:`).
/// Scopes nest; the previous stream is restored when the scope ends, also by exception. Scopes may also end out of
/// order (held on the heap) or on another thread: the thread's current stream is always that of its innermost scope
/// still open, else what was current before the first one. The scope holds a share of a cuplan-made stream, so the
/// Stream object may be destroyed first.
class CUPLAN_API StreamScope {
 public:
  /// Makes `stream` current for its device (on the calling thread).
  explicit StreamScope(StreamRef stream);
  /// Ends the scope: its thread's current stream becomes that of its innermost scope still open, else what was
  /// current before the first one.
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  int device_ = 0;
  std::shared_ptr<detail::ScopeEntry> entry_;
};

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
