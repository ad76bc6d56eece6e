// SPDX-License-Identifier: Apache-2.0
#pragma once
// Owned memory with stream-ordered release (docs/getting-started.md).
//
// Device memory comes from the device's MemoryResource (cuplan/memory.hpp; by default a per-device cuplan memory
// pool through cudaMallocFromPoolAsync) on the allocation stream. Every other stream that uses the memory is recorded
// (record_use); the destructor makes the allocation stream wait for the work enqueued so far on each of them and then
// frees on the allocation stream, so the pool cannot hand the bytes out again before every recorded use has finished.
// cuplan-made streams are kept alive by the record until then, and a cuplan-made allocation stream (of any memory
// space) for as long as the memory lives. The per-thread default stream is one handle for a different stream on each
// thread: a thread that never used it cannot order after another thread's, so memory that another thread's
// per-thread stream used is released after a device synchronisation instead.

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cuplan/device.hpp"
#include "cuplan/stream.hpp"
#include "runtime/producer_order.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
class MemoryResource;
}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan

namespace cuplan::detail {

class StreamHandle;

/// The default pool of `device`, made on first use (release threshold UINT64_MAX: it keeps what is freed).
cudaMemPool_t default_pool(int device);
/// The default pool of `device` if it was made, else null.
cudaMemPool_t existing_default_pool(int device) noexcept;

/// Bytes of a device's cuplan memory pool (all zero before the device's first allocation): `used` by live
/// allocations now, `used_high` the most since the last reset_pool_peak, `reserved` held by the pool.
struct PoolStatistics {
  std::size_t used = 0;
  std::size_t used_high = 0;
  std::size_t reserved = 0;
};
PoolStatistics pool_statistics(int device);
/// Starts a new `used_high` measurement at the current use.
void reset_pool_peak(int device);

class Storage {
 public:
  /// Allocate `bytes` in `space` (device: stream-ordered on `stream` of `device`; host_pinned: cudaMallocHost;
  /// host_pageable: 64-byte aligned operator new). OutOfMemory on failure, naming the size and the device.
  static std::shared_ptr<Storage> allocate(std::size_t bytes, Device device, MemorySpace space, StreamRef stream);
  /// Memory owned elsewhere (e.g. a DLPack producer): `release` runs once when the last reference is gone, after
  /// every recorded use of the memory has finished (the destructor waits for those streams on the host, since the
  /// owner's release is a host call). `stream` is where later uses are ordered, as for allocate.
  static std::shared_ptr<Storage> adopt(void* data, std::size_t bytes, Device device, MemorySpace space,
                                        StreamRef stream, std::function<void()> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  Device device() const noexcept { return device_; }
  MemorySpace space() const noexcept { return space_; }
  StreamRef allocation_stream() const noexcept { return alloc_stream_; }

  /// Record that `stream` uses the memory. Cheap when the stream is already recorded (the common case).
  void record_use(StreamRef stream);
  /// Make `consumer` wait, on the GPU, for the work enqueued so far on the allocation stream and on every recorded
  /// use (the streams whose work may have written the memory); nothing for a stream already among them.
  void order_after_uses(StreamRef consumer);
  /// Makes `stream` wait, on the GPU, for the memory's pending producer (its last cuplan write on another stream)
  /// and, for a `write`, for its cuplan reads on other streams since then (ProducerOrder). Call before enqueuing a
  /// cuplan access on `stream`; nothing for host memory, which cuplan's calls have finished with when they return.
  void order_access(StreamRef stream, bool write) {
    if (tracked_) producer_order_.order(stream, write);
  }
  /// Work just enqueued on `stream` reads or writes the memory (after order_access).
  void note_access(StreamRef stream, bool write) {
    if (tracked_) producer_order_.note(stream, write);
  }

 private:
  // Made only by allocate and adopt, through make_shared (one heap block for the object and its count): the
  // constructor is public for make_shared, but only this class can name its argument.
  struct Key {
    explicit Key() = default;
  };

 public:
  explicit Storage(Key) {}

 private:
  void note_thread_relative(cudaStream_t stream);  // mutex_ held or not yet shared
  /// True when a thread other than the calling one allocated or used this memory on its per-thread default stream,
  /// which no other thread can order after (mutex_ held, or the last reference).
  bool used_by_another_threads_default_stream() const noexcept;
  /// Waits on the host for the device (every device, for host memory): the fallback order for such memory.
  void wait_for_other_threads_default_streams() noexcept;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  Device device_;
  MemorySpace space_ = MemorySpace::host_pageable;
  StreamRef alloc_stream_;
  std::shared_ptr<MemoryResource> resource_;          // device memory: the resource that allocated it gets it back
  std::shared_ptr<StreamHandle> alloc_stream_owner_;  // keeps a cuplan-made allocation stream alive (every space)
  std::mutex mutex_;
  std::vector<cudaStream_t> uses_;                      // streams other than the allocation stream
  std::vector<std::shared_ptr<StreamHandle>> owners_;   // keeps cuplan-made streams among uses_ alive
  std::function<void()> release_;                       // adopted memory: gives it back to its owner
  std::vector<std::thread::id> thread_relative_users_;  // threads whose per-thread default stream used the memory
  bool tracked_ = false;          // device or managed memory on a GPU: cuplan's accesses are ordered
  ProducerOrder producer_order_;  // the pending producer and readers of tracked memory
};

}  // namespace cuplan::detail
