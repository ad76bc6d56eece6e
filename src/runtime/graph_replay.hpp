#pragma once
// Replays a repeated launch sequence as one CUDA graph launch. A library call such as cublasLtMatmul spends several
// microseconds of host time per call even when nothing changed since the previous one; a captured graph of the same
// work launches in about a microsecond. An execute that repeats with the same key (every pointer and value the
// enqueued work depends on) is captured once, on a private stream, and replayed from then on; any other key runs
// the work directly. Replay changes nothing in stream order: the graph runs on the caller's stream where the direct
// launch would have.

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>

namespace cuplan::detail {

/// Every pointer and value that the captured work depends on; unused words stay zero.
using ReplayKey = std::array<std::uint64_t, 16>;

/// A fresh value for the part of a key that says "the plan changed" (descriptors, scalars, algorithm order).
std::uint64_t next_replay_generation() noexcept;

class GraphReplay {
 public:
  GraphReplay() = default;
  ~GraphReplay();
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;

  /// Enqueues the work on `stream` (a stream of `device`, which is current): replays the graph when `key` is the
  /// captured one; captures and replays when `key` came on the previous call too; otherwise calls
  /// `enqueue(stream)`. A stream that is itself being captured always gets the direct call. `Enqueue` is called as
  /// `void(cudaStream_t)` and reports errors by throwing.
  template <class Enqueue>
  void run(const ReplayKey& key, int device, cudaStream_t stream, const Enqueue& enqueue) {
    if (enabled_ && !capturing(stream)) {
      if (exec_ != nullptr && key == captured_key_) {
        launch(stream);
        return;
      }
      if (seen_ && key == last_key_ &&
          capture(
              device, [](const void* work, cudaStream_t s) { (*static_cast<const Enqueue*>(work))(s); }, &enqueue)) {
        captured_key_ = key;
        launch(stream);
        return;
      }
    }
    enqueue(stream);
    last_key_ = key;
    seen_ = true;
  }

  /// Turns replay off (every call enqueues directly) or back on.
  void set_enabled(bool enabled) noexcept { enabled_ = enabled; }
  /// Drops the captured graph, its private stream and the call history.
  void reset() noexcept;
  /// A graph is held (the next call with its key replays it).
  bool holds_graph() const noexcept { return exec_ != nullptr; }

 private:
  using Work = void (*)(const void*, cudaStream_t);
  /// Captures `work(context, s)` on the private stream and instantiates it; false (and replay off for good) when the
  /// work cannot be captured.
  bool capture(int device, Work work, const void* context);
  void launch(cudaStream_t stream);
  static bool capturing(cudaStream_t stream);

  cudaStream_t capture_stream_ = nullptr;
  int capture_device_ = -1;
  cudaGraphExec_t exec_ = nullptr;
  ReplayKey captured_key_{};
  ReplayKey last_key_{};
  bool seen_ = false;
  bool enabled_ = true;
};

}  // namespace cuplan::detail
