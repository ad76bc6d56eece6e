// SPDX-License-Identifier: Apache-2.0
// The ordering checker (see ordering_checker.hpp and docs/streams.md).

#include "plan/ordering/ordering_checker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "base/cuda_check.hpp"
#include "base/log.hpp"
#include "base/overlap.hpp"
#include "cuplan/checking.hpp"
#include "cuplan/errors.hpp"
#include "runtime/current_stream.hpp"

namespace cuplan::detail {

namespace {

// Pruning walks every range and queries its marks: do it rarely, and only once the table has grown.
constexpr std::uint64_t kPruneEvery = 256;
constexpr std::size_t kPruneAbove = 512;

bool overlaps(std::uintptr_t a_begin, std::uintptr_t a_end, std::uintptr_t b_begin, std::uintptr_t b_end) {
  return a_begin < b_end && b_begin < a_end;
}

[[noreturn]] void throw_unordered(const OrderingTracker::Range& range, OrderingTracker::Key other,
                                  OrderingTracker::Key stream, bool was_write, const char* who, const char* method) {
  const std::string call = *method != '\0' ? fmt::format("{}.{}", who, method) : std::string(who);
  throw OrderingError(fmt::format(
      "{}: {} (bytes [{:#x}, {:#x})) was last {} by cuplan work on stream {} that is still pending, and this call "
      "runs on stream {} with no recorded edge after it; record an event on stream {} after that work and pass it "
      "as `.after = {{event}}`, or call stream.wait(event) on stream {} first (cuplan::assume_ordered declares an "
      "edge made outside cuplan)",
      call, range.name, range.begin, range.end, was_write ? "written" : "read", fmt::ptr(other), fmt::ptr(stream),
      fmt::ptr(other), fmt::ptr(stream)));
}

}  // namespace

bool OrderingTracker::ordered(Key stream, const Use& use) const {
  if (use.stream == stream) return true;
  const auto state = streams_.find(stream);
  if (state != streams_.end()) {
    const auto seen = state->second.seen.find(use.stream);
    if (seen != state->second.seen.end() && seen->second >= use.sequence) return true;
  }
  return !use.mark->pending();  // completed work needs no edge
}

void OrderingTracker::see(Key stream, Key other, std::uint64_t sequence) {
  if (other == stream) return;
  std::uint64_t& seen = streams_[stream].seen[other];
  seen = std::max(seen, sequence);
}

void OrderingTracker::check(Key stream, std::span<const Range> ranges, const char* who, const char* method) const {
  std::lock_guard lock(mutex_);
  for (const Range& range : ranges) {
    if (!range.check) continue;
    for (const Entry& entry : entries_) {
      if (!overlaps(entry.begin, entry.end, range.begin, range.end)) continue;
      if (entry.written && !ordered(stream, entry.writer))
        throw_unordered(range, entry.writer.stream, stream, true, who, method);
      if (!range.write) continue;  // read after read needs no order
      for (const Use& reader : entry.readers)
        if (!ordered(stream, reader)) throw_unordered(range, reader.stream, stream, false, who, method);
    }
  }
}

void OrderingTracker::record(Key stream, std::span<const Range> ranges, const std::shared_ptr<CompletionMark>& mark) {
  std::lock_guard lock(mutex_);
  const Use use{stream, ++streams_[stream].sequence, mark};
  for (const Range& range : ranges) {
    if (range.write) {
      // The write was ordered after everything it overlapped (checked), so the ranges it covers add nothing.
      std::erase_if(entries_, [&](const Entry& e) { return e.begin >= range.begin && e.end <= range.end; });
      entries_.push_back(Entry{range.begin, range.end, true, use, {}});
      continue;
    }
    auto entry = std::find_if(entries_.begin(), entries_.end(),
                              [&](const Entry& e) { return e.begin == range.begin && e.end == range.end; });
    if (entry == entries_.end()) entry = entries_.insert(entries_.end(), Entry{range.begin, range.end, false, {}, {}});
    auto reader =
        std::find_if(entry->readers.begin(), entry->readers.end(), [&](const Use& r) { return r.stream == stream; });
    if (reader == entry->readers.end())
      entry->readers.push_back(use);
    else
      *reader = use;
  }
  if (++records_ % kPruneEvery == 0 && entries_.size() > kPruneAbove) prune();
}

void OrderingTracker::prune() {
  // Completed work can never make a later call unordered.
  std::erase_if(entries_, [](Entry& e) {
    std::erase_if(e.readers, [](const Use& r) { return !r.mark->pending(); });
    if (e.written && !e.writer.mark->pending()) e.written = false;
    return !e.written && e.readers.empty();
  });
}

void OrderingTracker::recorded(Key event, Key stream) {
  std::lock_guard lock(mutex_);
  StreamState& state = streams_[stream];
  events_[event] = Snapshot{stream, state.sequence, state.seen};
}

void OrderingTracker::waited(Key stream, Key event) {
  std::lock_guard lock(mutex_);
  const auto snapshot = events_.find(event);
  if (snapshot == events_.end()) return;   // recorded outside cuplan: assume_ordered declares such edges
  const Snapshot copy = snapshot->second;  // `see` may rehash streams_, never events_; copy for clarity
  see(stream, copy.stream, copy.sequence);
  for (const auto& [other, sequence] : copy.seen) see(stream, other, sequence);
}

void OrderingTracker::assume_ordered(std::uintptr_t begin, std::uintptr_t end, Key stream) {
  std::lock_guard lock(mutex_);
  for (const Entry& entry : entries_) {
    if (!overlaps(entry.begin, entry.end, begin, end)) continue;
    if (entry.written) see(stream, entry.writer.stream, entry.writer.sequence);
    for (const Use& reader : entry.readers) see(stream, reader.stream, reader.sequence);
  }
}

void OrderingTracker::forget(std::uintptr_t begin, std::uintptr_t end) {
  std::lock_guard lock(mutex_);
  std::erase_if(entries_, [&](const Entry& e) { return overlaps(e.begin, e.end, begin, end); });
}

void OrderingTracker::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
  streams_.clear();
  events_.clear();
}

