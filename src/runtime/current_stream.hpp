// SPDX-License-Identifier: Apache-2.0
#pragma once
// Private helpers of the runtime layer shared by streams, events and the current-stream slots.

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <thread>

#include "cuplan/device.hpp"
#include "cuplan/stream.hpp"

namespace cuplan::detail {

class StreamHandle;

/// Devices with a per-thread current-stream slot; more than any node has.
inline constexpr int max_devices = 64;

/// The handles that mean "the default stream of the current device" rather than one particular stream.
inline bool is_default_stream_handle(cudaStream_t handle) noexcept {
  return handle == nullptr || handle == cudaStreamLegacy || handle == cudaStreamPerThread;
}

/// cudaStreamPerThread names the calling thread's own default stream: the same handle on two threads is two streams,
/// and work can be enqueued on (or an event recorded on) a thread's one only from that thread.
inline bool thread_relative_stream(cudaStream_t handle) noexcept {
  return handle == cudaStreamPerThread;
}

/// An open StreamScope: its stream and a share of it (a cuplan-made stream), shared by the scope and its thread's
/// slot. Only `closed` is written by another thread (a scope destroyed there); the rest belongs to the scope's thread.
struct ScopeEntry {
  StreamRef stream;
  std::shared_ptr<StreamHandle> owner;
  std::thread::id thread;
  std::atomic<bool> closed{false};
};

/// The device to make current around a call on `stream`: a default-stream handle refers to the current device's
/// default stream, so its own device must be current. The CPU (no change) otherwise, and always on one GPU.
Device device_to_enter(StreamRef stream);

/// Marks that the calling thread made stream-ordered allocations or enqueued cuplan work on its per-thread default
/// stream of `device`. At the thread's exit, that stream is then synchronized before the CUDA driver's own thread
/// cleanup runs: with driver 580, a thread that used the stream-ordered allocator and ends while its per-thread
/// default stream still has work queued never finishes exiting (docs/streams.md).
void drain_per_thread_stream_at_exit(int device) noexcept;

/// Stream::use(): makes `stream` the calling thread's current stream of its device until changed.
void use_stream(StreamRef stream);

/// True where streams and events are host streams and host events: no usable GPU (docs/streams.md).
inline bool host_streams() noexcept {
  return !cuda_available();
}

/// Blocks the host until every event of `events` is complete; host events always are.
void wait_on_host(const EventList& events);

/// The default-stream handle current_stream() falls back to (legacy, or per-thread when
/// CUPLAN_PER_THREAD_DEFAULT_STREAM=1); the environment is read once.
cudaStream_t fallback_stream_handle() noexcept;

}  // namespace cuplan::detail
