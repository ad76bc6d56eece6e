// SPDX-License-Identifier: Apache-2.0
#pragma once
// Device memory resources: where cuplan's device allocations come from (docs/memory.md).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "cuplan/cuda_compat.hpp"
#include "cuplan/device.hpp"
#include "cuplan/export.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// A stream-ordered source of device memory. Every device allocation cuplan makes (tensors, workspaces, staging
/// buffers, internal copies) calls allocate() on the resource set for its device, with that device current, and
/// later deallocate() with the same pointer, size and stream; cuplan first makes that stream wait for every other
/// stream that used the memory, so the memory may be reused by work enqueued after deallocate() on that stream.
class CUPLAN_API MemoryResource {
 public:
  virtual ~MemoryResource();
  /// Returns `bytes` (> 0) of device memory usable by work enqueued on `stream` after the call. Throws, or
  /// returns null (cuplan then throws OutOfMemory naming the size and the device), when it cannot.
  virtual void* allocate(std::size_t bytes, cudaStream_t stream) = 0;
  /// Gives back memory from allocate(): the caller enqueued its last use on `stream` before the call. Called from
  /// destructors: an exception escaping it is logged and dropped.
  virtual void deallocate(void* ptr, std::size_t bytes, cudaStream_t stream) = 0;
};

/// Allocates from a caller's CUDA memory pool (cudaMallocFromPoolAsync / cudaFreeAsync). The pool stays the
/// caller's: it must outlive every allocation made from it.
class CUPLAN_API PoolResource final : public MemoryResource {
 public:
  /// InvalidArgument when `pool` is null.
  explicit PoolResource(cudaMemPool_t pool);
  /// The pool allocations come from.
  cudaMemPool_t pool() const noexcept { return pool_; }
  void* allocate(std::size_t bytes, cudaStream_t stream) override;
  void deallocate(void* ptr, std::size_t bytes, cudaStream_t stream) override;

 private:
  cudaMemPool_t pool_;
};

/// Adapts a pair of callables, e.g. an RMM resource's allocate_async / deallocate_async (samples/memory_resource.cu).
class CUPLAN_API CallbackResource final : public MemoryResource {
 public:
  /// Returns `bytes` of device memory ordered on the stream, or null when it cannot.
  using AllocateFn = std::function<void*(std::size_t bytes, cudaStream_t stream)>;
  /// Gives back memory whose last use was enqueued on the stream.
  using DeallocateFn = std::function<void(void* ptr, std::size_t bytes, cudaStream_t stream)>;
  /// InvalidArgument when either callable is empty.
  CallbackResource(AllocateFn allocate_fn, DeallocateFn deallocate_fn);
  void* allocate(std::size_t bytes, cudaStream_t stream) override;
  void deallocate(void* ptr, std::size_t bytes, cudaStream_t stream) override;

 private:
  AllocateFn allocate_;
  DeallocateFn deallocate_;
};

namespace memory {

/// cuplan's device allocation counters for one device, whatever resource served them.
struct Stats {
  std::size_t bytes_in_use = 0;   ///< bytes of live cuplan allocations now
  std::size_t peak_bytes = 0;     ///< most bytes in use since the first allocation or the last reset_peak()
  std::size_t allocations = 0;    ///< allocate() calls so far
  std::size_t deallocations = 0;  ///< deallocate() calls so far
  std::size_t pool_reserved = 0;  ///< bytes the default pool holds from the driver (0 before its first use)
};

/// Makes `resource` serve every later device allocation on `device` (a CUDA device; InvalidArgument otherwise).
/// Null restores the default, cuplan's own pool. Memory allocated before the call is given back to the resource
/// that allocated it, which the allocation keeps alive.
CUPLAN_API void set_resource(Device device, std::shared_ptr<MemoryResource> resource);
/// The resource serving `device` now: the one set, or the default pool's resource.
CUPLAN_API std::shared_ptr<MemoryResource> get_resource(Device device);
/// The default pool of `device` as a PoolResource (made on first use, and kept until the process ends: the pointer
/// stays valid after every copy is gone).
CUPLAN_API std::shared_ptr<MemoryResource> default_resource(Device device);

/// Gives the default pools' unused memory back to the driver, keeping at most `keep_bytes` per device. Devices
/// whose pool was never used are skipped. Synchronizes nothing: memory freed on a stream is released once the
/// free has run.
CUPLAN_API void trim(std::size_t keep_bytes = 0);
/// Sets the default pool's release threshold on `device`: freed memory above `bytes` goes back to the driver at
/// the next synchronization. The default keeps everything (UINT64_MAX), so steady-state allocation makes no
/// driver call.
CUPLAN_API void set_release_threshold(Device device, std::uint64_t bytes);

/// Allocation counters of `device` (a CUDA device; all zero before its first allocation).
CUPLAN_API Stats stats(Device device);
/// Starts a new peak measurement at the bytes in use now.
CUPLAN_API void reset_peak(Device device);

/// What cuplan holds for one device, by purpose (docs/memory.md, "The memory report"). The device figures are
/// cuplan's own allocations on that device; the host figures (pinned staging rings and the pinned block cache) are
/// the process's, the same for every device. The figures overlap (a cached plan's owned work area counts under both
/// owned_work_area_bytes and cached_plan_bytes): device_bytes_in_use is the total.
struct Report {
  Device device = Device::cpu();            ///< the device reported on
  std::size_t shared_work_areas = 0;        ///< shared work areas on the device (one per stream that used one)
  std::size_t shared_work_area_bytes = 0;   ///< their bytes
  std::size_t owned_work_areas = 0;         ///< work areas objects with WorkAreaPolicy::owned hold on the device
  std::size_t owned_work_area_bytes = 0;    ///< their bytes
  std::size_t cached_plans = 0;             ///< plans of the function forms' cache for the device (idle and in use)
  std::size_t cached_plan_bytes = 0;        ///< bytes those plans hold (own work areas, staging buffers)
  std::size_t staging_ring_bytes = 0;       ///< pinned host staging rings of host-operand calls (process-wide)
  std::size_t pinned_cache_live_bytes = 0;  ///< pinned host blocks handed out by the pinned cache (process-wide)
  std::size_t pinned_cache_idle_bytes = 0;  ///< pinned host blocks kept for reuse (process-wide)
  std::size_t device_bytes_in_use = 0;      ///< every live cuplan allocation on the device (Stats::bytes_in_use)
};
/// The memory report of `device` (a CUDA device, or Device::cpu() for the host figures alone). Never blocks on
/// the device; the figures are a snapshot that other threads may change at once.
CUPLAN_API Report report(Device device);
/// Releases the shared work areas of `device` (stream-ordered after their last use; InvalidArgument for the cpu or a
/// device that does not exist). A cuplan Stream's areas go when the Stream is destroyed; call this after destroying a
/// stream cuplan did not make (Stream::external, a raw handle) that used shared areas: its area stays until then.
CUPLAN_API void release_work_areas(Device device);

}  // namespace memory
}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
