// SPDX-License-Identifier: Apache-2.0
// Graph replay of repeated launch sequences (see graph_replay.hpp).

#include "plan/graph_replay.hpp"

#include <fmt/format.h>

#include <exception>
#include <string>
#include <vector>

#include "base/cuda_check.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {

void ReplayKey::overflow() {
  throw InvalidArgument(fmt::format("graph replay key: expected at most {} words, got more", capacity));
}

namespace {

/// The streams captures run on: one per device for each thread, made on first use. A capture in thread-local mode
/// on a stream no other thread uses cannot interfere with anyone's work, and nothing runs on these streams.
class CaptureStreams {
 public:
  ~CaptureStreams() {
    // At thread or process exit; the runtime may already be unloading, and then there is nothing left to free.
    for (cudaStream_t s : streams_)
      if (s != nullptr) (void)cudaStreamDestroy(s);
  }
  cudaError_t get(int device, cudaStream_t& stream) {
    if (device < 0) return cudaErrorInvalidDevice;
    if (static_cast<std::size_t>(device) >= streams_.size()) streams_.resize(static_cast<std::size_t>(device) + 1);
    cudaStream_t& s = streams_[static_cast<std::size_t>(device)];
    if (s == nullptr) {
      const cudaError_t status = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      if (status != cudaSuccess) {
        s = nullptr;
        return status;
      }
    }
    stream = s;
    return cudaSuccess;
  }

 private:
  std::vector<cudaStream_t> streams_;
};

}  // namespace

GraphReplay::~GraphReplay() {
  reset();
}

void GraphReplay::invalidate() noexcept {
  // An in-flight launch completes; CUDA frees the executable graph afterwards.
  for (Entry& entry : graphs_) {
    if (entry.exec != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(entry.exec));
    entry = Entry{};
  }
  recent_count_ = recent_next_ = 0;
}

void GraphReplay::reset() noexcept {
  invalidate();
  captures_ = replays_ = 0;
}

int GraphReplay::graph_count() const noexcept {
  int count = 0;
  for (const Entry& entry : graphs_) count += entry.exec != nullptr ? 1 : 0;
  return count;
}

GraphReplay::Entry* GraphReplay::find(const ReplayKey& key) noexcept {
  for (Entry& entry : graphs_)
    if (entry.exec != nullptr && entry.key == key) return &entry;
  return nullptr;
}

bool GraphReplay::seen_recently(const ReplayKey& key) const noexcept {
  for (int i = 0; i < recent_count_; ++i)
    if (recent_[static_cast<std::size_t>(i)] == key) return true;
  return false;
}

void GraphReplay::remember(const ReplayKey& key) noexcept {
  if (seen_recently(key)) return;
  recent_[static_cast<std::size_t>(recent_next_)] = key;
  recent_next_ = (recent_next_ + 1) % history;
  recent_count_ = recent_count_ < history ? recent_count_ + 1 : history;
}

bool GraphReplay::capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    // The legacy default stream while another stream captures in global mode: the direct call reports it.
    (void)cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

void GraphReplay::replay(Entry& entry, cudaStream_t stream) {
  entry.last_use = ++clock_;
  ++replays_;
  CUPLAN_CUDA_CHECK(cudaGraphLaunch(entry.exec, stream));
}

GraphReplay::Entry* GraphReplay::capture(const ReplayKey& key, int device, Work work, const void* context) {
  ++captures_;
  std::string failure;
  static thread_local CaptureStreams streams;
  cudaStream_t capture_stream = nullptr;
  cudaError_t status = streams.get(device, capture_stream);
  // Thread-local mode: other threads' CUDA calls are not restricted while this one captures.
  if (status == cudaSuccess) status = cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeThreadLocal);
  cudaGraphExec_t exec = nullptr;
  if (status != cudaSuccess) {
    failure = cudaGetErrorString(status);
  } else {
    // The capture must end whatever the work does, or the private stream stays in capture mode.
    try {
      work(context, capture_stream);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(capture_stream, &graph);
    if (failure.empty() && end != cudaSuccess) failure = cudaGetErrorString(end);
    if (failure.empty() && graph != nullptr) {
      const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
      if (made != cudaSuccess) {
        failure = cudaGetErrorString(made);
        exec = nullptr;
      }
    }
    if (graph != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph));
  }
  if (exec == nullptr) {
    // Work that cannot be captured runs directly from now on; the error of the failed capture is not the caller's.
    (void)cudaGetLastError();
    enabled_ = false;
    log(LogLevel::info, "graph replay turned off for this object: capture failed ({})",
        failure.empty() ? "empty graph" : failure);
    return nullptr;
  }
  Entry* slot = &graphs_[0];
  for (Entry& entry : graphs_) {
    if (entry.exec == nullptr) {
      slot = &entry;
      break;
    }
    if (entry.last_use < slot->last_use) slot = &entry;
  }
  if (slot->exec != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(slot->exec));
  slot->key = key;
  slot->exec = exec;
  log(LogLevel::debug, "graph replay: captured the work of a repeated call as a CUDA graph ({} captures so far)",
      captures_);
  return slot;
}

}  // namespace cuplan::detail
