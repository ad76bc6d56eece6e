// SPDX-License-Identifier: Apache-2.0
#pragma once
// A caching allocator of pinned host memory (docs/staging.md). cudaMallocHost costs about as much as touching the
// memory once and cudaFreeHost synchronises the device, so a loop of host-operand calls that each return a new
// pinned result would pay both per call. Freed blocks are kept instead, up to a cap on the idle bytes, and handed
// to the next request they fit; the least recently freed blocks go first when the cap is exceeded.
//
// PinnedBlockCache holds the bookkeeping only; the raw allocation and free are injected, so the process-wide
// instance uses cudaMallocHost/cudaFreeHost and the unit tests use plain heap memory.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cuplan/tensor.hpp"

namespace cuplan::detail {

struct PinnedCacheStats {
  std::uint64_t allocations = 0;  ///< raw allocations made (cudaMallocHost calls)
  std::uint64_t reuses = 0;       ///< requests served from an idle block
  std::uint64_t frees = 0;        ///< raw frees made (trims)
  std::size_t live_bytes = 0;     ///< bytes of blocks handed out now
  std::size_t idle_bytes = 0;     ///< bytes of freed blocks kept for reuse
  std::size_t idle_blocks = 0;
};

class PinnedBlockCache {
 public:
  using AllocateFn = void* (*)(std::size_t bytes);  ///< null when the memory cannot be had
  using FreeFn = void (*)(void* data) noexcept;

  PinnedBlockCache(AllocateFn allocate, FreeFn free, std::size_t limit) noexcept;
  ~PinnedBlockCache();
  PinnedBlockCache(const PinnedBlockCache&) = delete;
  PinnedBlockCache& operator=(const PinnedBlockCache&) = delete;

  /// A block of at least `bytes` (> 0): the smallest idle block that fits and is at most twice the rounded size,
  /// else a new one. When the raw allocation fails, the idle blocks are freed and it is tried once more; null when
  /// it fails again.
  void* acquire(std::size_t bytes);
  /// Gives a block from acquire back (no copy may use it any more); trims to the cap.
  void release(void* data) noexcept;
  /// Frees every idle block.
  void trim() noexcept;
  /// Most idle bytes kept; also the largest host result that is made pinned (docs/staging.md).
  std::size_t limit() const noexcept;
  void set_limit(std::size_t limit) noexcept;
  PinnedCacheStats stats() const noexcept;
  /// Size a request is rounded up to: 4 KiB pages below 1 MiB, 2 MiB above.
  static std::size_t rounded(std::size_t bytes) noexcept;

 private:
  struct Block {
    void* data = nullptr;
    std::size_t bytes = 0;
    std::uint64_t freed_at = 0;  // release order, for least-recently-freed eviction
  };
  void trim_to(std::size_t keep) noexcept;  // mutex held

  AllocateFn allocate_;
  FreeFn free_;
  mutable std::mutex mutex_;
  std::size_t limit_;
  std::vector<Block> idle_, live_;
  std::uint64_t clock_ = 0;
  PinnedCacheStats stats_;
};

/// The process-wide cache behind every pinned host allocation of Storage. Its cap is one eighth of the host's
/// physical memory (at least 256 MiB).
PinnedBlockCache& pinned_cache();

/// Smallest host result made pinned: below it a pageable allocation costs less than it saves.
constexpr std::size_t pinned_result_min_bytes = std::size_t{1} << 20;

/// A new host Tensor for the result of a CUDA call with host operands: pinned (from the cache) when CUDA is
/// available and its span is between pinned_result_min_bytes and the cache's cap, so that the result is DMA'd in
/// place; pageable otherwise. Not zero-filled either way.
Tensor empty_host_result(const Shape& shape, const Strides& strides, DType dtype);

}  // namespace cuplan::detail
