// SPDX-License-Identifier: Apache-2.0
// Events: ordering between streams and timing. CUDA has no query for an event's device, so on machines with several
// GPUs cuplan keeps a small table (consulted only there) to check that an event is recorded on a stream of its
// own device and to find that device's current stream.

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "base/cuda_check.hpp"
#include "base/ordering_hooks.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/stream.hpp"
#include "runtime/current_stream.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

namespace {

class EventDevices {
 public:
  void add(cudaEvent_t event, int device) {
    std::lock_guard lock(mutex_);
    devices_.emplace(event, device);
  }
  void remove(cudaEvent_t event) noexcept {
    std::lock_guard lock(mutex_);
    devices_.erase(event);
  }
  int find(cudaEvent_t event) const {
    std::lock_guard lock(mutex_);
    const auto it = devices_.find(event);
    return it == devices_.end() ? 0 : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<cudaEvent_t, int> devices_;
};

// Never destroyed: events held in static objects may be destroyed after any function-local static would be.
EventDevices& event_devices() {
  static auto* table = new EventDevices;
  return *table;
}

bool several_devices() noexcept {
  return cuda_device_count() > 1;
}

int event_device(cudaEvent_t event) {
  return several_devices() ? event_devices().find(event) : 0;
}

void require_live(cudaEvent_t handle, const char* method) {
  if (handle == nullptr) [[unlikely]] {
    throw StateError(fmt::format("Event::{}: the event was moved from; it no longer refers to a CUDA event", method));
  }
}

void require_recorded(bool recorded, const char* method, const char* which) {
  if (!recorded) [[unlikely]] {
    throw StateError(fmt::format("Event::{}: the {} was never recorded; record it on a stream first", method, which));
  }
}

Device current_device_for(const char* what) {
  detail::require_cuda(what);
  return Device::current();
}

// Host events need a non-null handle that is unique among live events; it is never given to CUDA.
cudaEvent_t next_host_token() noexcept {
  static std::atomic<std::uintptr_t> counter{0};
  return reinterpret_cast<cudaEvent_t>((counter.fetch_add(1, std::memory_order_relaxed) + 1) * 16);
}

std::int64_t host_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Event

Event::Event(bool timing) : Event(detail::host_streams() ? Device::cpu() : current_device_for("Event"), timing) {}

Event::Event(Device device, bool timing) : timing_(timing) {
  if (detail::host_streams() && device.is_cpu()) {
    handle_ = next_host_token();
    host_ = true;
    return;
  }
  detail::require_device_index_sign(device, "Event device");
  detail::require_cuda("Event on a CUDA device");
  if (!device.is_cuda()) [[unlikely]] {
    throw InvalidArgument(fmt::format("Event device: expected a CUDA device, got {}", device.to_string()));
  }
  device.check_valid("Event device");
  DeviceScope scope(device);
  // Timing costs a timestamp per record; ordering does not need it.
  CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(&handle_, timing ? cudaEventDefault : cudaEventDisableTiming));
  if (several_devices()) {
    try {
      event_devices().add(handle_, device.index());
    } catch (...) {
      (void)cudaEventDestroy(handle_);  // the constructor throws, so the destructor will not run
      throw;
    }
  }
}

Event::Event(Event&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      timing_(std::exchange(other.timing_, false)),
      recorded_(std::exchange(other.recorded_, false)),
      host_(std::exchange(other.host_, false)),
      host_time_ns_(std::exchange(other.host_time_ns_, 0)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Event old(std::move(*this));  // releases this event's handle at the end of this block
    handle_ = std::exchange(other.handle_, nullptr);
    timing_ = std::exchange(other.timing_, false);
    recorded_ = std::exchange(other.recorded_, false);
    host_ = std::exchange(other.host_, false);
    host_time_ns_ = std::exchange(other.host_time_ns_, 0);
  }
  return *this;
}

Event::~Event() {
  if (handle_ == nullptr || host_) return;
  if (several_devices()) event_devices().remove(handle_);
  // Destroying an event whose recorded work is still pending is allowed: CUDA releases it once that work completes.
  CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(handle_));
}

