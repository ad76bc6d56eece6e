// SPDX-License-Identifier: Apache-2.0
// The CPU route of an FFT (see cpu_route.hpp).

#include "fft/routes/cpu_route.hpp"

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "runtime/current_stream.hpp"

namespace cuplan::detail {

CpuFftRoute::CpuFftRoute(const FftRouteContext& context, const FFTOptions& options, const TensorView& operand)
    : FftRoute(context), planning_(options.planning), host_operand_(operand.on_host()) {}

CpuFftRoute::~CpuFftRoute() = default;

void CpuFftRoute::shape_request(LayoutRequest& request) const {
  // Device operands are staged to the host; FFTW loops over batches cheaply and has no alignment rule of its own.
  request.stage_input = !host_operand_;
  request.stage_output = !host_operand_;
  request.loop_is_costly = false;
  request.aligned_real_calls = false;
}

std::size_t CpuFftRoute::required_alignment(DType dtype) const noexcept {
  return dtype.alignment();
}

void CpuFftRoute::check_supported(const LayoutDecision& decision) const {
  if (decision.in_dtype.real() == f16)
    throw NotSupported(
        fmt::format("FFT: half precision ({}) needs CUDA execution; CPU execution (FFTW) supports f32/f64 only",
                    decision.in_dtype.name()));
}

void CpuFftRoute::plan(const std::optional<StreamRef>& /*stream*/, EventList& pending_after) {
  // FFTOptions::after orders the producers of the operand before the first phase: the host waits for them here (a
  // CPU execute reads the operand on the host, after this phase), and each execute then waits for its own `after`.
  wait_on_host(pending_after);
  pending_after = EventList{};
  const LayoutDecision& decision = context_.decision;
  if (!fftw_) fftw_ = std::make_unique<FftwPlan>(decision, context_.target.cpu_threads, planning_);
  const std::int64_t in_numel = checked_numel(decision.in_shape, "operand");
  const std::int64_t out_numel = checked_numel(decision.out_shape, "result");
  if (decision.input_copy && host_in_stage_.data() == nullptr)
    host_in_stage_ = Tensor::empty({in_numel}, decision.in_dtype);
  if (decision.output_copy && host_out_stage_.data() == nullptr)
    host_out_stage_ = Tensor::empty({out_numel}, decision.out_dtype);
}

Tensor CpuFftRoute::execute(const FftCall& call) {
  const LayoutDecision& decision = context_.decision;
  const TensorView& x = call.operand.view();
  const HostPhase phase(context_.streams, x, call.stream, call.after);
  const std::optional<StreamRef>& s = phase.stream();
  Tensor result = phase.result(given_result(call), decision.out_shape, decision.out_strides, decision.out_dtype, x);

  void* in = x.data();
  void* out = result.data();
  if (decision.input_copy) {
    const TensorView stage(host_in_stage_.data(), decision.in_dtype, decision.in_shape, decision.compute_in_strides,
                           Device::cpu(), MemorySpace::host_pageable);
    copy(call.operand, stage, s);  // from device memory: blocking, after a cuplan Tensor's pending producer
    in = host_in_stage_.data();
  }
  if (decision.output_copy) out = host_out_stage_.data();
  if (context_.callbacks)
    fftw_->execute(call.direction, in, out, call.scale, *context_.callbacks);
  else
    fftw_->execute(call.direction, in, out, call.scale);
  if (decision.output_copy)
    copy(TensorView(out, decision.out_dtype, decision.out_shape, decision.compute_out_strides, Device::cpu(),
                    MemorySpace::host_pageable),
         result, s);
  return phase.finish(std::move(result));
}

void CpuFftRoute::free() noexcept {
  fftw_.reset();
  host_in_stage_ = Tensor{};
  host_out_stage_ = Tensor{};
}

std::size_t CpuFftRoute::calls_per_execute() const noexcept {
  return 1;
}

std::string CpuFftRoute::execution() const {
  return fmt::format("FFTW execution ({} planning)", to_string(planning_));
}

std::string CpuFftRoute::location() const {
  return "cpu (FFTW)";
}

}  // namespace cuplan::detail
