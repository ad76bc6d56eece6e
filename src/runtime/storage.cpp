// SPDX-License-Identifier: Apache-2.0
// Owned memory with stream-ordered release: device memory from the device's MemoryResource (cuplan's pool by
// default), recorded stream uses, ordered frees.

#include "runtime/storage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <new>
#include <optional>

#include "base/cuda_check.hpp"
#include "base/fault_injection.hpp"
#include "base/ordering_hooks.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "runtime/access.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/memory_registry.hpp"
#include "runtime/pinned_cache.hpp"
#include "runtime/stream_handle.hpp"

namespace cuplan::detail {

namespace {

constexpr std::size_t host_alignment = 64;

// One pool and one ordering event per device, created on first use and kept for the life of the process: the pool
// keeps freed memory for reuse (release threshold UINT64_MAX), so steady-state allocation makes no driver call.
struct DeviceResources {
  cudaMemPool_t pool = nullptr;
  cudaEvent_t order_event = nullptr;  // re-recorded per wait: a wait captures the record made just before it
  std::mutex event_mutex;
};

// Made once per device under the mutex, then read without it: every device allocation looks its pool up here.
std::mutex g_resources_mutex;
std::atomic<DeviceResources*> g_resources[max_devices] = {};

DeviceResources& device_resources(int device) {
  if (device < 0 || device >= max_devices) {
    throw InvalidArgument(
        fmt::format("Storage: device index: expected a CUDA device index in [0, {}), got {}", max_devices, device));
  }
  if (DeviceResources* existing = g_resources[device].load(std::memory_order_acquire)) return *existing;
  std::lock_guard lock(g_resources_mutex);
  if (DeviceResources* existing = g_resources[device].load(std::memory_order_relaxed)) return *existing;
  auto resources = std::make_unique<DeviceResources>();
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  CUPLAN_CUDA_CHECK(cudaMemPoolCreate(&resources->pool, &props));
  std::uint64_t keep_all = UINT64_MAX;
  CUPLAN_CUDA_CHECK(cudaMemPoolSetAttribute(resources->pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
  CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(&resources->order_event, cudaEventDisableTiming));
  // Intentionally never destroyed: frees may run at process exit.
  DeviceResources* made = resources.release();
  g_resources[device].store(made, std::memory_order_release);
  return *made;
}

// Makes `device` current for a destructor's calls, restoring the previous device; never throws.
class NoexceptDeviceScope {
 public:
  explicit NoexceptDeviceScope(int device) noexcept {
    if (cuda_device_count() == 1 || cudaGetDevice(&previous_) != cudaSuccess || previous_ == device) {
      previous_ = -1;
      return;
    }
    CUPLAN_CUDA_CHECK_NOEXCEPT(cudaSetDevice(device));
  }
  ~NoexceptDeviceScope() {
    if (previous_ >= 0) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaSetDevice(previous_));
  }
  NoexceptDeviceScope(const NoexceptDeviceScope&) = delete;
  NoexceptDeviceScope& operator=(const NoexceptDeviceScope&) = delete;

 private:
  int previous_ = -1;
};

// Makes `alloc_stream` (of `device`, which is current) wait for the work enqueued so far on `use`.
void order_free_after(int device, cudaStream_t alloc_stream, cudaStream_t use) noexcept {
  int use_device = device;
  CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamGetDevice(use, &use_device));
  if (use_device == device) {
    DeviceResources* resources = g_resources[device].load(std::memory_order_acquire);
    std::lock_guard lock(resources->event_mutex);
    CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventRecord(resources->order_event, use));
    CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamWaitEvent(alloc_stream, resources->order_event, 0));
    return;
  }
  // A stream of another device (peer access): an event must be recorded on its own device.
  cudaEvent_t event = nullptr;
  {
    NoexceptDeviceScope scope(use_device);
    CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    if (event != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventRecord(event, use));
  }
  if (event == nullptr) return;
  CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamWaitEvent(alloc_stream, event, 0));
  CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event));  // released once the wait no longer needs it
}

}  // namespace

cudaMemPool_t default_pool(int device) {
  return device_resources(device).pool;
}

cudaMemPool_t existing_default_pool(int device) noexcept {
  if (device < 0 || device >= max_devices) return nullptr;
  const DeviceResources* resources = g_resources[device].load(std::memory_order_acquire);
  return resources == nullptr ? nullptr : resources->pool;
}

PoolStatistics pool_statistics(int device) {
  PoolStatistics stats;
  if (device < 0 || device >= max_devices) return stats;
  const DeviceResources* resources = g_resources[device].load(std::memory_order_acquire);
  if (resources == nullptr) return stats;
  std::uint64_t value = 0;
  CUPLAN_CUDA_CHECK(cudaMemPoolGetAttribute(resources->pool, cudaMemPoolAttrUsedMemCurrent, &value));
  stats.used = value;
  CUPLAN_CUDA_CHECK(cudaMemPoolGetAttribute(resources->pool, cudaMemPoolAttrUsedMemHigh, &value));
  stats.used_high = value;
  CUPLAN_CUDA_CHECK(cudaMemPoolGetAttribute(resources->pool, cudaMemPoolAttrReservedMemCurrent, &value));
  stats.reserved = value;
  return stats;
}

