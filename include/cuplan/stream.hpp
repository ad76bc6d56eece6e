#pragma once
// Streams, events and the current stream (docs/streams.md): the CuPy model in C++.

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include "cuplan/device.hpp"
#include "cuplan/export.hpp"

namespace cuplan {

class Stream;
class Event;

namespace detail {
class StreamHandle;  // shared owner of a cudaStream_t made by cuplan (see Stream)
struct Access;       // the library's own access to ownership (defined inside the library only)
}  // namespace detail

/// A non-owning reference to a CUDA stream: what options and calls take. Implicit from Stream, cudaStream_t and
/// cuda::stream_ref. Comparing two refs compares the underlying streams. Without a GPU every stream is a host stream
/// (docs/streams.md, "Without a GPU"): its device is the CPU, work on it runs at the call, synchronize() returns at
/// once and done() is true.
class CUPLAN_API StreamRef {
 public:
  /// The legacy default stream of the current device.
  StreamRef() = default;
  StreamRef(const Stream& stream) noexcept;                         // NOLINT(google-explicit-constructor)
  StreamRef(cudaStream_t handle) noexcept : handle_(handle) {}      // NOLINT
  StreamRef(cuda::stream_ref ref) noexcept : handle_(ref.get()) {}  // NOLINT

  cudaStream_t native() const noexcept { return handle_; }
  operator cudaStream_t() const noexcept { return handle_; }                        // NOLINT
  operator cuda::stream_ref() const noexcept { return cuda::stream_ref(handle_); }  // NOLINT
  /// The device the stream belongs to (cudaStreamGetDevice for streams made elsewhere).
  Device device() const;
  /// True for a stream made by cuplan (Stream's constructors), which tensors that used it keep alive.
  bool owning() const noexcept { return owner_ != nullptr; }

  void synchronize() const;
  bool done() const;
  Event record() const;
  void wait(const Event& event) const;
  void wait(StreamRef other) const;

  friend bool operator==(StreamRef a, StreamRef b) noexcept { return a.handle_ == b.handle_; }

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

  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  cudaStream_t native() const noexcept { return handle_; }
  operator cudaStream_t() const noexcept { return handle_; }                        // NOLINT
  operator cuda::stream_ref() const noexcept { return cuda::stream_ref(handle_); }  // NOLINT
  StreamRef ref() const noexcept { return StreamRef(*this); }
  Device device() const noexcept { return host_ ? Device::cpu() : Device::cuda(device_); }
  int priority() const;
  bool owning() const noexcept { return owner_ != nullptr; }

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
  cudaStream_t handle_ = nullptr;
  int device_ = 0;
  std::shared_ptr<detail::StreamHandle> owner_;
  bool host_ = false;  // a host stream (no GPU): no CUDA stream behind the handle
};

/// A non-owning reference to a recorded event, for `after` lists.
class CUPLAN_API EventRef {
 public:
  EventRef() = default;
  EventRef(const Event& event);  // NOLINT(google-explicit-constructor); StateError if never recorded
  explicit EventRef(cudaEvent_t handle) noexcept : handle_(handle) {}
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
  Event(Device device, bool timing);
  Event(Event&&) noexcept;
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
  bool recorded() const noexcept { return recorded_; }
  bool timing() const noexcept { return timing_; }
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
  static constexpr std::size_t capacity = 8;
  EventList() = default;
  EventList(std::initializer_list<EventRef> events);  // InvalidArgument past `capacity`
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const EventRef* begin() const noexcept { return events_.data(); }
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
/// Scopes nest; the previous stream is restored when the scope ends, also by exception.
class CUPLAN_API StreamScope {
 public:
  explicit StreamScope(StreamRef stream);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  int device_ = 0;
  StreamRef previous_;
  bool had_previous_ = false;
};

}  // namespace cuplan
