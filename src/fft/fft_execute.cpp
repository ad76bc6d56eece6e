// FftImpl::execute: the per-call path. Everything that can be is decided at plan time; on the CUDA path with
// device operands this allocates only the result Tensor and formats nothing.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.hpp"
#include "cuplan/errors.hpp"
#include "fft/fft_impl.hpp"

namespace cuplan::detail {
namespace {

bool is_host(MemorySpace space) {
  return space == MemorySpace::host_pageable || space == MemorySpace::host_pinned;
}

std::string str(const Dims& dims) {
  return fmt::format("[{}]", fmt::join(dims.span(), ", "));
}

}  // namespace

Tensor FftImpl::execute(const ExecuteOptions& options) {
  state_.require_alive("execute");
  state_.require_planned("execute");
  state_.require_operand("execute");
  const Direction direction = options.direction.value_or(default_direction_);
  if (decision_.type == FFTType::r2c && direction != Direction::forward)
    throw InvalidArgument("FFT.execute: direction: an R2C transform runs forward only, got Direction::inverse");
  if (decision_.type == FFTType::c2r && direction != Direction::inverse)
    throw InvalidArgument("FFT.execute: direction: a C2R transform runs inverse only, got Direction::forward");
  if (options.out) {
    const TensorView& out = *options.out;
    if (inplace_) throw InvalidArgument("FFT.execute: out: an output cannot be given for an in-place transform");
    if (!(out.shape() == decision_.out_shape))
      throw InvalidArgument(
          fmt::format("FFT.execute: out: expected shape {}, got {}", str(decision_.out_shape), str(out.shape())));
    if (!(out.dtype() == decision_.out_dtype))
      throw InvalidArgument(
          fmt::format("FFT.execute: out: expected dtype {}, got {}", decision_.out_dtype.name(), out.dtype().name()));
    for (int a = 0; a < out.ndim(); ++a)
      if (out.shape()[a] > 1 && out.strides()[a] != decision_.out_strides[a])
        throw InvalidArgument(fmt::format("FFT.execute: out: expected strides {} (the planned result layout), got {}",
                                          str(decision_.out_strides), str(out.strides())));
    check_out(out);
  }
  return target_.cuda ? execute_cuda(options, direction) : execute_cpu(options, direction);
}

Tensor FftImpl::make_result(const ExecuteOptions& options, StreamRef stream) const {
  if (options.out) return Tensor::wrap(*options.out);
  const bool host = is_host(operand_space_);
  if (inplace_) {
    if (decision_.type == FFTType::c2c) return operand_.as_tensor();  // the result is the operand
    // R2C/C2R in place: the same memory seen with the result's dtype, shape and strides.
    return Tensor::wrap(TensorView(operand_.view().data(), decision_.out_dtype, decision_.out_shape,
                                   decision_.out_strides, operand_device_, operand_space_));
  }
  if (host) return Tensor::empty(decision_.out_shape, decision_.out_dtype, Device::cpu());
  return Tensor::empty(decision_.out_shape, decision_.out_dtype, operand_device_, stream);
}

void FftImpl::record_operand_use(StreamRef stream) {
  if (operand_recorded_ && operand_stream_ == stream.native()) return;
  operand_.record_stream(stream);
  operand_stream_ = stream.native();
  operand_recorded_ = true;
}

Tensor FftImpl::execute_cuda(const ExecuteOptions& options, Direction direction) {
  const int device = target_.device;
  const StreamRef s = resolve_stream(options.stream, device);
  if (!stream_checked_ || s.native() != checked_stream_) {
    check_stream_device(s, device, "FFT.execute");
    checked_stream_ = s.native();
    stream_checked_ = true;
  }
  int current = -1;
  CUPLAN_CUDA_CHECK(cudaGetDevice(&current));
  std::optional<DeviceScope> scope;
  if (current != device) scope.emplace(Device::cuda(device));

  order_.begin(s, options.after, device);
  if (!buffers_ready_ || s.native() != buffers_stream_) ensure_buffers(s);
  const TensorView& x = operand_.view();
  Tensor result = make_result(options, s);
  const Device exec_device = Device::cuda(device);

  const void* in = x.data();
  void* out = result.data();
  if (decision_.input_copy) {
    copy(x,
         TensorView(in_stage_ptr_, decision_.in_dtype, decision_.in_shape, decision_.compute_in_strides, exec_device,
                    MemorySpace::device),
         s);
    in = in_stage_ptr_;
  }
  if (decision_.output_copy) out = out_stage_ptr_;
  if (cufft_) {
    cufft_->bind(s, workspace_ptr_);
    cufft_->execute(direction, in, out);
  } else if (in != out) {  // every transformed axis has length 1: the transform is the identity
    copy(TensorView(in, decision_.in_dtype, decision_.in_shape, decision_.compute_in_strides, exec_device,
                    MemorySpace::device),
         TensorView(out, decision_.out_dtype, decision_.out_shape, decision_.compute_out_strides, exec_device,
                    MemorySpace::device),
         s);
  }
  const double scale = scale_for(direction);
  if (scale != 1.0) scale_device(out, decision_.out_dtype, walk_, scale, s);
  if (decision_.output_copy)
    copy(TensorView(out_stage_ptr_, decision_.out_dtype, decision_.out_shape, decision_.compute_out_strides,
                    exec_device, MemorySpace::device),
         result.view(), s);
  if (!target_.host_operands) record_operand_use(s);
  order_.end(s);
  if (options.release_workspace) {
    workspace_.release();
    workspace_ptr_ = nullptr;
    buffers_ready_ = false;
  }
  if (target_.blocking) finish_call(target_, s);
  return result;
}

Tensor FftImpl::execute_cpu(const ExecuteOptions& options, Direction direction) {
  const TensorView& x = operand_.view();
  const bool device_operand = !is_host(operand_space_);
  std::optional<StreamRef> s;
  if (device_operand) {
    s = resolve_stream(options.stream, operand_device_.index());
    for (const EventRef& e : options.after) CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(s->native(), e.native(), 0));
  } else {
    for (const EventRef& e : options.after) CUPLAN_CUDA_CHECK(cudaEventSynchronize(e.native()));
  }
  Tensor result = make_result(options, s.value_or(StreamRef{}));

  void* in = x.data();
  void* out = result.data();
  if (decision_.input_copy) {
    const TensorView stage(host_in_stage_.data(), decision_.in_dtype, decision_.in_shape, decision_.compute_in_strides,
                           Device::cpu(), MemorySpace::host_pageable);
    copy(x, stage, s);  // from device memory: blocking
    in = host_in_stage_.data();
  }
  if (decision_.output_copy) out = host_out_stage_.data();
  fftw_->execute(direction, in, out, scale_for(direction));
  if (decision_.output_copy)
    copy(TensorView(out, decision_.out_dtype, decision_.out_shape, decision_.compute_out_strides, Device::cpu(),
                    MemorySpace::host_pageable),
         result.view(), s);
  if (device_operand) result.record_stream(*s);
  return result;
}

}  // namespace cuplan::detail
