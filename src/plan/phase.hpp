// SPDX-License-Identifier: Apache-2.0
#pragma once
// Phase ordering of a stateful object (docs/streams.md): PhaseOrder orders phases across streams with an event,
// ScopedPhase ends a phase even when an exception leaves it, and Phase is the one begin-phase helper every phase
// site of FFT and Matmul on a device uses (resolve the stream, check its device, make the device current, order the
// phase); HostPhase is its counterpart for a call the CPU computes.

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <span>
#include <thread>

#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"
#include "plan/execution_target.hpp"
#include "plan/ordering/ordering_checker.hpp"
#include "plan/ordering/tensor_accesses.hpp"
#include "runtime/recorded_stream.hpp"

namespace cuplan::detail {

class StreamHandle;

/// The stream a phase runs on: the one given, else the current stream of the target device. Inline: the distributed
/// component, which links the public API only, picks its streams by it too.
inline StreamRef resolve_stream(const std::optional<StreamRef>& stream, int device) {
  if (stream) return *stream;
  return current_stream(Device::cuda(device));
}

/// Throws InvalidArgument if `stream` belongs to a device other than `device` (`who`.`method` names the call).
void check_stream_device(StreamRef stream, int device, const char* who, const char* method);

/// Orders the phases of one stateful object. begin() makes the phase's stream wait for the previous phase when
/// that ran on another stream, and for the caller's `after` events; end() marks the phase done on its stream.
///
/// The event that carries the edge is recorded lazily where that is safe: after a phase on a stream that cannot
/// disappear (a cuplan-made stream, which the object then keeps alive, or a default-stream handle), end() records
/// nothing, and the event is recorded on that stream only when a later phase arrives on another stream. The later
/// phase then also waits for whatever was enqueued on the first stream in between, a stricter order than needed,
/// never a weaker one; the hot path (consecutive phases on one stream) costs no event record. A stream made
/// elsewhere (raw cudaStream_t) may be destroyed by its owner at any time, so it gets the event at end(). So does the
/// per-thread default stream: its handle names the calling thread's own stream, so the event can only be recorded
/// by the thread that ran the phase, and the same handle on another thread is another stream (a function-form plan
/// passes between threads through the plan cache).
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
  std::thread::id last_thread_{};  // the thread of the last phase, when last_ is the per-thread default stream
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

/// The stream rule of one stateful object, the same for FFT and Matmul (docs/streams.md, "One rule for every
/// phase"): a phase given no stream runs on the stream of the options the object was made with, else on the current
/// stream of the object's device at the call. The stream must belong to that device; the last stream that passed
/// the check is remembered, so repeated phases on one stream check nothing.
class PhaseStreams {
 public:
  PhaseStreams(std::optional<StreamRef> default_stream, const char* who) : default_(default_stream), who_(who) {}
  /// The given stream, else the default one (unset: the current stream at the call).
  const std::optional<StreamRef>& pick(const std::optional<StreamRef>& given) const noexcept {
    return given ? given : default_;
  }
  /// The stream of a phase on `device` (current when several devices are visible); InvalidArgument naming
  /// `who`.`method` if it belongs to another device.
  StreamRef resolve(const std::optional<StreamRef>& given, int device, const char* method);
  const char* who() const noexcept { return who_; }

 private:
  std::optional<StreamRef> default_;
  const char* who_;
  cudaStream_t checked_ = nullptr;  // last stream that passed the device check
  bool any_checked_ = false;
};

/// The stream rule's second half, the same for every phase: `stream` waits for the caller's `after` events.
void wait_for_events(StreamRef stream, const EventList& after);

/// The phase of a call the CPU computes (the CPU routes of FFT and Matmul). The call returns when its result is
/// written, so no PhaseOrder is kept. Operands in device memory (`operand_device` set) are read and written on the
/// stream the object's rule picks on their device, which first waits for `after`; for host operands the host
/// waits for `after` and there is no stream.
class HostPhase {
 public:
  HostPhase(const PhaseStreams& streams, std::optional<int> operand_device, const std::optional<StreamRef>& stream,
            const EventList& after);
  /// The phase of a call on `operand`: on its device's stream when it lives in device memory.
  HostPhase(const PhaseStreams& streams, const TensorView& operand, const std::optional<StreamRef>& stream,
            const EventList& after)
      : HostPhase(streams, operand.on_host() ? std::nullopt : std::optional<int>(operand.device().index()), stream,
                  after) {}
  /// The device operands' stream; unset for host operands.
  const std::optional<StreamRef>& stream() const noexcept { return stream_; }
  /// The call's result: `given` (the caller's out, or the operand in place), else a new one of this layout beside
  /// `operand` (in host memory, or on its device, stream-ordered on stream()).
  Tensor result(std::optional<Tensor> given, const Shape& shape, const Strides& strides, DType dtype,
                const TensorView& operand) const;
  /// The result handed back to the caller: in device memory, its use by this phase recorded on stream().
  Tensor finish(Tensor result) const;

 private:
  std::optional<StreamRef> stream_;
};

/// The begin-phase helper of every phase site (plan, execute, autotune, reset): makes the target device current,
/// resolves the phase's stream by the object's rule, checks its device, and opens a ScopedPhase on it ordered after
/// the object's previous phase and `after`. close() ends the phase; an exception before that ends it anyway.
/// operands() hands the phase's memory to the ordering checker (checked after the phase's edges are made, recorded
/// at close() before the phase's own end event, so that event covers them).
class Phase {
 public:
  Phase(PhaseOrder& order, PhaseStreams& streams, const ExecutionTarget& target, const std::optional<StreamRef>& stream,
        const EventList& after, const char* method)
      : scope_(target),
        stream_(streams.resolve(stream, target.device, method)),
        phase_(order, stream_, after, target.device),
        who_(streams.who()),
        method_(method) {}
  StreamRef stream() const noexcept { return stream_; }
  /// The memory the phase reads and writes: the phase's stream first waits for the pending producers of the cuplan
  /// Tensors among it (OperandUse::owner), then the checker, when on, checks the rest (OrderingError if unordered).
  void operands(std::initializer_list<OperandUse> uses) {
    operands(std::span<const OperandUse>(uses.begin(), uses.size()));
  }
  /// As above, for a list built at the call (only the operands the call has).
  void operands(std::span<const OperandUse> uses) {
    accesses_.begin(stream_, uses);
    uses_.begin(stream_, who_, method_, uses);
  }
  void close() {
    uses_.end();
    accesses_.end();
    phase_.close();
  }

 private:
  TargetDeviceScope scope_;  // first: a default-stream handle then names the target device's stream
  StreamRef stream_;
  ScopedPhase phase_;
  const char* who_;
  const char* method_;
  TensorAccesses accesses_;  // after phase_: an exception notes the accesses before the phase ends
  CheckedUses uses_;
};

}  // namespace cuplan::detail
