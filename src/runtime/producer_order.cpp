// SPDX-License-Identifier: Apache-2.0
// ProducerOrder (see producer_order.hpp).

#include "runtime/producer_order.hpp"

#include <algorithm>
#include <utility>

#include "base/cuda_check.hpp"
#include "base/ordering_hooks.hpp"
#include "runtime/access.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/recorded_stream.hpp"
#include "runtime/stream_handle.hpp"

namespace cuplan::detail {

namespace {

// The device whose stream `stream` is: a default-stream handle names the current device's (the caller made the
// memory's device current), any other handle its own.
int device_of(StreamRef stream, int fallback) {
  if (!is_default_stream_handle(stream.native())) return stream.device().index();
  int current = fallback;
  CUPLAN_CUDA_CHECK(cudaGetDevice(&current));
  return current;
}

}  // namespace

ProducerOrder::~ProducerOrder() {
  const auto destroy = [](Mark& mark) noexcept {
    if (mark.event != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(mark.event));
  };
  destroy(writer_);
  std::for_each(readers_.begin(), readers_.end(), destroy);
  std::for_each(spare_.begin(), spare_.end(), destroy);
}

bool ProducerOrder::same(const Mark& mark, StreamRef stream) const noexcept {
  return mark.stream == stream.native() &&
         (!thread_relative_stream(mark.stream) || mark.thread == std::this_thread::get_id());
}

bool ProducerOrder::lasting(StreamRef stream) const noexcept {
  // The allocation stream outlives the memory: its release is enqueued there.
  if (thread_relative_stream(stream.native())) return false;
  return stream.native() == allocation_stream_ || lasting_stream(stream);
}

void ProducerOrder::set(Mark& mark, StreamRef stream, int device) {
  if (mark.event != nullptr && mark.event_device != device) {
    CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(mark.event));
    mark.event = nullptr;
  }
  mark.stream = stream.native();
  mark.thread = std::this_thread::get_id();
  mark.owner.reset();
  mark.device = device;
  mark.pending = false;
  mark.recorded = false;
  mark.lazy = false;
}

void ProducerOrder::record(Mark& mark) {
  if (!mark.pending) return;
  const DeviceScope scope(Device::cuda(mark.device));
  if (mark.event == nullptr) {
    CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(&mark.event, cudaEventDisableTiming));
    mark.event_device = mark.device;
  }
  CUPLAN_CUDA_CHECK(cudaEventRecord(mark.event, mark.stream));
  ordering::note_record(mark.event, mark.stream);
  mark.pending = false;
  mark.recorded = true;
  mark.owner.reset();
}

void ProducerOrder::mark_work(Mark& mark, StreamRef stream) {
  mark.pending = true;
  mark.lazy = lasting(stream);
  if (mark.lazy) {
    // The Storage already holds its allocation stream (the common case: every new result): no second share.
    if (!mark.owner && stream.native() != allocation_stream_) mark.owner = Access::retain(stream);
    return;
  }
  // A handle its owner may destroy (or one that names another stream on each thread): the event now.
  record(mark);
}

void ProducerOrder::wait_for(Mark& mark, StreamRef consumer) {
  if (same(mark, consumer)) return;
  record(mark);
  if (!mark.recorded) return;
  CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(consumer.native(), mark.event, 0));
  ordering::note_wait(consumer.native(), mark.event);
}

void ProducerOrder::retire(Mark& mark) noexcept {
  mark.owner.reset();
  mark.pending = false;
  mark.recorded = false;
  if (mark.event != nullptr) spare_.push_back(std::move(mark));
}

void ProducerOrder::publish() noexcept {
  const bool per_thread = thread_relative_stream(writer_.stream);
  const cudaStream_t producer = per_thread ? unpublished() : writer_.stream;
  const cudaStream_t sole = readers_.empty() ? producer : unpublished();
  producer_.store(producer, std::memory_order_release);
  sole_writer_.store(sole, std::memory_order_release);
  pending_writer_.store(writer_.pending && writer_.lazy ? sole : unpublished(), std::memory_order_release);
}

void ProducerOrder::start(StreamRef stream, Device device) {
  // No lock and plain stores: the memory is not shared yet (Storage::allocate and adopt call this before handing it
  // out; whoever passes it to another thread synchronizes with that thread), and every execute allocates its result,
  // so this is on the hot path. The same state as set(), mark_work() and publish() would leave, without the calls.
  const cudaStream_t native = stream.native();
  allocation_stream_ = native;
  device_ = device.index();
  writer_.stream = native;
  writer_.device = device_;
  writer_.pending = true;
  started_ = true;
  if (thread_relative_stream(native)) [[unlikely]] {
    // Its event now (mark_work): the handle names another stream on every thread.
    writer_.thread = std::this_thread::get_id();
    record(writer_);
    return;  // nothing published: every access takes the locked path
  }
  writer_.lazy = true;  // the allocation stream outlives the memory (lasting)
  producer_.store(native, std::memory_order_relaxed);
  sole_writer_.store(native, std::memory_order_relaxed);
  pending_writer_.store(native, std::memory_order_relaxed);
}

void ProducerOrder::order_locked(StreamRef consumer, bool write) {
  // Another stream than the published one (order() took the fast path otherwise).
  const std::lock_guard lock(mutex_);
  if (!started_) return;
  if (!write) {
    // A stream that read since the last write has waited for that write already.
    for (const Mark& reader : readers_)
      if (same(reader, consumer)) return;
    wait_for(writer_, consumer);
  } else {
    wait_for(writer_, consumer);
    for (Mark& reader : readers_) wait_for(reader, consumer);
  }
  publish();
}

void ProducerOrder::note_locked(StreamRef stream, bool write) {
  // Not a read on the producer's own stream (which orders its later reads), nor a write there while its latest work
  // still awaits its lazy record and no read on another stream is pending (note() took the fast path for those).
  const std::lock_guard lock(mutex_);
  if (!started_) return;
  if (write) {
    // The write was ordered after every read since the last one: those marks are done with.
    for (Mark& reader : readers_) retire(reader);
    readers_.clear();
    if (!same(writer_, stream)) set(writer_, stream, device_of(stream, device_));
    mark_work(writer_, stream);
  } else if (!same(writer_, stream)) {
    auto found = std::find_if(readers_.begin(), readers_.end(), [&](const Mark& m) { return same(m, stream); });
    if (found == readers_.end()) {
      const int device = device_of(stream, device_);
      auto reuse = std::find_if(spare_.begin(), spare_.end(), [&](const Mark& m) { return m.event_device == device; });
      if (reuse != spare_.end()) {
        readers_.push_back(std::move(*reuse));
        spare_.erase(reuse);
      } else {
        readers_.emplace_back();
      }
      found = readers_.end() - 1;
      set(*found, stream, device);
    }
    mark_work(*found, stream);
  }
  publish();
}

}  // namespace cuplan::detail
