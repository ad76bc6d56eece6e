#pragma once
// The one mechanism that FFT and Matmul share for the stream contract (docs/getting-started.md, blocking rule;
// docs/streams.md):
//  - ExecutionTarget / resolve_execution: where a call runs and whether it blocks;
//  - PhaseOrder: orders the phases of one stateful object across streams with an event;
//  - DeviceBuffer: workspace and staging memory, stream-ordered, kept or released per call;
//  - ObjectState: the lifecycle checks (planned, operand present, freed) with uniform StateError messages.

#include <cstddef>
#include <memory>
#include <optional>
#include <span>

#include "cuplan/device.hpp"
#include "cuplan/execution.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan::detail {

class Storage;
class StreamHandle;

/// The resolved answer to "where does this run, and does the call block".
struct ExecutionTarget {
  bool cuda = false;           ///< CUDA execution (else CPU)
  int device = -1;             ///< CUDA device index when cuda
  int cpu_threads = 0;         ///< CPU threads when !cuda (0: library default)
  bool host_operands = false;  ///< operands live in host memory (pageable or pinned)
  bool blocking = false;       ///< the call synchronises before returning
  bool multi_device = false;   ///< CUDA execution in a process that sees several devices
};

/// Makes the target's device current for one call. With a single device it is always current: then nothing is
/// done, not even a cudaGetDevice, which keeps it off the hot path of execute.
class TargetDeviceScope {
 public:
  explicit TargetDeviceScope(const ExecutionTarget& target) {
    if (target.multi_device) scope_.emplace(Device::cuda(target.device));
  }

 private:
  std::optional<DeviceScope> scope_;
};

/// Applies the blocking rule, docs/getting-started.md. All operands must live in one memory space class: all host, or
/// all on one device (managed counts as device). `who` names the caller in messages ("fft", "Matmul"); `names` name the
/// operands. InvalidArgument for mixed spaces or devices, or a CUDA device out of range; Execution::cuda without a GPU
/// gives NotSupported("no CUDA device: ...").
ExecutionTarget resolve_execution(Execution execution, Blocking blocking, std::span<const TensorView> operands,
                                  std::span<const char* const> names, const char* who);

/// The stream a phase runs on: the one given, else the current stream of the target device.
StreamRef resolve_stream(const std::optional<StreamRef>& stream, int device);

/// Throws InvalidArgument if `stream` belongs to a device other than `device` (`what` names the call).
void check_stream_device(StreamRef stream, int device, const char* what);

/// Orders the phases of one stateful object. begin() makes the phase's stream wait for the previous phase when
/// that ran on another stream, and for the caller's `after` events; end() marks the phase done on its stream.
///
/// The event that carries the edge is recorded lazily where that is safe: after a phase on a stream that cannot
/// disappear (a cuplan-made stream, which the object then keeps alive, or a default-stream handle), end() records
/// nothing, and the event is recorded on that stream only when a later phase arrives on another stream. The later
/// phase then also waits for whatever was enqueued on the first stream in between, a stricter order than needed,
/// never a weaker one; the hot path (consecutive phases on one stream) costs no event record. A stream made
/// elsewhere (raw cudaStream_t) may be destroyed by its owner at any time, so it gets the event at end().
class PhaseOrder {
 public:
  PhaseOrder() = default;
  ~PhaseOrder();
  PhaseOrder(PhaseOrder&&) noexcept;
  PhaseOrder& operator=(PhaseOrder&&) noexcept;
  PhaseOrder(const PhaseOrder&) = delete;
  PhaseOrder& operator=(const PhaseOrder&) = delete;

  void begin(StreamRef stream, const EventList& after, int device);
  void end(StreamRef stream);
  /// Block the host until the last phase is done (no-op before any phase).
  void synchronize();
  /// The stream of the last phase, if any.
  std::optional<StreamRef> last_stream() const noexcept;

 private:
  void record_pending();
  cudaEvent_t event_ = nullptr;
  cudaStream_t last_ = nullptr;
  std::shared_ptr<StreamHandle> last_owner_;  // keeps a cuplan-made last stream alive for a lazy record
  bool any_ = false;
  bool pending_ = false;  // the last phase's event is not recorded yet
};

/// One phase of a stateful object on `stream`: PhaseOrder::begin at construction, PhaseOrder::end at close(). When
/// an exception leaves the phase before close(), the destructor ends it anyway (work may already be enqueued on
/// `stream`, and the next phase must order after it); an error there is logged, the first exception goes on.
class ScopedPhase {
 public:
  ScopedPhase(PhaseOrder& order, StreamRef stream, const EventList& after, int device)
      : order_(order), stream_(stream) {
    order_.begin(stream, after, device);
  }
  ~ScopedPhase();
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;
  void close() {
    closed_ = true;
    order_.end(stream_);
  }

 private:
  PhaseOrder& order_;
  StreamRef stream_;
  bool closed_ = false;
};

/// Stream-ordered device memory owned by an object (workspace, staging, internal copies). Built on Storage, so a
/// buffer used on several streams is never reused by the pool before all of them are done with it.
class DeviceBuffer {
 public:
  /// At least `bytes` on `device`, usable on `stream`: reuses the current block when big enough (recording the
  /// stream use), else releases it and allocates on `stream`. Returns the data pointer (null for 0 bytes).
  void* ensure(std::size_t bytes, int device, StreamRef stream);
  /// Release now (stream-ordered after every recorded use).
  void release() noexcept;
  void* data() const noexcept;
  std::size_t size() const noexcept;
  bool empty() const noexcept { return storage_ == nullptr; }

 private:
  std::shared_ptr<Storage> storage_;
  cudaStream_t last_stream_ = nullptr;  // already recorded on storage_: the common repeat costs no lock
  bool recorded_ = false;
};

/// Lifecycle of a stateful object with uniform StateError messages ("FFT.execute: called after free()").
class ObjectState {
 public:
  explicit ObjectState(const char* type_name) : type_name_(type_name) {}
  void require_alive(const char* method) const;
  void require_planned(const char* method) const;
  void require_operand(const char* method) const;
  void set_planned(bool planned) noexcept { planned_ = planned; }
  void set_operand(bool present) noexcept { operand_ = present; }
  void set_freed() noexcept {
    freed_ = true;
    planned_ = false;
    operand_ = false;
  }
  bool freed() const noexcept { return freed_; }

 private:
  const char* type_name_;
  bool planned_ = false;
  bool operand_ = false;
  bool freed_ = false;
};

/// Checks that `pointer` is aligned to `alignment` bytes; InvalidArgument naming `operand`, expected and actual.
void check_alignment(const void* pointer, std::size_t alignment, const char* operand, const char* who);

/// The result of a blocking call: wait on `stream` (StateError-free; CUDA errors become CudaError).
void finish_call(const ExecutionTarget& target, StreamRef stream);

}  // namespace cuplan::detail
