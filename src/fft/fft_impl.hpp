// SPDX-License-Identifier: Apache-2.0
#pragma once
// The object behind the class form FFT and the function forms' cached plans: layout decision, backend plan,
// buffers and the stream contract (PhaseOrder) of one planned transform.

#include <memory>
#include <optional>
#include <string>

#include "base/nvtx.hpp"
#include "cuplan/fft.hpp"
#include "fft/callbacks/callback_set.hpp"
#include "fft/cufft/cufft_backend.hpp"
#include "fft/fft_staged.hpp"
#include "fft/fftw/fftw_backend.hpp"
#include "fft/planner.hpp"
#include "plan/cache/operand_signature.hpp"
#include "plan/cache/plan_cache.hpp"
#include "plan/graph_replay.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {

class FftImpl final : public CachedPlan {
 public:
  /// `out_hint`: a user output the plan should write into directly (its strides become the result layout).
  FftImpl(TensorRef operand, const FFTOptions& options, const std::optional<TensorView>& out_hint = {});
  ~FftImpl() override;

  void plan(std::optional<StreamRef> stream);
  /// Validates the call (direction, `out`) and runs it.
  Tensor execute(const FFTExecuteOptions& options);
  /// Runs a call already known to be valid: the object is planned and has an operand, `direction` fits the type
  /// and `out` (if any) has the planned result shape, dtype, strides, memory space and alignment (the function
  /// forms: the plan key holds all of them).
  Tensor execute_validated(Direction direction, const std::optional<StreamRef>& stream, const EventList& after,
                           const TensorView* out, bool release_workspace);
  void reset_operand(TensorRef operand, std::optional<StreamRef> stream);
  /// reset_operand without its own phase and without the layout check, for an operand whose dtype, shape, strides,
  /// memory space and alignment class equal the planned ones (a plan-cache hit): the next execute orders itself
  /// after the last phase.
  void adopt_operand(TensorRef&& operand);
  void release_operand();
  /// New user data pointers of the callbacks (an execute's override, or a function-form call's options on a plan
  /// cache hit); StateError for a callback the object was planned without.
  void set_callback_data(const std::optional<void*>& prolog, const std::optional<void*>& epilog, const char* method);
  void free() noexcept;

  const LayoutDecision& decision() const noexcept { return decision_; }
  const ExecutionTarget& target() const noexcept { return target_; }
  std::size_t workspace_size() const noexcept;
  std::string describe() const;
  /// The object as a LibraryError's context names it: operation, dtypes, shapes, axes, device and backend.
  std::string error_context() const;
  void require_alive(const char* method) const { state_.require_alive(method); }

 private:
  /// In-place R2C/C2R on an owning Tensor: its memory must hold the result's span (padded real rows).
  void check_inplace_room(const TensorRef& operand, const char* method) const;
  std::size_t required_alignment(DType dtype) const noexcept;
  Tensor execute_cuda(Direction direction, const std::optional<StreamRef>& stream, const EventList& after,
                      const TensorView* out, bool release_workspace);
  Tensor execute_cpu(Direction direction, const std::optional<StreamRef>& stream, const EventList& after,
                     const TensorView* out);
  /// The result Tensor in the operand's memory space: the user's out, the operand's memory in place (sharing its
  /// ownership), or a new Tensor in the planned result layout.
  Tensor make_result(const TensorView* out, StreamRef stream) const;
  double scale_for(Direction direction) const noexcept {
    return direction == Direction::forward ? forward_scale_ : inverse_scale_;
  }
  void record_operand_use(StreamRef stream);
  std::string callbacks_description() const;  // ", prolog 'f', epilog 'g'" or empty

  LayoutDecision decision_;
  ExecutionTarget target_;
  ObjectState state_{"FFT"};
  /// The phases with an NVTX range of their own, and the range's name for this object (cached: see NvtxNames).
  enum NvtxPhase { nvtx_plan, nvtx_execute, nvtx_reset, nvtx_release, nvtx_free, nvtx_phases };
  NvtxNames<nvtx_phases> nvtx_;
  const char* nvtx_name(NvtxPhase phase, const char* range) noexcept;
  PhaseOrder order_;
  PhaseStreams streams_;
  TensorRef operand_;
  OperandSignature operand_signature_;  // what reset_operand's operands must match
  Strides planned_strides_;             // the operand's strides at construction (the staged path's host layout)
  OperandSignature out_signature_;      // what an execute's `out` must match
  Device operand_device_;               // cpu() for host memory
  MemorySpace operand_space_ = MemorySpace::host_pageable;
  Direction default_direction_ = Direction::forward;
  bool inplace_ = false;
  double forward_scale_ = 1.0;
  double inverse_scale_ = 1.0;
  Normalization normalization_ = Normalization::none;
  EventList pending_after_;
  OutputWalk walk_;

  // CUDA execution.
  std::unique_ptr<CufftPlan> cufft_;
  GraphReplay replay_;  // repeated transforms replayed as one graph launch
  DeviceBuffer workspace_;
  DeviceBuffer in_stage_;
  DeviceBuffer out_stage_;
  void* workspace_ptr_ = nullptr;
  void* in_stage_ptr_ = nullptr;
  void* out_stage_ptr_ = nullptr;
  cudaStream_t buffers_stream_ = nullptr;  // last stream the buffers' use was recorded for
  bool buffers_ready_ = false;             // false after plan() or release_workspace: ensure them again
  // The last (operand memory, stream) use recorded: a repeated call with the same owner on the same stream records
  // nothing. The weak reference keeps the owner's control block, so a new owner can never compare equal to it.
  std::weak_ptr<Storage> recorded_owner_;
  RecordedStream recorded_stream_;
  void ensure_buffers(StreamRef stream);

  // CUDA execution of a host operand: the staging engine (planned by plan()).
  std::unique_ptr<StagedFft> staged_;
  Parity parity_ = Parity::even;
  std::size_t device_memory_limit_ = 0;
  Planning planning_ = Planning::estimate;

  // Prolog and epilog (null without either): checked at construction, compiled and linked by plan().
  std::unique_ptr<CallbackSet> callbacks_;

  // CPU execution.
  std::unique_ptr<FftwPlan> fftw_;
  Tensor host_in_stage_;
  Tensor host_out_stage_;
};

}  // namespace cuplan::detail