std::size_t OrderingTracker::ranges_tracked() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

namespace {

// A CUDA event recorded after a call's work: pending while cudaEventQuery says not ready.
class EventMark final : public CompletionMark {
 public:
  EventMark(cudaStream_t stream, int device) {
    DeviceScope scope(Device::cuda(device));
    CUPLAN_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    const cudaError_t status = cudaEventRecord(event_, stream);
    if (status != cudaSuccess) {
      CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
      CUPLAN_CUDA_CHECK(status);
    }
  }
  ~EventMark() override { CUPLAN_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_)); }
  EventMark(const EventMark&) = delete;
  EventMark& operator=(const EventMark&) = delete;
  bool pending() const override {
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) return true;
    CUPLAN_CUDA_CHECK(status);
    return false;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

OrderingTracker& global_tracker() {
  static OrderingTracker* tracker = new OrderingTracker;  // leaked on purpose: frees may run at process exit
  return *tracker;
}

void on_recorded(cudaEvent_t event, cudaStream_t stream) {
  global_tracker().recorded(event, stream);
}
void on_waited(cudaStream_t stream, cudaEvent_t event) {
  global_tracker().waited(stream, event);
}
void on_freed(const void* data, std::size_t bytes) {
  try {
    const auto begin = reinterpret_cast<std::uintptr_t>(data);
    global_tracker().forget(begin, begin + bytes);
  } catch (const std::exception& e) {
    log(LogLevel::warning, "ordering checker: forgetting freed memory failed: {}", e.what());
  }
}

constexpr ordering::Hooks kHooks{on_recorded, on_waited, on_freed};
// Installed at load, before any call can record an event the checker must know.
const bool g_installed = [] {
  ordering::g_hooks.store(&kHooks, std::memory_order_release);
  return true;
}();

// Depth of checked calls on this thread: the internal copies of an execute are not calls of their own.
thread_local int t_depth = 0;

OrderingTracker::Range range_of(const OperandUse& use) {
  const ByteRange bytes = byte_range(*use.view);
  return {bytes.begin, bytes.end, use.name, use.write, !use.fresh};
}

}  // namespace

OrderingTracker& ordering_tracker() {
  (void)g_installed;
  return global_tracker();
}

CheckedUses::~CheckedUses() {
  deactivate();
}

void CheckedUses::deactivate() noexcept {
  if (!active_) return;
  active_ = false;
  --t_depth;
}

void CheckedUses::begin_checked(StreamRef stream, const char* who, const char* method,
                                std::span<const OperandUse> uses) {
  if (active_ || t_depth > 0 || host_streams()) return;
  ranges_.clear();
  for (const OperandUse& use : uses)
    if (use.view != nullptr && use.view->numel() > 0 && use.view->data() != nullptr) ranges_.push_back(range_of(use));
  if (ranges_.empty()) return;
  ordering_tracker().check(stream.native(), ranges_, who, method);
  stream_ = stream.native();
  device_ = stream.device().index();
  active_ = true;
  ++t_depth;
}

void CheckedUses::end_checked() {
  // Leave the nesting first: an error while recording must not leave this thread's calls unchecked.
  deactivate();
  ordering_tracker().record(stream_, ranges_, std::make_shared<EventMark>(stream_, device_));
}

}  // namespace cuplan::detail

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

void set_checking(bool on) {
  (void)detail::ordering_tracker();  // hooks installed
  if (!on) detail::ordering_tracker().clear();
  detail::ordering::g_on.store(on, std::memory_order_relaxed);
}

bool checking() noexcept {
  return detail::ordering::on();
}

void assume_ordered(const TensorView& view, StreamRef stream) {
  if (!detail::ordering::on() || view.numel() == 0 || view.data() == nullptr) return;
  const auto range = detail::range_of(detail::OperandUse{"view", &view, false});
  detail::ordering_tracker().assume_ordered(range.begin, range.end, stream.native());
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
