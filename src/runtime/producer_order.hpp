// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pending producer and readers of one block of owned device memory (docs/streams.md, "cuplan Tensors across
// streams"): every cuplan read or write of a Tensor is ordered, on the GPU, after the last cuplan write made on
// another stream, and every cuplan write also after the reads made on other streams since that write. Reads on
// several streams stay concurrent.
//
// Events are recorded lazily where that is safe, as PhaseOrder does: work noted on a stream that cannot disappear
// (a cuplan-made stream, a default-stream handle, or the memory's allocation stream, which its release needs anyway)
// gets its event only when another stream first needs the edge, which then also covers work enqueued in between (a
// stricter order, never a weaker one). Any other stream gets its event when the work is noted. On the producer's own
// stream an access costs one atomic load and a pointer comparison, and no lock.

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/non_copyable.hpp"
#include "cuplan/device.hpp"
#include "cuplan/stream.hpp"

namespace cuplan::detail {

class StreamHandle;

class ProducerOrder : NonCopyable {
 public:
  ProducerOrder() = default;
  ~ProducerOrder();

  /// The memory was just allocated (or adopted) on `stream` of `device`: that stream is its first producer.
  void start(StreamRef stream, Device device);
  /// Makes `consumer` wait for the last write on another stream and, for a `write`, for every read on another stream
  /// since then. Call before enqueuing the access. Inline: on the producer's own stream it is one load and a
  /// comparison (a write also needs no pending read on another stream), made at every execute for each operand.
  void order(StreamRef consumer, bool write) {
    if ((write ? sole_writer_ : producer_).load(std::memory_order_acquire) == consumer.native()) [[likely]]
      return;
    order_locked(consumer, write);
  }
  /// Work just enqueued on `stream` reads or writes the memory. Inline: a read on the producer's own stream, or a
  /// write there while its latest work still awaits its lazy record, is one load and a comparison.
  void note(StreamRef stream, bool write) {
    if ((write ? pending_writer_ : producer_).load(std::memory_order_acquire) == stream.native()) [[likely]]
      return;
    note_locked(stream, write);
  }

 private:
  void order_locked(StreamRef consumer, bool write);
  void note_locked(StreamRef stream, bool write);
  // One stream's pending access.
  struct Mark {
    cudaStream_t stream = nullptr;
    std::thread::id thread{};             // whose per-thread default stream, for that handle
    std::shared_ptr<StreamHandle> owner;  // keeps a cuplan-made stream alive until its lazy record
    cudaEvent_t event = nullptr;          // made on event_device, reused by later marks of that device
    int event_device = -1;
    int device = -1;        // the device of the stream
    bool pending = false;   // noted work whose event is not recorded yet (lazy)
    bool lazy = false;      // a lasting stream: its event may wait until another stream needs it
    bool recorded = false;  // the event holds the noted work
  };
  bool same(const Mark& mark, StreamRef stream) const noexcept;
  bool lasting(StreamRef stream) const noexcept;
  void set(Mark& mark, StreamRef stream, int device);
  void mark_work(Mark& mark, StreamRef stream);
  void wait_for(Mark& mark, StreamRef consumer);
  void record(Mark& mark);
  void retire(Mark& mark) noexcept;
  void publish() noexcept;

  std::mutex mutex_;
  // The fast paths' view, written under mutex_ (by start() before the memory is shared), each compared with the
  // caller's stream handle: equal means nothing to do. A handle that names a different stream on each thread
  // (cudaStreamPerThread) is never published, so it always takes the locked path.
  //   producer_:  the last writer's stream (a read there, or a note of one, needs nothing);
  //   sole_writer_:  the same while no read on another stream is pending (a write there needs no wait);
  //   pending_writer_:  the same while its latest work still awaits a lazy record (a repeated write notes nothing).
  std::atomic<cudaStream_t> producer_{unpublished()};
  std::atomic<cudaStream_t> sole_writer_{unpublished()};
  std::atomic<cudaStream_t> pending_writer_{unpublished()};
  /// A handle no stream has (not null, the legacy or the per-thread default stream's).
  static cudaStream_t unpublished() noexcept { return reinterpret_cast<cudaStream_t>(~std::uintptr_t{0}); }
  bool started_ = false;
  cudaStream_t allocation_stream_ = nullptr;
  int device_ = -1;
  Mark writer_;
  std::vector<Mark> readers_;
  std::vector<Mark> spare_;  // retired marks keeping their events for reuse
};

}  // namespace cuplan::detail
