// Graph replay of repeated launch sequences (see graph_replay.hpp).

#include "runtime/graph_replay.hpp"

#include <atomic>
#include <exception>
#include <string>

#include "core/check.hpp"
#include "core/log.hpp"

namespace cuplan::detail {

std::uint64_t next_replay_generation() noexcept {
  static std::atomic<std::uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

GraphReplay::~GraphReplay() {
  reset();
}

void GraphReplay::reset() noexcept {
  // An in-flight launch completes; CUDA frees the executable graph and the stream afterwards.
  if (exec_ != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(exec_));
  if (capture_stream_ != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(capture_stream_));
  exec_ = nullptr;
  capture_stream_ = nullptr;
  seen_ = false;
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

void GraphReplay::launch(cudaStream_t stream) {
  CUPLAN_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

bool GraphReplay::capture(int device, Work work, const void* context) {
  if (exec_ != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(exec_));
  exec_ = nullptr;
  std::string failure;
  if (capture_stream_ != nullptr && capture_device_ != device) {
    CUPLAN_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(capture_stream_));
    capture_stream_ = nullptr;
  }
  cudaError_t status = cudaSuccess;
  if (capture_stream_ == nullptr) {
    status = cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking);
    capture_device_ = device;
  }
  // Thread-local mode: other threads' CUDA calls are not restricted while this one captures.
  if (status == cudaSuccess) status = cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeThreadLocal);
  if (status != cudaSuccess) {
    failure = cudaGetErrorString(status);
  } else {
    // The capture must end whatever the work does, or the private stream stays in capture mode.
    try {
      work(context, capture_stream_);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(capture_stream_, &graph);
    if (failure.empty() && end != cudaSuccess) failure = cudaGetErrorString(end);
    if (failure.empty() && graph != nullptr) {
      const cudaError_t made = cudaGraphInstantiate(&exec_, graph, 0);
      if (made != cudaSuccess) {
        failure = cudaGetErrorString(made);
        exec_ = nullptr;
      }
    }
    if (graph != nullptr) CUPLAN_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph));
  }
  if (exec_ != nullptr) return true;
  // Work that cannot be captured runs directly from now on; the error of the failed capture is not the caller's.
  (void)cudaGetLastError();
  enabled_ = false;
  log(LogLevel::info, "graph replay turned off for this object: capture failed ({})",
      failure.empty() ? "empty graph" : failure);
  return false;
}

}  // namespace cuplan::detail
