// SPDX-License-Identifier: Apache-2.0
// Phase ordering and the begin-phase helper (see phase.hpp).

#include "plan/phase.hpp"

#include <fmt/format.h>

#include <utility>

#include "base/cuda_check.hpp"
#include "base/log.hpp"
#include "base/ordering_hooks.hpp"
#include "cuplan/errors.hpp"
#include "runtime/access.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/stream_handle.hpp"

namespace cuplan::detail {

void check_stream_device(StreamRef stream, int device, const char* who, const char* method) {
  const Device stream_device = stream.device();
  if (stream_device.index() != device) {
    throw InvalidArgument(
        fmt::format("{}.{}: stream: expected a stream of the execution device cuda:{}, got a stream of {}", who, method,
                    device, stream_device.to_string()));
  }
}

StreamRef PhaseStreams::resolve(const std::optional<StreamRef>& given, int device, const char* method) {
  const StreamRef stream = resolve_stream(given ? given : default_, device);
  if (!any_checked_ || stream.native() != checked_) [[unlikely]] {
    check_stream_device(stream, device, who_, method);
    checked_ = stream.native();
    any_checked_ = true;
  }
  return stream;
}

PhaseOrder::~PhaseOrder() {
  if (event_ != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
}

PhaseOrder::PhaseOrder(PhaseOrder&& other) noexcept
    : event_(std::exchange(other.event_, nullptr)),
      last_(other.last_),
      last_thread_(other.last_thread_),
      last_owner_(std::move(other.last_owner_)),
      any_(std::exchange(other.any_, false)),
      pending_(std::exchange(other.pending_, false)) {}

PhaseOrder& PhaseOrder::operator=(PhaseOrder&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
    event_ = std::exchange(other.event_, nullptr);
    last_ = other.last_;
    last_thread_ = other.last_thread_;
    last_owner_ = std::move(other.last_owner_);
    any_ = std::exchange(other.any_, false);
    pending_ = std::exchange(other.pending_, false);
  }
  return *this;
}

void PhaseOrder::record_pending() {
  CUPLAN_CUDA_CHECK(cudaEventRecord(event_, last_));
  ordering::note_record(event_, last_);
  pending_ = false;
  last_owner_.reset();
}

void wait_for_events(StreamRef stream, const EventList& after) {
  for (const EventRef& event : after) {
    CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(stream.native(), event.native(), 0));
    ordering::note_wait(stream.native(), event.native());
  }
}

HostPhase::HostPhase(const PhaseStreams& streams, std::optional<int> operand_device,
                     const std::optional<StreamRef>& stream, const EventList& after) {
  if (operand_device) {
    stream_ = resolve_stream(streams.pick(stream), *operand_device);
    wait_for_events(*stream_, after);
  } else {
    wait_on_host(after);
  }
}

Tensor HostPhase::result(std::optional<Tensor> given, const Shape& shape, const Strides& strides, DType dtype,
                         const TensorView& operand) const {
  if (given) return std::move(*given);
  return Tensor::empty_strided(shape, strides, dtype, operand.on_host() ? Device::cpu() : operand.device(), stream_);
}

Tensor HostPhase::finish(Tensor result) const {
  if (stream_) result.record_stream(*stream_);
  return result;
}

void PhaseOrder::begin(StreamRef stream, const EventList& after, int device) {
  wait_for_events(stream, after);
  if (thread_relative_stream(stream.native())) drain_per_thread_stream_at_exit(device);
  if (event_ == nullptr) {
    // Created once, on the object's device, without timing (the cheapest event to record).
    DeviceScope scope(Device::cuda(device));
    CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
  }
  // The per-thread default stream of another thread is another stream, though the handle is the same.
  const bool same_stream =
      last_ == stream.native() && (!thread_relative_stream(last_) || last_thread_ == std::this_thread::get_id());
  if (any_ && !same_stream) {
    if (pending_) record_pending();
    CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(stream.native(), event_, 0));
    ordering::note_wait(stream.native(), event_);
  }
}

void PhaseOrder::end(StreamRef stream) {
  const cudaStream_t native = stream.native();
  if (lasting_stream(stream)) {
    if (native != last_ || !pending_) {
      // Only on a change of stream: keep a cuplan-made stream alive until its lazy record is made.
      last_owner_ = Access::retain(stream);
    }
    pending_ = true;
  } else {
    CUPLAN_CUDA_CHECK(cudaEventRecord(event_, native));
    ordering::note_record(event_, native);
    pending_ = false;
    last_owner_.reset();
  }
  last_ = native;
  if (thread_relative_stream(native)) last_thread_ = std::this_thread::get_id();
  any_ = true;
}

ScopedPhase::~ScopedPhase() {
  if (closed_) return;
  try {
    order_.end(stream_);
  } catch (const std::exception& e) {
    log(LogLevel::warning, "ending a phase left by an exception failed: {}", e.what());
  }
}

void PhaseOrder::synchronize() {
  if (!any_) return;
  if (pending_) record_pending();
  CUPLAN_CUDA_CHECK(cudaEventSynchronize(event_));
}

std::optional<StreamRef> PhaseOrder::last_stream() const noexcept {
  if (!any_) return std::nullopt;
  return StreamRef(last_);
}

}  // namespace cuplan::detail
