// SPDX-License-Identifier: Apache-2.0
// Work areas by policy (see work_area.hpp). The shared areas live in one registry keyed by device and stream; a
// phase holds its area's memory until its work is enqueued, so an area that grows meanwhile (another thread on the
// same stream) is freed stream-ordered after that work.

#include "plan/work_area.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "base/log.hpp"
#include "base/overlap.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "cuplan/memory.hpp"
#include "cuplan/names.hpp"
#include "plan/option_checks.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/memory_uses.hpp"
#include "runtime/storage.hpp"
#include "runtime/stream_retirement.hpp"

namespace cuplan::detail {
namespace {

class SharedWorkAreas {
 public:
  std::shared_ptr<Storage> acquire(std::size_t bytes, int device, StreamRef stream) {
    // The per-thread default stream's handle names another stream on each thread: each thread gets its own area.
    const std::thread::id thread =
        thread_relative_stream(stream.native()) ? std::this_thread::get_id() : std::thread::id{};
    std::lock_guard lock(mutex_);
    std::shared_ptr<Storage>& area = areas_[{device, stream.native(), thread}];
    if (!area || area->bytes() < bytes) {
      const std::size_t old_bytes = area ? area->bytes() : 0;
      // The old area goes first (stream-ordered after the work already enqueued with it, once no hold keeps it):
      // the stream then holds the larger area alone.
      area.reset();
      area = Storage::allocate(bytes, Device::cuda(device), MemorySpace::device, stream);
      account_memory(MemoryUse::shared_work_area, device, old_bytes == 0 ? 1 : 0,
                     static_cast<std::ptrdiff_t>(bytes) - static_cast<std::ptrdiff_t>(old_bytes));
      log(LogLevel::info, "work area: shared area of cuda:{} stream {} grown from {} to {} bytes", device,
          fmt::ptr(stream.native()), old_bytes, bytes);
    }
    return area;
  }

  /// The areas of one stream (on every thread), when its Stream object goes.
  void release_stream(cudaStream_t stream, int device) noexcept {
    release_where([&](const Key& key) { return std::get<0>(key) == device && std::get<1>(key) == stream; });
  }

  void release(int device) noexcept {
    release_where([&](const Key& key) { return std::get<0>(key) == device; });
  }

 private:
  using Key = std::tuple<int, cudaStream_t, std::thread::id>;

  template <class Selected>
  void release_where(const Selected& selected) noexcept {
    std::map<Key, std::shared_ptr<Storage>> doomed;  // freed outside the lock
    std::lock_guard lock(mutex_);
    for (auto it = areas_.begin(); it != areas_.end();) {
      if (selected(it->first)) {
        if (it->second)
          account_memory(MemoryUse::shared_work_area, std::get<0>(it->first), -1,
                         -static_cast<std::ptrdiff_t>(it->second->bytes()));
        doomed.insert(areas_.extract(it++));
      } else {
        ++it;
      }
    }
  }

