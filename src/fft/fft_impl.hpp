#pragma once
// The object behind the class form FFT and the function forms' cached plans: layout decision, backend plan,
// buffers and the stream contract (PhaseOrder) of one planned transform.

#include <memory>
#include <optional>
#include <string>

#include "cuplan/fft.hpp"
#include "fft/cufft_backend.hpp"
#include "fft/fftw_backend.hpp"
#include "fft/layout.hpp"
#include "runtime/plan_cache.hpp"
#include "runtime/stateful.hpp"

namespace cuplan::detail {

class FftImpl final : public CachedPlan {
 public:
  /// `out_hint`: a user output the plan should write into directly (its strides become the result layout).
  FftImpl(TensorRef operand, const FFTOptions& options, const std::optional<TensorView>& out_hint = {});
  ~FftImpl() override;

  void plan(std::optional<StreamRef> stream);
  Tensor execute(const ExecuteOptions& options);
  void reset_operand(TensorRef operand, std::optional<StreamRef> stream);
  /// reset_operand without its own phase: the next execute orders itself after the last phase (function forms).
  void swap_operand(TensorRef operand);
  void release_operand();
  void free() noexcept;

  const LayoutDecision& decision() const noexcept { return decision_; }
  const ExecutionTarget& target() const noexcept { return target_; }
  std::size_t workspace_size() const noexcept;
  std::string describe() const;
  void require_alive(const char* method) const { state_.require_alive(method); }

 private:
  void check_same_layout(const TensorView& view, const char* method) const;
  void check_out(const TensorView& out) const;
  std::size_t required_alignment(DType dtype) const noexcept;
  Tensor execute_cuda(const ExecuteOptions& options, Direction direction);
  Tensor execute_cpu(const ExecuteOptions& options, Direction direction);
  /// The result Tensor in the operand's memory space (a new one, the user's out, or the operand in place).
  Tensor make_result(const ExecuteOptions& options, StreamRef stream) const;
  double scale_for(Direction direction) const noexcept {
    return direction == Direction::forward ? forward_scale_ : inverse_scale_;
  }
  void record_operand_use(StreamRef stream);

  LayoutDecision decision_;
  ExecutionTarget target_;
  ObjectState state_{"FFT"};
  PhaseOrder order_;
  TensorRef operand_;
  Strides planned_strides_;  // operand strides the plan was made for
  Device operand_device_;    // cpu() for host memory
  MemorySpace operand_space_ = MemorySpace::host_pageable;
  Direction default_direction_ = Direction::forward;
  bool inplace_ = false;
  double forward_scale_ = 1.0;
  double inverse_scale_ = 1.0;
  Normalization normalization_ = Normalization::none;
  std::optional<StreamRef> construct_stream_;
  EventList pending_after_;
  OutputWalk walk_;

  // CUDA execution.
  std::unique_ptr<CufftPlan> cufft_;
  DeviceBuffer workspace_;
  DeviceBuffer in_stage_;
  DeviceBuffer out_stage_;
  void* workspace_ptr_ = nullptr;
  void* in_stage_ptr_ = nullptr;
  void* out_stage_ptr_ = nullptr;
  cudaStream_t buffers_stream_ = nullptr;  // last stream the buffers' use was recorded for
  bool buffers_ready_ = false;             // false after plan() or release_workspace: ensure them again
  cudaStream_t operand_stream_ = nullptr;  // last stream the operand's use was recorded for
  bool operand_recorded_ = false;
  cudaStream_t checked_stream_ = nullptr;  // last stream checked against the device
  bool stream_checked_ = false;
  void ensure_buffers(StreamRef stream);

  // CPU execution.
  std::unique_ptr<FftwPlan> fftw_;
  Tensor host_in_stage_;
  Tensor host_out_stage_;
};

}  // namespace cuplan::detail
