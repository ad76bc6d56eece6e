// SPDX-License-Identifier: Apache-2.0
// Streams: owning streams (shared with the tensors that used them), wrapped external streams, the two default
// streams, and the stream operations that StreamRef and Stream share.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <memory>
#include <utility>

#include "base/cuda_check.hpp"
#include "base/non_copyable.hpp"
#include "base/ordering_hooks.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/stream.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/stream_handle.hpp"
#include "runtime/stream_retirement.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

namespace {

Device current_device_for(const char* what) {
  detail::require_cuda(what);
  return Device::current();
}

Device checked_cuda_device(Device device, const char* what) {
  if (!device.is_cuda()) [[unlikely]] {
    throw InvalidArgument(fmt::format("{}: expected a CUDA device, got {}", what, device.to_string()));
  }
  device.check_valid(what);
  return device;
}

// One event per thread and device for wait(StreamRef). Reusing it is safe: cudaStreamWaitEvent captures the event's
// state at the time of the call, so recording it again later does not change earlier waits.
class WaitEvents : detail::NonCopyable {
 public:
  ~WaitEvents() {
    // Runs at thread exit, possibly after the CUDA runtime has shut down at process exit: a failure here is
    // harmless and nothing can be done about it.
    for (cudaEvent_t event : events_)
      if (event != nullptr) (void)cudaEventDestroy(event);
  }
  cudaEvent_t get(int device) {
    cudaEvent_t& event = events_.at(static_cast<std::size_t>(device));
    if (event == nullptr) {
      DeviceScope scope(Device::cuda(device));
      CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    }
    return event;
  }

 private:
  std::array<cudaEvent_t, detail::max_devices> events_{};
};

thread_local WaitEvents t_wait_events;

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// StreamRef

StreamRef::StreamRef(const Stream& stream)
    : handle_(stream.handle_), owner_(stream.owner_.get()), device_(stream.device_) {
  // A moved-from Stream's null handle would otherwise stand for the legacy default stream.
  stream.live("StreamRef");
}

Device StreamRef::device() const {
  if (detail::host_streams()) return Device::cpu();
  if (device_ >= 0) return Device::cuda(device_);
  detail::require_cuda("StreamRef::device");
  if (detail::is_default_stream_handle(handle_)) return Device::current();
  int index = 0;
  CUPLAN_CUDA_CHECK(cudaStreamGetDevice(handle_, &index));
  return Device::cuda(index);
}

void StreamRef::synchronize() const {
  if (detail::host_streams()) return;  // host work ran at the call
  DeviceScope scope(detail::device_to_enter(*this));
  CUPLAN_CUDA_CHECK(cudaStreamSynchronize(handle_));
}

bool StreamRef::done() const {
  if (detail::host_streams()) return true;
  DeviceScope scope(detail::device_to_enter(*this));
  const cudaError_t status = cudaStreamQuery(handle_);
  if (status == cudaErrorNotReady) return false;
  CUPLAN_CUDA_CHECK(status);
  return true;
}

Event StreamRef::record() const {
  Event event(device(), false);
  event.record(*this);
  return event;
}

void StreamRef::wait(const Event& event) const {
  if (event.native() == nullptr) [[unlikely]] {
    throw StateError("Stream::wait: the event was moved from; it no longer refers to a CUDA event");
  }
  if (!event.recorded()) [[unlikely]] {
    // CUDA treats a never-recorded event as complete, which would silently drop the ordering the caller asked for.
    throw StateError(
        "Stream::wait: the event was never recorded; record it on the producing stream before waiting on it");
  }
  if (detail::host_streams()) return;  // a host event is complete once recorded
  DeviceScope scope(detail::device_to_enter(*this));
  CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(handle_, event.native(), 0));
  detail::ordering::note_wait(handle_, event.native());
}

void StreamRef::wait(StreamRef other) const {
  if (detail::host_streams()) return;  // work on host streams runs at the call, so it is already ordered
  // A stream is always ordered after itself; the default handles are per device, so only skip named streams.
  if (other.handle_ == handle_ && !detail::is_default_stream_handle(handle_)) return;
  const int other_device = other.device().index();
  cudaEvent_t event = t_wait_events.get(other_device);
  {
    DeviceScope scope(detail::device_to_enter(other));
    CUPLAN_CUDA_CHECK(cudaEventRecord(event, other.handle_));
    detail::ordering::note_record(event, other.handle_);
  }
  DeviceScope scope(detail::device_to_enter(*this));
  CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(handle_, event, 0));
  detail::ordering::note_wait(handle_, event);
}

