// SPDX-License-Identifier: Apache-2.0
// Memory resources: the per-device registry, the pool and callback adapters, counters and default-pool controls.

#include "cuplan/memory.hpp"

#include <fmt/format.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <utility>

#include "base/cuda_check.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/memory_registry.hpp"
#include "runtime/memory_uses.hpp"
#include "runtime/pinned_cache.hpp"
#include "runtime/storage.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

MemoryResource::~MemoryResource() = default;

PoolResource::PoolResource(cudaMemPool_t pool) : pool_(pool) {
  if (pool == nullptr) throw InvalidArgument("PoolResource: pool must not be null; expected a cudaMemPool_t");
}

void* PoolResource::allocate(std::size_t bytes, cudaStream_t stream) {
  void* ptr = nullptr;
  const cudaError_t status = cudaMallocFromPoolAsync(&ptr, bytes, pool_, stream);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return nullptr;  // the caller throws OutOfMemory naming the size and the device
  }
  CUPLAN_CUDA_CHECK(status);
  return ptr;
}

void PoolResource::deallocate(void* ptr, std::size_t /*bytes*/, cudaStream_t stream) {
  CUPLAN_CUDA_CHECK(cudaFreeAsync(ptr, stream));
}

CallbackResource::CallbackResource(AllocateFn allocate_fn, DeallocateFn deallocate_fn)
    : allocate_(std::move(allocate_fn)), deallocate_(std::move(deallocate_fn)) {
  if (!allocate_) throw InvalidArgument("CallbackResource: allocate callback is empty; expected a callable");
  if (!deallocate_) throw InvalidArgument("CallbackResource: deallocate callback is empty; expected a callable");
}

void* CallbackResource::allocate(std::size_t bytes, cudaStream_t stream) {
  return allocate_(bytes, stream);
}

void CallbackResource::deallocate(void* ptr, std::size_t bytes, cudaStream_t stream) {
  deallocate_(ptr, bytes, stream);
}

namespace {

struct DeviceMemory {
  std::mutex mutex;
  std::shared_ptr<MemoryResource> user;         // null: the default pool
  std::shared_ptr<MemoryResource> default_one;  // made on first use, never destroyed (default_locked)
  // Read without the lock by every device allocation (detail::device_resource): whether a user resource is set, and
  // the default one once made.
  std::atomic<bool> has_user{false};
  std::atomic<MemoryResource*> default_ptr{nullptr};
  std::atomic<std::size_t> in_use{0}, peak{0}, allocations{0}, deallocations{0};
};

DeviceMemory g_devices[detail::max_devices];

// Validates a public call's device: a CUDA device index in range.
DeviceMemory& device_memory(Device device, const char* who) {
  if (!device.is_cuda()) throw InvalidArgument(fmt::format("{}: device: expected a CUDA device, got {}", who, device));
  if (device.index() < 0 || device.index() >= detail::max_devices) {
    throw InvalidArgument(
        fmt::format("{}: device: expected a CUDA device index in [0, {}) (cuplan's device limit), got {}", who,
                    detail::max_devices, device.index()));
  }
  return g_devices[device.index()];
}

// The default resource is never destroyed (memory is freed to it until the process ends, after static destructors
// too), so the allocations' fast path may hand it out without a reference count. What get_resource and
// default_resource return still counts references (a deleter that keeps it), as any shared_ptr does.
std::shared_ptr<MemoryResource> default_locked(DeviceMemory& memory, int device) {
  if (!memory.default_one) {
    auto* pool = new PoolResource(detail::default_pool(device));
    memory.default_one = std::shared_ptr<MemoryResource>(pool, [](MemoryResource*) {});
    memory.default_ptr.store(pool, std::memory_order_release);
  }
  return memory.default_one;
}

}  // namespace

}  // namespace CUPLAN_ABI_NAMESPACE

