// SPDX-License-Identifier: Apache-2.0
#pragma once
// CUDA backend: one cuFFT plan (cufftXtMakePlanMany, 64-bit layout, auto-allocation off) over the planning
// layer's layout, with the workspace owned by the caller. Execution loops over the batch dimensions that did not
// become the plan's batch; everything it needs is computed at plan time. Free of cuFFT's header, so that the CPU-only
// build compiles the callers against cufft_no_device.cpp instead.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuplan/fft.hpp"
#include "fft/planner.hpp"

namespace cuplan::detail {

class CufftPlan {
 public:
  /// Plans on `device` (made current for the call). NotSupported for half precision with a length that is not a
  /// power of two.
  CufftPlan(const LayoutDecision& decision, int device);
  ~CufftPlan();
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;

  std::size_t workspace_size() const noexcept { return workspace_size_; }
  /// Makes `stream` wait for the setup work that planning left queued on the device (nothing once it is done). The
  /// plan phase calls it on its stream; later phases are ordered after that phase.
  void order_setup_before(cudaStream_t stream);
  /// Binds `stream` and `workspace` when they differ from the last ones (no library call otherwise).
  void bind(cudaStream_t stream, void* workspace);
  /// Enqueues the transform of `in` into `out` on the bound stream.
  void execute(Direction direction, const void* in, void* out);

 private:
  int handle_ = 0;  ///< the cufftHandle (an int: checked in cufft_backend.cpp)
  bool created_ = false;
  /// Recorded on the legacy default stream after planning, where cuFFT leaves setup work that the plan's
  /// transforms read; null once seen complete.
  cudaEvent_t planned_ = nullptr;
  std::size_t workspace_size_ = 0;
  FFTType type_;
  DType precision_;
  std::size_t in_element_ = 0, out_element_ = 0;
  std::vector<std::int64_t> in_offsets_, out_offsets_;
  cudaStream_t stream_ = nullptr;
  bool stream_set_ = false;
  void* workspace_ = nullptr;
  bool workspace_set_ = false;
};

/// Multiplies every element of the compute output by `scale` on `stream` (one kernel).
void scale_device(void* data, DType dtype, const OutputWalk& walk, double scale, cudaStream_t stream);

}  // namespace cuplan::detail
