// SPDX-License-Identifier: Apache-2.0
// FftImpl::execute: the per-call path. Everything that can be is decided at plan time; on the CUDA path with
// device operands this allocates only the result Tensor and formats nothing.

#include "base/cuda_check.hpp"
#include "base/error_context.hpp"
#include "base/nvtx.hpp"
#include "base/overlap.hpp"
#include "cuplan/errors.hpp"
#include "fft/fft_impl.hpp"
#include "fft/fft_validate.hpp"
#include "runtime/access.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/pinned_cache.hpp"

namespace cuplan::detail {
namespace {

bool is_host(MemorySpace space) {
  return space == MemorySpace::host_pageable || space == MemorySpace::host_pinned;
}

}  // namespace

Tensor FftImpl::execute(const FFTExecuteOptions& options) {
  state_.require_planned("execute");  // planned and operand both check alive first
  state_.require_operand("execute");
  if (options.direction) check_direction(*options.direction, "FFT.execute");
  const Direction direction = options.direction.value_or(default_direction_);
  if (decision_.type == FFTType::r2c && direction != Direction::forward)
    throw InvalidArgument("FFT.execute: direction: an R2C transform runs forward only, got Direction::inverse");
  if (decision_.type == FFTType::c2r && direction != Direction::inverse)
    throw InvalidArgument("FFT.execute: direction: a C2R transform runs inverse only, got Direction::forward");
  const TensorView* out = options.out ? &*options.out : nullptr;
  if (out != nullptr) {
    if (inplace_) throw InvalidArgument("FFT.execute: out: an output cannot be given for an in-place transform");
    check_writable(*out, "out", "FFT.execute");
    // An out in the planned layout cannot overlap itself (that layout was checked when planned): the repeated call
    // pays one comparison; any other out gets the overlap error first, else the mismatch.
    if (!out_signature_.matches(*out)) [[unlikely]] {
      check_no_self_overlap(*out, "out", "FFT");
      out_signature_.require_match(*out, "FFT", "execute", "out");
    }
  }
  set_callback_data(options.prolog_data, options.epilog_data, "FFT.execute");
  return execute_validated(direction, options.stream, options.after, out, options.release_workspace);
}

Tensor FftImpl::execute_validated(Direction direction, const std::optional<StreamRef>& stream, const EventList& after,
                                  const TensorView* out, bool release_workspace) try {
  NvtxRange range(nvtx_name(nvtx_execute, "cuplan::FFT::execute"));
  // Not part of any plan key: where out lies relative to this call's operand (out of place only; the constructor
  // rejects out with inplace).
  if (out != nullptr) check_no_overlap(*out, "out", operand_.view(), "operand", "FFT");
  return target_.cuda ? execute_cuda(direction, stream, after, out, release_workspace)
                      : execute_cpu(direction, stream, after, out);
} catch (const LibraryError& error) {
  rethrow_with_context(error, "FFT.execute", [this] { return error_context(); });
}

Tensor FftImpl::make_result(const TensorView* out, StreamRef stream) const {
  if (out != nullptr) return Tensor::wrap(*out);
  const bool host = is_host(operand_space_);
  if (inplace_) {
    if (decision_.type == FFTType::c2c) return operand_.as_tensor();  // the result is the operand
    // R2C/C2R in place: the operand's memory seen with the result's dtype, shape and strides, sharing its owner
    // (if any) so that the result keeps that memory alive after the operand is dropped. The memory space is the
    // operand's own: a plan serves pageable and pinned host memory alike.
    const TensorView& x = operand_.view();
    return Tensor::alias(operand_, TensorView(x.data(), decision_.out_dtype, decision_.out_shape, decision_.out_strides,
                                              x.device(), x.memory_space()));
  }
  // CUDA execution of a host operand: a large new result is pinned, so the staging engine DMAs into it in place
  // instead of faulting in fresh pageable pages and copying into them (docs/staging.md).
  if (host && target_.cuda) return empty_host_result(decision_.out_shape, decision_.out_strides, decision_.out_dtype);
  const Device device = host ? Device::cpu() : operand_device_;
  const std::optional<StreamRef> alloc_stream = host ? std::nullopt : std::optional<StreamRef>(stream);
  return Tensor::empty_strided(decision_.out_shape, decision_.out_strides, decision_.out_dtype, device, alloc_stream);
}

void FftImpl::record_operand_use(StreamRef stream) {
  const std::shared_ptr<Storage>& owner = Access::storage(operand_);
  if (!owner) return;  // a borrowed view: its owner orders its own uses
  // Same owner (control block) and same stream as the last record: nothing new to record.
  const bool same_owner = !recorded_owner_.owner_before(owner) && !owner.owner_before(recorded_owner_);
  if (same_owner && recorded_stream_.covers(stream)) return;
  operand_.record_stream(stream);
  recorded_owner_ = owner;
  recorded_stream_.remember(stream);
}

Tensor FftImpl::execute_cuda(Direction direction, const std::optional<StreamRef>& stream, const EventList& after,
                             const TensorView* user_out, bool release_workspace) {
  const int device = target_.device;
  Phase phase(order_, streams_, target_, stream, after, "execute");
  const StreamRef s = phase.stream();
  if (target_.host_operands) {  // the staging engine: returns when the result is on the host
    Tensor result = make_result(user_out, s);
    staged_->execute(operand_.view(), result.view(), direction, scale_for(direction), s);
    phase.close();
    if (release_workspace) staged_->release();
    if (target_.blocking) finish_call(target_, s);
    return result;
  }
  if (!buffers_ready_ || s.native() != buffers_stream_) ensure_buffers(s);
  const TensorView& x = operand_.view();
  Tensor result = make_result(user_out, s);
  const bool in_place = result.data() == x.data();
  // A result this call allocated is new memory (the pool orders its reuse): recorded, not checked.
  phase.operands({{"operand", &x, in_place}, {"out", &result.view(), true, user_out == nullptr && !in_place}});

  const void* in = x.data();
  void* out = result.data();
  if (decision_.input_copy) {
    copy(x,
         TensorView(in_stage_ptr_, decision_.in_dtype, decision_.in_shape, decision_.compute_in_strides,
                    Device::cuda(device), MemorySpace::device),
         s);
    in = in_stage_ptr_;
  }
  if (decision_.output_copy) out = out_stage_ptr_;
  const double scale = scale_for(direction);
  if (cufft_) {
    // The transform and its scaling, replayed as one graph launch when these pointers came recently.
    ReplayKey key;
    key.add(in).add(out).add(workspace_ptr_).add(direction).add(scale);
    if (callbacks_) cufft_->update_callbacks(*callbacks_, s.native());  // new user data: before the transform
    replay_.run(key, device, s.native(), [&](cudaStream_t stream) {
      cufft_->bind(stream, workspace_ptr_);
      cufft_->execute(direction, in, out);
      if (scale != 1.0) scale_device(out, decision_.out_dtype, walk_, scale, stream);
    });
  } else {
    if (in != out)  // every transformed axis has length 1: the transform is the identity
      copy(TensorView(in, decision_.in_dtype, decision_.in_shape, decision_.compute_in_strides, Device::cuda(device),
                      MemorySpace::device),
           TensorView(out, decision_.out_dtype, decision_.out_shape, decision_.compute_out_strides,
                      Device::cuda(device), MemorySpace::device),
           s);
    if (scale != 1.0) scale_device(out, decision_.out_dtype, walk_, scale, s);
  }
  if (decision_.output_copy)
    copy(TensorView(out_stage_ptr_, decision_.out_dtype, decision_.out_shape, decision_.compute_out_strides,
                    Device::cuda(device), MemorySpace::device),
         result.view(), s);
  if (!target_.host_operands) record_operand_use(s);
  phase.close();
  if (release_workspace) {
    workspace_.release();
    workspace_ptr_ = nullptr;
    buffers_ready_ = false;
  }
  if (target_.blocking) finish_call(target_, s);
  return result;
}

Tensor FftImpl::execute_cpu(Direction direction, const std::optional<StreamRef>& stream, const EventList& after,
                            const TensorView* user_out) {
  const TensorView& x = operand_.view();
  const bool device_operand = !is_host(operand_space_);
  std::optional<StreamRef> s;
  if (device_operand) {
    s = resolve_stream(streams_.pick(stream), operand_device_.index());
    for (const EventRef& e : after) CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(s->native(), e.native(), 0));
  } else {
    wait_on_host(after);
  }
  Tensor result = make_result(user_out, s.value_or(StreamRef{}));

  void* in = x.data();
  void* out = result.data();
  if (decision_.input_copy) {
    const TensorView stage(host_in_stage_.data(), decision_.in_dtype, decision_.in_shape, decision_.compute_in_strides,
                           Device::cpu(), MemorySpace::host_pageable);
    copy(x, stage, s);  // from device memory: blocking
    in = host_in_stage_.data();
  }
  if (decision_.output_copy) out = host_out_stage_.data();
  if (callbacks_)
    fftw_->execute(direction, in, out, scale_for(direction), *callbacks_);
  else
    fftw_->execute(direction, in, out, scale_for(direction));
  if (decision_.output_copy)
    copy(TensorView(out, decision_.out_dtype, decision_.out_shape, decision_.compute_out_strides, Device::cpu(),
                    MemorySpace::host_pageable),
         result.view(), s);
  if (device_operand) result.record_stream(*s);
  return result;
}

}  // namespace cuplan::detail
