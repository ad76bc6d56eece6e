// SPDX-License-Identifier: Apache-2.0
// The current stream: one slot per thread and device, set by StreamScope (nested, restored on exit) and by
// Stream::use() (persistent). current_stream() is on the hot path of every call given no stream, so it reads a
// thread-local slot and makes no CUDA call beyond cudaGetDevice when no device is named.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "base/cuda_check.hpp"
#include "base/non_copyable.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/stream.hpp"
#include "runtime/access.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/stream_handle.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

namespace {

struct Slot {
  // Stream::use() while no scope is open: meaningful when `set`.
  StreamRef current;
  bool set = false;
  // Keeps a cuplan-made current stream alive while it is current, so that a Stream destroyed while still in use()
  // never leaves a dangling handle behind (CuPy keeps a reference the same way).
  std::shared_ptr<detail::StreamHandle> current_owner;
  // The open scopes of this thread and device, innermost last. Each holds a share of its stream, so no entry can
  // dangle; a scope that ended (in any order, on any thread) is marked closed and dropped here.
  std::vector<std::shared_ptr<detail::ScopeEntry>> scopes;
  // The default stream of this device with its device recorded, built on first need.
  StreamRef fallback;
  bool fallback_ready = false;

  /// The innermost open scope, after dropping those that ended on another thread; null when none is open.
  detail::ScopeEntry* innermost() noexcept {
    while (!scopes.empty() && scopes.back()->closed.load(std::memory_order_acquire)) scopes.pop_back();
    return scopes.empty() ? nullptr : scopes.back().get();
  }
};

thread_local std::array<Slot, detail::max_devices> t_slots;
// Without a GPU: the one slot of the host streams (index -1 in StreamScope).
thread_local Slot t_host_slot;

Slot& slot_for(int device, const char* who) {
  if (device < 0 || device >= detail::max_devices) [[unlikely]] {
    throw NotSupported(
        fmt::format("{}: expected a CUDA device index in [0, {}), got {}", who, detail::max_devices, device));
  }
  return t_slots[static_cast<std::size_t>(device)];
}

// Synchronizes, at thread exit, the per-thread default streams of the devices this thread marked. C++ thread_local
// destructors run before the pthread key destructors, among which is the driver's per-thread cleanup.
class PerThreadStreamDrain : detail::NonCopyable {
 public:
  ~PerThreadStreamDrain() {
    if (devices_ == 0) return;
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) return;  // the runtime is gone (process exit): nothing is queued
    for (int device = 0; device < detail::max_devices; ++device) {
      if ((devices_ & (std::uint64_t{1} << device)) == 0) continue;
      // A failure here (a sticky error, a runtime shutting down) cannot be reported from a thread's exit.
      if (cudaSetDevice(device) == cudaSuccess) (void)cudaStreamSynchronize(cudaStreamPerThread);
    }
    (void)cudaSetDevice(previous);
  }
  void mark(int device) noexcept { devices_ |= std::uint64_t{1} << device; }

 private:
  std::uint64_t devices_ = 0;  // bit d: device d's per-thread default stream is drained at exit
};
static_assert(detail::max_devices <= 64, "one bit per device");

thread_local PerThreadStreamDrain t_drain;

StreamRef make_fallback(int device) {
  const Device d = Device::cuda(device);
  return detail::fallback_stream_handle() == cudaStreamPerThread ? Stream::per_thread_default(d).ref()
                                                                 : Stream::legacy_default(d).ref();
}

}  // namespace

}  // namespace CUPLAN_ABI_NAMESPACE

namespace detail {

cudaStream_t fallback_stream_handle() noexcept {
  static const bool per_thread = [] {
    const char* value = std::getenv("CUPLAN_PER_THREAD_DEFAULT_STREAM");
    return value != nullptr && std::strcmp(value, "1") == 0;
  }();
  return per_thread ? cudaStreamPerThread : cudaStreamLegacy;
}

void drain_per_thread_stream_at_exit(int device) noexcept {
  if (device >= 0 && device < max_devices) t_drain.mark(device);
}

Device device_to_enter(StreamRef stream) {
  if (cuda_device_count() > 1 && is_default_stream_handle(stream.native())) return stream.device();
  return Device::cpu();
}

void use_stream(StreamRef stream) {
  Slot& slot = host_streams() ? t_host_slot : slot_for(stream.device().index(), "Stream::use");
  auto keep = detail::Access::retain(stream);
  // Inside a scope, until the scope ends (which restores what was current before it); else until changed.
  if (ScopeEntry* scope = slot.innermost()) {
    scope->stream = stream;
    scope->owner = std::move(keep);
    return;
  }
  slot.current_owner = std::move(keep);
  slot.current = stream;
  slot.set = true;
}

}  // namespace detail

inline namespace CUPLAN_ABI_NAMESPACE {

StreamRef current_stream(std::optional<Device> device) {
  int index = 0;
  if (detail::host_streams() && (!device || device->is_cpu())) {
    // Without a GPU: the host stream in use, else the default handle, so host-only code runs unchanged.
    if (const detail::ScopeEntry* scope = t_host_slot.innermost()) return scope->stream;
    return t_host_slot.set ? t_host_slot.current : StreamRef(detail::fallback_stream_handle());
  }
  if (device) {
    if (device->is_cpu()) [[unlikely]] {
      throw InvalidArgument("current_stream: expected a CUDA device, got cpu");
    }
    index = device->index();
  } else {
    CUPLAN_CUDA_CHECK(cudaGetDevice(&index));
  }
  Slot& slot = slot_for(index, "current_stream");
  if (const detail::ScopeEntry* scope = slot.innermost()) return scope->stream;
  if (slot.set) return slot.current;
  if (!slot.fallback_ready) [[unlikely]] {
    if (!cuda_available()) return StreamRef(detail::fallback_stream_handle());
    slot.fallback = make_fallback(index);
    slot.fallback_ready = true;
  }
  return slot.fallback;
}

StreamScope::StreamScope(StreamRef stream) {
  const bool host = detail::host_streams();
  device_ = host ? -1 : stream.device().index();
  Slot& slot = host ? t_host_slot : slot_for(device_, "StreamScope");
  auto entry = std::make_shared<detail::ScopeEntry>();
  entry->stream = stream;
  entry->owner = detail::Access::retain(stream);
  entry->thread = std::this_thread::get_id();
  slot.scopes.push_back(entry);  // the only step that can throw: nothing changed before it
  entry_ = std::move(entry);
}

StreamScope::~StreamScope() {
  // Robust to any order: the current stream is always the innermost scope still open (or what was current before
  // the first one). A scope ended on another thread cannot touch its thread's slot: it is marked closed, and its
  // thread drops it at its next look-up; until then its entry keeps the stream alive, so nothing dangles.
  entry_->closed.store(true, std::memory_order_release);
  if (entry_->thread != std::this_thread::get_id()) return;
  Slot& slot = device_ < 0 ? t_host_slot : t_slots[static_cast<std::size_t>(device_)];
  const auto it = std::find(slot.scopes.begin(), slot.scopes.end(), entry_);
  if (it != slot.scopes.end()) slot.scopes.erase(it);
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
