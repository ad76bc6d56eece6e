#pragma once
// A persistent pool of host threads for the staging engine's pageable <-> pinned copies. One thread cannot reach
// the host's memory bandwidth, and creating threads per call would cost more than a small copy: the pool starts
// once per process and splits each copy into slices that its threads (and the caller) run in parallel.

#include <cstddef>
#include <cstdint>
#include <functional>

#include "base/geometry.hpp"

namespace cuplan::detail::staging {

class HostCopyPool {
 public:
  /// The process-wide pool (started on first use; min(hardware threads, 16) workers including the caller).
  static HostCopyPool& instance();
  ~HostCopyPool();
  HostCopyPool(const HostCopyPool&) = delete;
  HostCopyPool& operator=(const HostCopyPool&) = delete;

  /// Threads that run a job, the caller included.
  int width() const noexcept { return width_; }
  /// Runs task(i) for every i in [0, tasks) and returns when all are done. `task` must not throw. When another
  /// thread is running a job, this one runs its tasks alone rather than waiting.
  void parallel_for(std::int64_t tasks, const std::function<void(std::int64_t)>& task);

 private:
  explicit HostCopyPool(int width);
  struct State;
  State* state_;
  int width_;
};

/// The strided host copy of `g` (as copy_strided_host), split into slices over the pool when it is large.
void parallel_copy_strided(const CopyGeometry& g, const void* src, void* dst, std::size_t element_size) noexcept;

}  // namespace cuplan::detail::staging
