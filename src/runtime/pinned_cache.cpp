// SPDX-License-Identifier: Apache-2.0
#include "runtime/pinned_cache.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

#include "base/cuda_check.hpp"
#include "cuplan/device.hpp"

namespace cuplan::detail {

namespace {

constexpr std::size_t small_granule = std::size_t{4} << 10;
constexpr std::size_t large_granule = std::size_t{2} << 20;

void* cuda_allocate(std::size_t bytes) {
  void* data = nullptr;
  const cudaError_t status = cudaMallocHost(&data, bytes);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return nullptr;
  }
  CUPLAN_CUDA_CHECK(status);
  return data;
}

void cuda_free(void* data) noexcept {
  CUPLAN_CUDA_CHECK_NOEXCEPT(cudaFreeHost(data));
}

std::size_t default_limit() noexcept {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const std::size_t physical = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * page : 0;
  return std::max(physical / 8, std::size_t{256} << 20);
}

}  // namespace

PinnedBlockCache::PinnedBlockCache(AllocateFn allocate, FreeFn free, std::size_t limit) noexcept
    : allocate_(allocate), free_(free), limit_(limit) {}

PinnedBlockCache::~PinnedBlockCache() {
  trim();  // live blocks belong to their owners, which give them back through release()
}

std::size_t PinnedBlockCache::rounded(std::size_t bytes) noexcept {
  const std::size_t granule = bytes >= (std::size_t{1} << 20) ? large_granule : small_granule;
  return (bytes + granule - 1) / granule * granule;
}

void* PinnedBlockCache::acquire(std::size_t bytes) {
  if (bytes > std::numeric_limits<std::size_t>::max() - large_granule) return nullptr;  // rounding would wrap
  const std::size_t want = rounded(bytes);
  {
    std::lock_guard lock(mutex_);
    // Smallest fitting idle block, and no more than twice the request: a large block is not tied up by a small one.
    auto best = idle_.end();
    for (auto it = idle_.begin(); it != idle_.end(); ++it)
      if (it->bytes >= want && it->bytes / 2 <= want && (best == idle_.end() || it->bytes < best->bytes)) best = it;
    if (best != idle_.end()) {
      Block block = *best;
      idle_.erase(best);
      stats_.idle_bytes -= block.bytes;
      stats_.live_bytes += block.bytes;
      ++stats_.reuses;
      live_.push_back(block);
      return block.data;
    }
  }
  void* data = allocate_(want);
  if (data == nullptr) {
    trim();  // idle pinned blocks may be what keeps the allocation from succeeding
    data = allocate_(want);
    if (data == nullptr) return nullptr;
  }
  std::lock_guard lock(mutex_);
  ++stats_.allocations;
  stats_.live_bytes += want;
  live_.push_back(Block{data, want, 0});
  return data;
}

void PinnedBlockCache::release(void* data) noexcept {
  if (data == nullptr) return;
  std::lock_guard lock(mutex_);
  const auto it = std::find_if(live_.begin(), live_.end(), [&](const Block& b) { return b.data == data; });
  if (it == live_.end()) return;  // not ours: nothing to keep
  Block block = *it;
  live_.erase(it);
  stats_.live_bytes -= block.bytes;
  block.freed_at = ++clock_;
  idle_.push_back(block);
  stats_.idle_bytes += block.bytes;
  trim_to(limit_);
}

void PinnedBlockCache::trim() noexcept {
  std::lock_guard lock(mutex_);
  trim_to(0);
}

void PinnedBlockCache::trim_to(std::size_t keep) noexcept {
  while (stats_.idle_bytes > keep && !idle_.empty()) {
    const auto oldest = std::min_element(idle_.begin(), idle_.end(),
                                         [](const Block& a, const Block& b) { return a.freed_at < b.freed_at; });
    free_(oldest->data);
    stats_.idle_bytes -= oldest->bytes;
    ++stats_.frees;
    idle_.erase(oldest);
  }
  stats_.idle_blocks = idle_.size();
}

std::size_t PinnedBlockCache::limit() const noexcept {
  std::lock_guard lock(mutex_);
  return limit_;
}

void PinnedBlockCache::set_limit(std::size_t limit) noexcept {
  std::lock_guard lock(mutex_);
  limit_ = limit;
  trim_to(limit_);
}

PinnedCacheStats PinnedBlockCache::stats() const noexcept {
  std::lock_guard lock(mutex_);
  PinnedCacheStats s = stats_;
  s.idle_blocks = idle_.size();
  return s;
}

PinnedBlockCache& pinned_cache() {
  // Never destroyed: pinned Tensors may be released during static destruction, after the CUDA runtime's teardown
  // started, and the driver reclaims pinned memory at exit anyway.
  static PinnedBlockCache* cache = new PinnedBlockCache(&cuda_allocate, &cuda_free, default_limit());
  return *cache;
}

Tensor empty_host_result(const Shape& shape, const Strides& strides, DType dtype) {
  // The span the strides cover (the planner's result strides are non-negative and non-overlapping).
  std::size_t span = checked_numel(shape) > 0 ? 1 : 0;
  for (int axis = 0; axis < shape.size() && span > 0; ++axis)
    span += static_cast<std::size_t>(shape[axis] - 1) * static_cast<std::size_t>(strides[axis]);
  const std::size_t bytes = span * dtype.size();
  const bool pinned = bytes >= pinned_result_min_bytes && cuda_available() && bytes <= pinned_cache().limit();
  return Tensor::empty_strided(shape, strides, dtype, Device::cpu(), std::nullopt,
                               pinned ? HostMemory::pinned : HostMemory::pageable);
}

}  // namespace cuplan::detail
