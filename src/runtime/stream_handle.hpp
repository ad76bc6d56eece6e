// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared owner of a cuplan-made stream: the Stream object and every Storage that used the stream hold it, so the
// stream is destroyed only after the last stream-ordered free that names it has been enqueued.

#include <cuda_runtime_api.h>

#include <memory>

namespace cuplan::detail {

class StreamHandle : public std::enable_shared_from_this<StreamHandle> {
 public:
  StreamHandle(cudaStream_t stream, int device) noexcept : stream_(stream), device_(device) {}
  /// A host stream (no GPU): its handle is this object's address, a unique token never given to CUDA.
  struct Host {};
  explicit StreamHandle(Host) noexcept : stream_(reinterpret_cast<cudaStream_t>(this)), device_(-1), host_(true) {}
  ~StreamHandle();  // cudaStreamDestroy (failure logged, never thrown); nothing for a host stream
  StreamHandle(const StreamHandle&) = delete;
  StreamHandle& operator=(const StreamHandle&) = delete;
  cudaStream_t native() const noexcept { return stream_; }
  int device() const noexcept { return device_; }

 private:
  cudaStream_t stream_;
  int device_;
  bool host_ = false;
};

}  // namespace cuplan::detail