void Event::record(std::optional<StreamRef> stream) {
  require_live(handle_, "record");
  if (host_) {
    // Host streams run their work at the call, so everything before this point is done now.
    host_time_ns_ = host_now_ns();
    recorded_ = true;
    return;
  }
  const int own_device = event_device(handle_);
  const StreamRef target = stream ? *stream : current_stream(Device::cuda(own_device));
  if (several_devices()) {
    const int stream_device = target.device().index();
    if (stream_device != own_device) [[unlikely]] {
      throw InvalidArgument(
          fmt::format("Event::record: the stream must belong to the event's device: expected a "
                      "stream of cuda:{}, got a stream of cuda:{}",
                      own_device, stream_device));
    }
  }
  DeviceScope scope(detail::device_to_enter(target));
  CUPLAN_CUDA_CHECK(cudaEventRecord(handle_, target.native()));
  detail::ordering::note_record(handle_, target.native());
  recorded_ = true;
}

void Event::synchronize() const {
  require_live(handle_, "synchronize");
  require_recorded(recorded_, "synchronize", "event");
  if (host_) return;
  CUPLAN_CUDA_CHECK(cudaEventSynchronize(handle_));
}

bool Event::done() const {
  require_live(handle_, "done");
  require_recorded(recorded_, "done", "event");
  if (host_) return true;
  const cudaError_t status = cudaEventQuery(handle_);
  if (status == cudaErrorNotReady) return false;
  CUPLAN_CUDA_CHECK(status);
  return true;
}

float Event::elapsed_ms(const Event& start, const Event& stop) {
  require_live(start.handle_, "elapsed_ms");
  require_live(stop.handle_, "elapsed_ms");
  require_recorded(start.recorded_, "elapsed_ms", "start event");
  require_recorded(stop.recorded_, "elapsed_ms", "stop event");
  for (const auto& [event, which] : {std::pair{&start, "start"}, std::pair{&stop, "stop"}}) {
    if (!event->timing_) [[unlikely]] {
      throw StateError(fmt::format(
          "Event::elapsed_ms: the {} event was created without timing; construct it with Event(true)", which));
    }
  }
  if (start.host_ && stop.host_)
    return static_cast<float>(static_cast<double>(stop.host_time_ns_ - start.host_time_ns_) / 1e6);
  // The elapsed time exists only once both events have completed; wait for them rather than fail with
  // cudaErrorNotReady.
  CUPLAN_CUDA_CHECK(cudaEventSynchronize(start.handle_));
  CUPLAN_CUDA_CHECK(cudaEventSynchronize(stop.handle_));
  float milliseconds = 0.0F;
  CUPLAN_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start.handle_, stop.handle_));
  return milliseconds;
}

// ---------------------------------------------------------------------------------------------------------------
// EventRef, EventList

EventRef::EventRef(const Event& event) : handle_(event.native()) {
  require_live(handle_, "EventRef");
  if (!event.recorded()) [[unlikely]] {
    // CUDA treats a never-recorded event as complete: waiting on it would silently order nothing.
    throw StateError(
        "after: expected recorded events, got one that was never recorded; record it on the "
        "producing stream first");
  }
}

}  // namespace CUPLAN_ABI_NAMESPACE

void detail::wait_on_host(const EventList& events) {
  if (host_streams()) return;  // host events are complete once recorded
  for (const EventRef& event : events) CUPLAN_CUDA_CHECK(cudaEventSynchronize(event.native()));
}

inline namespace CUPLAN_ABI_NAMESPACE {

EventList::EventList(std::initializer_list<EventRef> events) {
  if (events.size() > capacity) [[unlikely]] {
    throw InvalidArgument(fmt::format("after: expected at most {} events, got {}", capacity, events.size()));
  }
  for (const EventRef& event : events) events_[size_++] = event;
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