void reset_pool_peak(int device) {
  if (device < 0 || device >= max_devices) return;
  const DeviceResources* resources = g_resources[device].load(std::memory_order_acquire);
  if (resources == nullptr) return;
  std::uint64_t zero = 0;  // resets the high-water mark to the current use
  CUPLAN_CUDA_CHECK(cudaMemPoolSetAttribute(resources->pool, cudaMemPoolAttrUsedMemHigh, &zero));
}

namespace {
fault::Site fault_site(MemorySpace space) noexcept {
  if (space == MemorySpace::device) return fault::Site::device;
  return space == MemorySpace::host_pinned ? fault::Site::pinned : fault::Site::host;
}
}  // namespace

std::shared_ptr<Storage> Storage::allocate(std::size_t bytes, Device device, MemorySpace space, StreamRef stream) {
  auto storage = std::make_shared<Storage>(Key{});
  storage->bytes_ = bytes;
  storage->device_ = device;
  storage->space_ = space;
  storage->alloc_stream_ = stream;
  // A share of a cuplan-made stream, whatever the memory space: allocation_stream() hands the stream out for as long
  // as the memory lives (device memory is also freed on it).
  storage->alloc_stream_owner_ = Access::retain(stream);
  // Device memory is freed on its allocation stream; host memory counts only its recorded uses.
  if (space == MemorySpace::device) storage->note_thread_relative(stream.native());
  switch (space) {
    case MemorySpace::device: {
      require_cuda("Storage::allocate (device memory)");
      device.check_valid("Storage::allocate: device");
      if (bytes == 0) break;
      DeviceScope scope(device);
      (void)device_resources(device.index());  // the destructor's ordering event, made before any memory exists
      storage->resource_ = device_resource(device.index());
      drain_per_thread_stream_at_exit(device.index());  // this thread now uses the stream-ordered allocator
      void* data = fault::inject(fault::Site::device) ? nullptr : storage->resource_->allocate(bytes, stream.native());
      if (data == nullptr) {
        throw OutOfMemory(
            fmt::format("Storage::allocate: cannot allocate {} bytes of device memory on {}", bytes, device));
      }
      storage->data_ = data;
      note_allocate(device.index(), bytes);
      storage->producer_order_.start(stream, device);  // the allocation is ordered on its stream
      storage->tracked_ = true;
      break;
    }
    case MemorySpace::host_pinned: {
      require_cuda("Storage::allocate (pinned host memory)");
      if (bytes == 0) break;
      // From the caching allocator: a freed pinned block is kept and reused (docs/staging.md).
      storage->data_ = fault::inject(fault::Site::pinned) ? nullptr : pinned_cache().acquire(bytes);
      if (storage->data_ == nullptr)
        throw OutOfMemory(fmt::format("Storage::allocate: cannot allocate {} bytes of pinned host memory", bytes));
      break;
    }
    case MemorySpace::host_pageable: {
      if (bytes == 0) break;
      storage->data_ = fault::inject(fault::Site::host)
                           ? nullptr
                           : ::operator new (bytes, std::align_val_t{host_alignment}, std::nothrow);
      if (storage->data_ == nullptr) {
        throw OutOfMemory(fmt::format("Storage::allocate: cannot allocate {} bytes of host memory", bytes));
      }
      break;
    }
    case MemorySpace::managed:
      throw NotSupported(
          "Storage::allocate: managed memory is not allocated by cuplan; expected device, "
          "host_pinned or host_pageable");
  }
  if (storage->data_ != nullptr) fault::allocated(fault_site(space), bytes);
  return storage;
}

void Storage::note_thread_relative(cudaStream_t stream) {
  if (!thread_relative_stream(stream)) return;
  if (device_.is_cuda()) drain_per_thread_stream_at_exit(device_.index());
  const std::thread::id self = std::this_thread::get_id();
  if (std::find(thread_relative_users_.begin(), thread_relative_users_.end(), self) == thread_relative_users_.end())
    thread_relative_users_.push_back(self);
}

bool Storage::used_by_another_threads_default_stream() const noexcept {
  const std::thread::id self = std::this_thread::get_id();
  return std::any_of(thread_relative_users_.begin(), thread_relative_users_.end(),
                     [&](std::thread::id t) { return t != self; });
}

