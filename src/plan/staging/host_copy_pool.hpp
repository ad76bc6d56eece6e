// SPDX-License-Identifier: Apache-2.0
#pragma once
// A persistent pool of host threads for the staging engine's pageable <-> pinned copies. One thread cannot reach
// the host's memory bandwidth, and creating threads per call would cost more than a small copy: the pool starts
// once per process and splits each copy into slices that its threads (and the caller) run in parallel.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "base/geometry.hpp"

namespace cuplan::detail::staging {

class HostCopyPool {
 public:
  /// The process-wide pool, started on first use with host_copy_width() threads, the caller included.
  static HostCopyPool& instance();
  ~HostCopyPool();
  HostCopyPool(const HostCopyPool&) = delete;
  HostCopyPool& operator=(const HostCopyPool&) = delete;

  /// Threads that run a job, the caller included.
  int width() const noexcept { return width_; }
  /// Runs task(i) for every i in [0, tasks) and returns when all are done. `task` must not throw. When another
  /// thread is running a job, this one runs its tasks alone rather than waiting.
  void parallel_for(std::int64_t tasks, const std::function<void(std::int64_t)>& task);

  /// A job whose tasks run on the pool's threads while the thread that started it does other work; join() runs
  /// what is left on that thread and returns when every task is done. A job that could not take the pool (another
  /// job holds it, or the pool has no threads) runs wholly in join(). Destroying a started job joins it.
  class Job {
   public:
    Job() = default;
    ~Job() { join(); }
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;
    /// Runs the tasks no thread has taken and waits for the rest. Idempotent.
    void join() noexcept;

   private:
    friend class HostCopyPool;
    HostCopyPool* pool_ = nullptr;
    const std::function<void(std::int64_t)>* task_ = nullptr;
    std::int64_t tasks_ = 0;
    bool on_pool_ = false;  // published to the pool's threads (the pool is held until join)
  };
  /// Starts task(i) for every i in [0, tasks) as `job`, which must not be started already. `task` must not throw
  /// and must outlive the job.
  void start(Job& job, std::int64_t tasks, const std::function<void(std::int64_t)>& task);

 private:
  explicit HostCopyPool(int width);
  struct State;
  State* state_;
  int width_;
};

/// Threads of the copy pool: `environment` (CUPLAN_HOST_COPY_THREADS) when it is a whole number in [1, 256];
/// otherwise min(`available_cpus`, 16), where `available_cpus` is the CPUs this process may run on (its affinity
/// mask: an MPI rank bound to 4 cores gets 4, not the node's count). `valid_environment` (optional) says whether a
/// set value was used.
int host_copy_width(const char* environment, int available_cpus, bool* valid_environment = nullptr) noexcept;

/// The strided host copy of `g` (as copy_strided_host), split into slices over the pool when it is large.
void parallel_copy_strided(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size) noexcept;

/// How many blocks to split `g` into along its axis 0 so that each block is one contiguous byte range of the source
/// (`split_source`) or destination side, about `block_bytes` each, at most `max_blocks`; 1 when that side is not
/// dense with axis 0 outermost.
int contiguous_blocks(const CopyGeometry& g, std::size_t element_size, bool split_source, std::size_t block_bytes,
                      int max_blocks) noexcept;
/// Rows [first, second) of axis 0 that block `block` of `blocks` covers.
std::pair<std::int64_t, std::int64_t> block_rows(const CopyGeometry& g, int blocks, int block) noexcept;

/// parallel_copy_strided in `blocks` consecutive blocks of axis 0 (block_rows), pipelined with the DMA: every
/// thread calls before_block(b) before copying a slice of block b (a wait for its download), and the thread that
/// copies block b's last slice calls after_block(b) (its upload). Blocks are taken in order, so the first blocks
/// complete first. Both callbacks may run on any pool thread, concurrently, and must not throw.
void parallel_copy_blocks(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size, int blocks,
                          const std::function<void(int)>& before_block,
                          const std::function<void(int)>& after_block) noexcept;

/// How a host copy writes its destination.
enum class Stores {
  cached,    ///< ordinary stores (the destination is read again soon: a pinned slot that a DMA reads next)
  streaming  ///< non-temporal stores where the layout allows: no read of the destination's lines before they are
             ///< written, and no eviction of the cache (an unpack into the caller's memory)
};

/// parallel_copy_blocks started on the pool's threads: the constructor returns at once (the staging engine
/// enqueues the previous chunk's compute and download meanwhile), join() or the destructor finishes the copy on
/// the calling thread. The memory and the callbacks must outlive the join.
class BlockCopy {
 public:
  BlockCopy(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size, int blocks,
            std::function<void(int)> before_block, std::function<void(int)> after_block,
            Stores stores = Stores::cached);
  ~BlockCopy() { join(); }
  BlockCopy(const BlockCopy&) = delete;
  BlockCopy& operator=(const BlockCopy&) = delete;
  void join() noexcept;

 private:
  void run_slice(std::int64_t t) noexcept;

  CopyGeometry g_;
  const std::byte* src_;
  std::byte* dst_;
  std::size_t element_size_;
  int blocks_;
  std::function<void(int)> before_block_, after_block_;
  Stores stores_;
  bool serial_ = false;  // small: copied in join() on the caller, whole
  std::vector<std::int64_t> per_, first_;
  std::unique_ptr<std::atomic<std::int64_t>[]> left_;
  std::function<void(std::int64_t)> task_;
  HostCopyPool::Job job_;  // last: destroyed (joined) before what its tasks use
};

}  // namespace cuplan::detail::staging
