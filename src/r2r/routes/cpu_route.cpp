// SPDX-License-Identifier: Apache-2.0
// The CPU route of a RealTransform (cpu_route.hpp).

#include "r2r/routes/cpu_route.hpp"

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "r2r/host_scaling.hpp"
#include "runtime/current_stream.hpp"

namespace cuplan::detail {

CpuR2RRoute::CpuR2RRoute(const R2RRouteContext& context, const RealTransformOptions& options, const TensorView& operand)
    : R2RRoute(context), planning_(options.planning), host_operand_(operand.on_host()) {}

CpuR2RRoute::~CpuR2RRoute() = default;

void CpuR2RRoute::plan(const std::optional<StreamRef>& /*stream*/, EventList& pending_after) {
  // The operand's producers (RealTransformOptions::after) come before the first phase: the host waits for them.
  wait_on_host(pending_after);
  pending_after = EventList{};
  const R2RDecision& d = context_.decision;
  if (!fftw_) {
    fftw_ = std::make_unique<FftwR2RPlan>(d, context_.target.cpu_threads, planning_);
    // The forward plan an execute will use: out of place from a host operand when no input factor applies.
    bool input_factors = false;
    for (std::size_t i = 0; i < d.transformed.size(); ++i)
      input_factors = input_factors || d.edges(i, Direction::forward).scales_input();
    fftw_->prepare(Direction::forward, !host_operand_ || d.inplace || input_factors);
  }
  if (!host_operand_ && host_stage_.data() == nullptr)
    host_stage_ = Tensor::empty_strided(context_.decision.shape, context_.decision.out_strides, context_.decision.dtype,
                                        Device::cpu());
}

Tensor CpuR2RRoute::execute(const R2RCall& call) {
  const R2RDecision& d = context_.decision;
  const TensorView& x = call.operand.view();
  const HostPhase phase(context_.streams, x, call.stream, call.after);
  Tensor result = phase.result(given_result(call), d.shape, d.out_strides, d.dtype, x);
  if (x.numel() == 0) return result;
  bool needs_input_scaling = false;
  for (std::size_t i = 0; i < d.transformed.size(); ++i)
    needs_input_scaling = needs_input_scaling || d.edges(i, call.direction).scales_input();

  if (!host_operand_) {
    // Device memory: through the host stage (row-major, or the operand's layout in place), blocking copies.
    copy(call.operand, host_stage_.view(), phase.stream());  // after a cuplan Tensor's pending producer
    scale_input_edges(host_stage_.data(), d.out_strides, d, call.direction);
    fftw_->execute_in_place(call.direction, host_stage_.data());
    scale_output(host_stage_.data(), d.out_strides, d, call.direction);
    copy(host_stage_.view(), result, phase.stream());
    return phase.finish(std::move(result));
  }
  void* out = result.data();
  if (d.inplace) {
    scale_input_edges(out, d.out_strides, d, call.direction);
    fftw_->execute_in_place(call.direction, out);
  } else if (needs_input_scaling || !fftw_->execute_out_of_place(call.direction, x.data(), out)) {
    // The operand is never written: the result takes a copy, which is scaled and transformed in place.
    copy(x, result.view());
    scale_input_edges(out, d.out_strides, d, call.direction);
    fftw_->execute_in_place(call.direction, out);
  }
  scale_output(out, d.out_strides, d, call.direction);
  return result;
}

void CpuR2RRoute::free() noexcept {
  fftw_.reset();
  host_stage_ = Tensor{};
}

std::string CpuR2RRoute::execution() const {
  return fmt::format("FFTW r2r execution ({} planning)", to_string(planning_));
}

std::string CpuR2RRoute::location() const {
  return "cpu (FFTW)";
}

}  // namespace cuplan::detail
