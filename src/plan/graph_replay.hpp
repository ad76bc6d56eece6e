// SPDX-License-Identifier: Apache-2.0
#pragma once
// Replays a repeated launch sequence as one CUDA graph launch. A library call such as cublasLtMatmul spends several
// microseconds of host time per call even when nothing changed since the previous one; a captured graph of the same
// work launches in about a microsecond. A call whose key (every pointer and value the enqueued work depends on)
// came recently is captured once, on a private stream, and replayed from then on; a new key runs the work
// directly. Replay changes nothing in stream order: the graph runs on the caller's stream where the direct
// launch would have.

#include <cuda_runtime_api.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace cuplan::detail {

/// Every pointer and value that the captured work depends on, added one by one (like PlanKey). What the plan
/// itself fixes (descriptors, scalars, algorithm order) is not in the key: a change there calls
/// GraphReplay::invalidate, the one invalidation rule of every operation.
class ReplayKey {
 public:
  static constexpr std::size_t capacity = 16;
  ReplayKey& add(const void* pointer) {
    return add_word(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(pointer)));
  }
  ReplayKey& add(double value) { return add_word(std::bit_cast<std::uint64_t>(value)); }
  template <class T>
  requires std::is_integral_v<T> || std::is_enum_v<T> ReplayKey& add(T value) {
    return add_word(static_cast<std::uint64_t>(value));
  }
  friend bool operator==(const ReplayKey&, const ReplayKey&) noexcept = default;

 private:
  ReplayKey& add_word(std::uint64_t word) {
    if (size_ == capacity) [[unlikely]]
      overflow();
    words_[size_++] = word;
    return *this;
  }
  [[noreturn]] static void overflow();  // InvalidArgument: a key builder adds more than `capacity` words
  std::array<std::uint64_t, capacity> words_{};
  std::size_t size_ = 0;
};

class GraphReplay {
 public:
  /// Graphs kept per object (least recently used dropped first), and recent keys remembered for the "came before"
  /// test: enough for ping-pong buffers and small rotations, bounded for everything else.
  static constexpr int max_graphs = 4;
  static constexpr int history = 8;

  GraphReplay() = default;
  ~GraphReplay();
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;

  /// Enqueues the work on `stream` (a stream of `device`, which is current): replays a graph captured for `key`;
  /// captures one and replays it when `key` came among the last `history` calls (and the capture budget allows);
  /// otherwise calls `enqueue(stream)`. A stream that is itself being captured always gets the direct call.
  /// `Enqueue` is called as `void(cudaStream_t)` and reports errors by throwing.
  template <class Enqueue>
  void run(const ReplayKey& key, int device, cudaStream_t stream, const Enqueue& enqueue) {
    if (enabled_ && !capturing(stream)) {
      if (Entry* entry = find(key)) {
        replay(*entry, stream);
        return;
      }
      if (seen_recently(key) && capture_allowed()) {
        Entry* entry = capture(
            key, device, [](const void* work, cudaStream_t s) { (*static_cast<const Enqueue*>(work))(s); }, &enqueue);
        if (entry != nullptr) {
          replay(*entry, stream);
          return;
        }
      }
    }
    enqueue(stream);
    remember(key);
  }

  /// The plan behind the work changed (new library plan, scalars, algorithm order): the same key would now enqueue
  /// other work, so the graphs and the call history are dropped. The capture budget is kept.
  void invalidate() noexcept;
  /// Turns replay off (every call enqueues directly) or back on.
  void set_enabled(bool enabled) noexcept { enabled_ = enabled; }
  /// Drops the captured graphs and the call history.
  void reset() noexcept;
  /// Number of graphs held (calls with their keys replay them).
  int graph_count() const noexcept;
  bool holds_graph() const noexcept { return graph_count() > 0; }

 private:
  struct Entry {
    ReplayKey key{};
    cudaGraphExec_t exec = nullptr;
    std::uint64_t last_use = 0;
  };
  using Work = void (*)(const void*, cudaStream_t);

  Entry* find(const ReplayKey& key) noexcept;
  bool seen_recently(const ReplayKey& key) const noexcept;
  void remember(const ReplayKey& key) noexcept;
  /// Keys that keep evicting each other would capture on every call: captures beyond a few are allowed only as
  /// replays pay for them.
  bool capture_allowed() const noexcept { return captures_ < 8 + replays_ / 16; }
  /// Captures `work(context, s)` on this thread's capture stream of `device` into a free or least recently used
  /// slot; null (and replay off for good) when the work cannot be captured.
  Entry* capture(const ReplayKey& key, int device, Work work, const void* context);
  void replay(Entry& entry, cudaStream_t stream);
  static bool capturing(cudaStream_t stream);

  std::array<Entry, max_graphs> graphs_{};
  std::array<ReplayKey, history> recent_{};
  int recent_count_ = 0, recent_next_ = 0;
  std::uint64_t clock_ = 0, captures_ = 0, replays_ = 0;
  bool enabled_ = true;
};

}  // namespace cuplan::detail