void Storage::wait_for_other_threads_default_streams() noexcept {
  if (host_streams()) return;
  const bool device_memory = space_ == MemorySpace::device || space_ == MemorySpace::managed;
  if (device_memory && device_.is_cuda()) {
    NoexceptDeviceScope scope(device_.index());
    CUPLAN_CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
    return;
  }
  for (int d = 0; d < cuda_device_count(); ++d) {
    NoexceptDeviceScope scope(d);
    CUPLAN_CUDA_CHECK_NOEXCEPT(cudaDeviceSynchronize());
  }
}

void Storage::record_use(StreamRef stream) {
  // Host memory is not stream-ordered, so every stream (the allocation stream included) counts as a use that the
  // destructor must wait for; device memory is freed on the allocation stream, which orders itself.
  const bool device_memory = space_ == MemorySpace::device;
  const bool thread_relative = thread_relative_stream(stream.native());
  if (device_memory && stream == alloc_stream_ && !thread_relative) return;
  std::lock_guard lock(mutex_);
  note_thread_relative(stream.native());  // even as the allocation stream: on this thread it is another stream
  if (device_memory && stream == alloc_stream_) return;
  if (std::find(uses_.begin(), uses_.end(), stream.native()) != uses_.end()) return;
  uses_.push_back(stream.native());
  if (auto owner = Access::retain(stream)) owners_.push_back(std::move(owner));
}

std::shared_ptr<Storage> Storage::adopt(void* data, std::size_t bytes, Device device, MemorySpace space,
                                        StreamRef stream, std::function<void()> release) {
  auto storage = std::make_shared<Storage>(Key{});
  storage->data_ = data;
  storage->bytes_ = bytes;
  storage->device_ = device;
  storage->space_ = space;
  storage->alloc_stream_ = stream;
  storage->alloc_stream_owner_ = Access::retain(stream);
  if (space == MemorySpace::device || space == MemorySpace::managed) storage->note_thread_relative(stream.native());
  storage->release_ = std::move(release);
  if ((space == MemorySpace::device || space == MemorySpace::managed) && data != nullptr && !host_streams()) {
    storage->producer_order_.start(stream, device.is_cuda() ? device : Device::cuda(0));
    storage->tracked_ = true;
  }
  return storage;
}

void Storage::order_after_uses(StreamRef consumer) {
  bool foreign = false;
  {
    std::lock_guard lock(mutex_);
    foreign = used_by_another_threads_default_stream();
  }
  // Their work is done after this wait; the per-thread handles below then name this thread's own stream.
  if (foreign) wait_for_other_threads_default_streams();
  std::vector<cudaStream_t> producers;
  {
    std::lock_guard lock(mutex_);
    producers = uses_;
  }
  // Device memory is ordered on its allocation stream (record_use leaves it out of uses_); host memory counts every
  // stream as a use, and its allocation stream names no producer.
  const bool device_memory = space_ == MemorySpace::device || space_ == MemorySpace::managed;
  if (device_memory) producers.insert(producers.begin(), alloc_stream_.native());
  std::optional<DeviceScope> scope;
  if (device_memory && device_.is_cuda() && !host_streams()) scope.emplace(device_);  // default handles are per device
  for (cudaStream_t producer : producers) consumer.wait(StreamRef(producer));         // skips the consumer itself
}

Storage::~Storage() {
  // The last reference: no other thread records a use any more, so the list is read without the lock.
  if (data_ != nullptr && used_by_another_threads_default_stream()) wait_for_other_threads_default_streams();
  if (release_) {
    // Memory owned elsewhere: its owner's release is a host call, so every recorded use must be done first.
    if (data_ != nullptr) ordering::note_free(data_, bytes_);
    if (!host_streams()) {
      const bool device_memory = space_ == MemorySpace::device || space_ == MemorySpace::managed;
      std::optional<NoexceptDeviceScope> scope;
      if (device_memory && device_.is_cuda()) scope.emplace(device_.index());
      if (device_memory) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(alloc_stream_.native()));
      for (cudaStream_t use : uses_) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(use));
    }
    release_();  // a DLPack deleter: a C function, which does not throw
    return;
  }
  if (data_ == nullptr) return;
  ordering::note_free(data_, bytes_);
  fault::released(fault_site(space_), bytes_);
  switch (space_) {
    case MemorySpace::device: {
      NoexceptDeviceScope scope(device_.index());
      for (cudaStream_t use : uses_) order_free_after(device_.index(), alloc_stream_.native(), use);
      release_to(*resource_, device_.index(), data_, bytes_, alloc_stream_.native());
      break;
    }
    case MemorySpace::host_pinned:
      // The cache hands the block out again at once, not stream-ordered: wait for every recorded use first.
      for (cudaStream_t use : uses_) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(use));
      pinned_cache().release(data_);
      break;
    case MemorySpace::host_pageable:
      // Host streams (no GPU) ran their work at the call: nothing to wait for.
      if (!host_streams())
        for (cudaStream_t use : uses_) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(use));
      ::operator delete (data_, std::align_val_t{host_alignment});
      break;
    case MemorySpace::managed:
      break;
  }
}

}  // namespace cuplan::detail