  std::mutex mutex_;
  std::map<Key, std::shared_ptr<Storage>> areas_;
};

SharedWorkAreas& shared_areas() {
  // Never destroyed: its memory goes back to pools that must not be used after the CUDA runtime shut down.
  static auto* registry = [] {
    auto* made = new SharedWorkAreas();
    // A cuplan-made Stream's areas go with it (runtime/stream_retirement.hpp).
    set_stream_retired_hook(
        [](cudaStream_t stream, int device) noexcept { shared_areas().release_stream(stream, device); });
    return made;
  }();
  return *registry;
}

}  // namespace

WorkAreaSpec resolve_work_area(WorkAreaPolicy policy, const std::optional<TensorView>& buffer, const char* who) {
  check_enum_range(policy, WorkAreaPolicy::external, who, "work_area", "WorkAreaPolicy");
  WorkAreaSpec spec;
  if (policy == WorkAreaPolicy::automatic)
    spec.policy = WorkAreaPolicy::owned;
  else
    spec.policy = policy;
  if (spec.policy != WorkAreaPolicy::external) {
    if (buffer)
      throw InvalidArgument(
          fmt::format("{}: work_area_buffer: expected none with WorkAreaPolicy::{}, got a buffer "
                      "(set work_area = WorkAreaPolicy::external to use it)",
                      who, to_string(policy)));
    return spec;
  }
  if (!buffer || buffer->data() == nullptr)
    throw InvalidArgument(
        fmt::format("{}: work_area_buffer: expected a device buffer with WorkAreaPolicy::external, got {}", who,
                    buffer ? "an empty view" : "none"));
  const TensorView& b = *buffer;
  if (b.memory_space() != MemorySpace::device && b.memory_space() != MemorySpace::managed)
    throw InvalidArgument(fmt::format("{}: work_area_buffer: expected device or managed memory, got {} memory", who,
                                      to_string(b.memory_space())));
  if (!b.is_contiguous())
    throw InvalidArgument(fmt::format(
        "{}: work_area_buffer: expected a contiguous buffer (the library writes every byte of its span), got shape {} "
        "strides {}",
        who, b.shape(), b.strides()));
  const auto address = reinterpret_cast<std::uintptr_t>(b.data());
  if (address % work_area_alignment != 0)
    throw InvalidArgument(
        fmt::format("{}: work_area_buffer: expected an address aligned to {} bytes, got {:#x} "
                    "({} bytes past a {}-byte boundary)",
                    who, work_area_alignment, address, address % work_area_alignment, work_area_alignment));
  spec.buffer = b.data();
  spec.buffer_bytes = b.span_bytes();
  spec.buffer_device = b.device().index();
  spec.buffer_view = b;
  return spec;
}

void check_work_area_unused(const std::optional<TensorView>& buffer, const char* who, const char* where) {
  if (buffer)
    throw InvalidArgument(
        fmt::format("{}: work_area_buffer: expected none with {} (its device memory is staging of its own), got a "
                    "buffer of {} bytes",
                    who, where, buffer->span_bytes()));
}

void check_work_area_apart(WorkAreaPolicy policy, const std::optional<TensorView>& buffer, const TensorView& view,
                           const char* operand, const char* who) {
  if (policy != WorkAreaPolicy::external || !buffer || view.numel() == 0) return;
  if (views_overlap(*buffer, view))
    throw InvalidArgument(fmt::format(
        "{}: work_area_buffer: expected memory apart from {} (the library overwrites its work area mid-call), got "
        "bytes [{:#x}, {:#x}) overlapping {} at bytes [{:#x}, {:#x})",
        who, operand, byte_range(*buffer).begin, byte_range(*buffer).end, operand, byte_range(view).begin,
        byte_range(view).end));
}

WorkArea::~WorkArea() {
  release();
}

void WorkArea::check(std::size_t bytes, int device) const {
  if (spec_.policy != WorkAreaPolicy::external) return;
  if (spec_.buffer_device != device)
    throw InvalidArgument(
        fmt::format("{}: work_area_buffer: expected memory of cuda:{}, the device the work runs on, "
                    "got memory of cuda:{}",
                    who_, device, spec_.buffer_device));
  if (spec_.buffer_bytes < bytes)
    throw InvalidArgument(
        fmt::format("{}: work_area_buffer: expected at least {} bytes (the planned work area), got {} "
                    "bytes",
                    who_, bytes, spec_.buffer_bytes));
}

WorkAreaHold WorkArea::acquire(std::size_t bytes, int device, StreamRef stream) {
  WorkAreaHold hold;
  if (bytes == 0) return hold;
  switch (spec_.policy) {
    case WorkAreaPolicy::shared:
      hold.keep_ = shared_areas().acquire(bytes, device, stream);
      hold.data_ = hold.keep_->data();
      hold.bytes_ = hold.keep_->bytes();
      break;
    case WorkAreaPolicy::external:
      check(bytes, device);
      hold.data_ = spec_.buffer;
      hold.bytes_ = spec_.buffer_bytes;
      break;
    default: {
      const std::size_t before = owned_.size();
      hold.data_ = owned_.ensure(bytes, device, stream);
      hold.bytes_ = owned_.size();
      if (hold.bytes_ != before) {
        if (before != 0) count_owned(-1, -static_cast<std::ptrdiff_t>(before));
        owned_device_ = device;
        count_owned(1, static_cast<std::ptrdiff_t>(hold.bytes_));
      }
      break;
    }
  }
  // An owned area is the object's alone and its phases are ordered: the ordering checker sees the others.
  if (spec_.policy != WorkAreaPolicy::owned)
    hold.view_.emplace(hold.data_, i8, Shape{static_cast<std::int64_t>(hold.bytes_)}, Strides{1}, Device::cuda(device),
                       MemorySpace::device);
  return hold;
}

void WorkArea::release() noexcept {
  if (owned_.empty()) return;
  count_owned(-1, -static_cast<std::ptrdiff_t>(owned_.size()));
  owned_.release();
}

void WorkArea::count_owned(std::ptrdiff_t areas, std::ptrdiff_t bytes) noexcept {
  account_memory(MemoryUse::owned_work_area, owned_device_, areas, bytes);
}

}  // namespace cuplan::detail

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

void memory::release_work_areas(Device device) {
  if (!device.is_cuda())
    throw InvalidArgument(
        "memory::release_work_areas: device: expected a CUDA device, got cpu (work areas are "
        "device memory)");
  const int count = cuda_device_count();
  if (device.index() < 0 || device.index() >= count)
    throw InvalidArgument(fmt::format(
        "memory::release_work_areas: device: expected {}, got {}",
        count == 0 ? std::string("a CUDA device (none is present)") : fmt::format("cuda:0 to cuda:{}", count - 1),
        device));
  detail::shared_areas().release(device.index());
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
