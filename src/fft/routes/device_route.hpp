// SPDX-License-Identifier: Apache-2.0
#pragma once
// The device route of an FFT: CUDA execution of an operand in device memory, through one cuFFT plan (or none when
// every transformed axis has length 1) or cuplan's fused cuFFTDx kernel (fused_fft.hpp: FFTRoute and its rules),
// with the workspace and the staging copies the layout decision asks for. Repeated transforms replay as one graph
// launch on either route.

#include <memory>

#include "fft/cufft/cufft_backend.hpp"
#include "fft/routes/cufft_route.hpp"
#include "fft/routes/fused_fft.hpp"
#include "plan/graph_replay.hpp"
#include "plan/work_area.hpp"
#include "runtime/recorded_stream.hpp"

namespace cuplan::detail {

class DeviceFftRoute final : public CufftRoute {
 public:
  CUPLAN_ROUTE_CLASS_MEMBERS(DeviceFftRoute, FftRouteContext, FFTOptions, FftCall);

  CUPLAN_DEVICE_ROUTE_MEMBERS;
  std::size_t estimate_workspace_size() const override;
  std::size_t held_bytes() const noexcept override;
  void release_idle_memory() noexcept override;
  /// Chooses between cuFFT and the fused kernel (NotSupported for a forced fused route that cannot apply).
  void check_supported(const LayoutDecision& decision) const override;
  /// cuFFT's (complex alignment for real rows), or the element's alone on the fused route, whose loads and stores
  /// take misaligned real rows.
  std::size_t required_alignment(DType dtype) const noexcept override;
  std::size_t calls_per_execute() const noexcept override;
  std::string execution() const override;

 private:
  void ensure_buffers(StreamRef stream);
  void record_operand_use(const TensorRef& operand, StreamRef stream);

  Device operand_device_;
  std::unique_ptr<CufftPlan> cufft_;
  FFTOptions route_options_;          // the route asked for and the callbacks, for the fused route's rules
  int sm_ = 0;                        // compute capability of the execution's device
  mutable bool fused_route_ = false;  // decided by check_supported, once the layout is decided
  std::unique_ptr<FusedFftPlan> fused_;
  GraphReplay replay_;  // repeated transforms replayed as one graph launch
  WorkArea work_area_;  // owned, the stream's shared area, or the caller's (FFTOptions::work_area)
  DeviceBuffer in_stage_;
  DeviceBuffer out_stage_;
  void* in_stage_ptr_ = nullptr;
  void* out_stage_ptr_ = nullptr;
  cudaStream_t buffers_stream_ = nullptr;  // last stream the buffers' use was recorded for
  bool buffers_ready_ = false;             // false after plan() or release_workspace: ensure them again
  // The last (operand memory, stream) use recorded: a repeated call with the same owner on the same stream records
  // nothing. The weak reference keeps the owner's control block, so a new owner can never compare equal to it.
  std::weak_ptr<Storage> recorded_owner_;
  RecordedStream recorded_stream_;
};

}  // namespace cuplan::detail