// ---------------------------------------------------------------------------------------------------------------
// Stream

Stream::Stream() : Stream(detail::host_streams() ? Device::cpu() : current_device_for("Stream")) {}

Stream::Stream(Device device, int priority, bool non_blocking) {
  if (detail::host_streams() && device.is_cpu()) {
    // No GPU: a host stream. Its handle is a unique token so that two streams compare different.
    owner_ = std::make_shared<detail::StreamHandle>(detail::StreamHandle::Host{});
    handle_ = owner_->native();
    device_ = 0;
    host_ = true;
    return;
  }
  detail::require_device_index_sign(device, "Stream device");
  detail::require_cuda("Stream on a CUDA device");
  checked_cuda_device(device, "Stream device");
  DeviceScope scope(device);
  int least = 0;
  int greatest = 0;  // numerically lowest: lower values are higher priorities
  CUPLAN_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  const int clamped = std::clamp(priority, greatest, least);
  cudaStream_t handle = nullptr;
  CUPLAN_CUDA_CHECK(
      cudaStreamCreateWithPriority(&handle, non_blocking ? cudaStreamNonBlocking : cudaStreamDefault, clamped));
  try {
    owner_ = std::make_shared<detail::StreamHandle>(handle, device.index());
  } catch (...) {
    (void)cudaStreamDestroy(handle);  // the allocation failure is what the caller needs to see
    throw;
  }
  handle_ = handle;
  device_ = device.index();
}

Stream Stream::host_default(cudaStream_t handle) {
  Stream stream(handle, 0);
  stream.host_ = true;
  return stream;
}

Stream Stream::external(cudaStream_t handle) {
  detail::require_cuda("Stream::external (wraps a CUDA stream)");
  const Device device = StreamRef(handle).device();
  return Stream(handle, device.index());
}

Stream Stream::legacy_default(std::optional<Device> device) {
  if (detail::host_streams() && (!device || device->is_cpu())) return host_default(cudaStreamLegacy);
  detail::require_cuda("Stream::legacy_default on a CUDA device");
  const Device d = checked_cuda_device(device ? *device : Device::current(), "Stream::legacy_default device");
  return Stream(cudaStreamLegacy, d.index());
}

Stream Stream::per_thread_default(std::optional<Device> device) {
  if (detail::host_streams() && (!device || device->is_cpu())) return host_default(cudaStreamPerThread);
  detail::require_cuda("Stream::per_thread_default on a CUDA device");
  const Device d = checked_cuda_device(device ? *device : Device::current(), "Stream::per_thread_default device");
  return Stream(cudaStreamPerThread, d.index());
}

// A moved-from stream keeps device_ = -1: every live Stream has a device, which is how methods detect it.
Stream::Stream(Stream&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      device_(std::exchange(other.device_, -1)),
      owner_(std::move(other.owner_)),
      host_(std::exchange(other.host_, false)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    retire();
    handle_ = std::exchange(other.handle_, nullptr);
    device_ = std::exchange(other.device_, -1);
    owner_ = std::move(other.owner_);
    host_ = std::exchange(other.host_, false);
  }
  return *this;
}

Stream::~Stream() {
  retire();
}

// A stream this object made goes with it (its handle lives on while memory that recorded it is not yet freed):
// what the plan layer keeps for it (its shared work areas) goes now, stream-ordered, before cudaStreamDestroy.
void Stream::retire() noexcept {
  if (owner_ && !host_ && device_ >= 0) detail::notify_stream_retired(handle_, device_);
}

void Stream::throw_moved_from(const char* what) {
  throw StateError(fmt::format("Stream::{}: the stream was moved from; it no longer refers to a stream", what));
}

int Stream::priority() const {
  live("priority");
  if (host_) return 0;
  DeviceScope scope(detail::device_to_enter(ref()));
  int value = 0;
  CUPLAN_CUDA_CHECK(cudaStreamGetPriority(handle_, &value));
  return value;
}

Event Stream::record() const {
  live("record");
  return ref().record();
}

void Stream::wait(const Event& event) const {
  live("wait");
  ref().wait(event);
}

void Stream::wait(StreamRef other) const {
  live("wait");
  ref().wait(other);
}

void Stream::synchronize() const {
  live("synchronize");
  ref().synchronize();
}

bool Stream::done() const {
  live("done");
  return ref().done();
}

void Stream::use() const {
  live("use");
  detail::use_stream(ref());
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