namespace detail {

std::shared_ptr<MemoryResource> device_resource(int device) {
  DeviceMemory& memory = g_devices[device];
  // Every execute's result is allocated here: no lock and no count while the default resource is in use. An
  // allocation racing with set_resource gets either resource, as it would with the lock.
  if (!memory.has_user.load(std::memory_order_acquire)) {
    if (MemoryResource* pool = memory.default_ptr.load(std::memory_order_acquire))
      return std::shared_ptr<MemoryResource>(std::shared_ptr<void>(), pool);
  }
  std::lock_guard lock(memory.mutex);
  return memory.user ? memory.user : default_locked(memory, device);
}

void note_allocate(int device, std::size_t bytes) noexcept {
  DeviceMemory& memory = g_devices[device];
  memory.allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t now = memory.in_use.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::size_t peak = memory.peak.load(std::memory_order_relaxed);
  while (now > peak && !memory.peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void release_to(MemoryResource& resource, int device, void* ptr, std::size_t bytes, cudaStream_t stream) noexcept {
  try {
    resource.deallocate(ptr, bytes, stream);
  } catch (const std::exception& e) {
    log(LogLevel::warning, "MemoryResource::deallocate of {} bytes on cuda:{} threw: {}", bytes, device, e.what());
  } catch (...) {
    log(LogLevel::warning, "MemoryResource::deallocate of {} bytes on cuda:{} threw a non-standard exception", bytes,
        device);
  }
  DeviceMemory& memory = g_devices[device];
  memory.deallocations.fetch_add(1, std::memory_order_relaxed);
  memory.in_use.fetch_sub(bytes, std::memory_order_relaxed);
}

}  // namespace detail

inline namespace CUPLAN_ABI_NAMESPACE {

namespace memory {

void set_resource(Device device, std::shared_ptr<MemoryResource> resource) {
  DeviceMemory& memory = device_memory(device, "memory::set_resource");
  detail::require_cuda("memory::set_resource");
  device.check_valid("memory::set_resource: device");
  std::lock_guard lock(memory.mutex);
  memory.user = std::move(resource);
  memory.has_user.store(memory.user != nullptr, std::memory_order_release);
}

std::shared_ptr<MemoryResource> get_resource(Device device) {
  DeviceMemory& memory = device_memory(device, "memory::get_resource");
  detail::require_cuda("memory::get_resource");
  device.check_valid("memory::get_resource: device");
  std::lock_guard lock(memory.mutex);
  return memory.user ? memory.user : default_locked(memory, device.index());
}

std::shared_ptr<MemoryResource> default_resource(Device device) {
  DeviceMemory& memory = device_memory(device, "memory::default_resource");
  detail::require_cuda("memory::default_resource");
  device.check_valid("memory::default_resource: device");
  std::lock_guard lock(memory.mutex);
  return default_locked(memory, device.index());
}

void trim(std::size_t keep_bytes) {
  for (int device = 0; device < detail::max_devices; ++device) {
    if (cudaMemPool_t pool = detail::existing_default_pool(device))
      CUPLAN_CUDA_CHECK(cudaMemPoolTrimTo(pool, keep_bytes));
  }
}

void set_release_threshold(Device device, std::uint64_t bytes) {
  (void)device_memory(device, "memory::set_release_threshold");
  detail::require_cuda("memory::set_release_threshold");
  device.check_valid("memory::set_release_threshold: device");
  CUPLAN_CUDA_CHECK(
      cudaMemPoolSetAttribute(detail::default_pool(device.index()), cudaMemPoolAttrReleaseThreshold, &bytes));
}

Stats stats(Device device) {
  const DeviceMemory& memory = device_memory(device, "memory::stats");
  Stats result;
  result.bytes_in_use = memory.in_use.load(std::memory_order_relaxed);
  result.peak_bytes = memory.peak.load(std::memory_order_relaxed);
  result.allocations = memory.allocations.load(std::memory_order_relaxed);
  result.deallocations = memory.deallocations.load(std::memory_order_relaxed);
  if (cudaMemPool_t pool = detail::existing_default_pool(device.index())) {
    std::uint64_t reserved = 0;
    CUPLAN_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    result.pool_reserved = static_cast<std::size_t>(reserved);
  }
  return result;
}

void reset_peak(Device device) {
  DeviceMemory& memory = device_memory(device, "memory::reset_peak");
  memory.peak.store(memory.in_use.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

Report report(Device device) {
  using detail::MemoryUse;
  Report r;
  r.device = device;
  const int index = device.index();  // -1 for the host
  if (device.is_cuda()) {
    // InvalidArgument for a device that does not exist, naming this call.
    r.device_bytes_in_use = device_memory(device, "memory::report").in_use.load(std::memory_order_relaxed);
    const detail::MemoryUseTotal shared = detail::memory_use(MemoryUse::shared_work_area, index);
    const detail::MemoryUseTotal owned = detail::memory_use(MemoryUse::owned_work_area, index);
    r.shared_work_areas = shared.items;
    r.shared_work_area_bytes = shared.bytes;
    r.owned_work_areas = owned.items;
    r.owned_work_area_bytes = owned.bytes;
  }
  const detail::MemoryUseTotal plans = detail::memory_use(MemoryUse::cached_plan, index);
  r.cached_plans = plans.items;
  r.cached_plan_bytes = plans.bytes;
  r.staging_ring_bytes = detail::memory_use(MemoryUse::staging_ring, -1).bytes;
  const detail::PinnedCacheStats pinned = detail::pinned_cache().stats();
  r.pinned_cache_live_bytes = pinned.live_bytes;
  r.pinned_cache_idle_bytes = pinned.idle_bytes;
  return r;
}

}  // namespace memory
}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
