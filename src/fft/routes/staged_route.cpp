// SPDX-License-Identifier: Apache-2.0
// The staged route of an FFT (see staged_route.hpp).

#include "fft/routes/staged_route.hpp"

#include "runtime/pinned_cache.hpp"

namespace cuplan::detail {

StagedFftRoute::StagedFftRoute(const FftRouteContext& context, const FFTOptions& options, const TensorView& operand)
    : CufftRoute(context, options, false),
      operand_strides_(operand.strides()),
      parity_(options.last_axis_parity),
      device_memory_limit_(options.device_memory_limit) {}

StagedFftRoute::~StagedFftRoute() = default;

void StagedFftRoute::plan(const std::optional<StreamRef>& stream, EventList& pending_after) {
  Phase phase(context_.order, context_.streams, context_.target, stream, pending_after, "plan");
  pending_after = EventList{};
  load_kernels();
  // Chunk by chunk within the device memory limit: no buffer holds the whole operand on the device.
  if (!staged_)
    staged_ = std::make_unique<StagedFft>(
        StagedFftRequest{&context_.decision, operand_strides_, parity_, context_.target.device, device_memory_limit_});
  staged_->order_setup_before(phase.stream().native());
  phase.close();
}

Tensor StagedFftRoute::execute(const FftCall& call) {
  Phase phase(context_.order, context_.streams, context_.target, call.stream, call.after, "execute");
  const StreamRef s = phase.stream();
  // A large new result is pinned, so the staging engine DMAs into it in place instead of faulting in fresh pageable
  // pages and copying into them (docs/staging.md).
  const LayoutDecision& decision = context_.decision;
  std::optional<Tensor> given = given_result(call);
  Tensor result =
      given ? std::move(*given) : empty_host_result(decision.out_shape, decision.out_strides, decision.out_dtype);
  staged_->execute(call.operand.view(), result.view(), call.direction, call.scale, s);  // returns when on the host
  phase.close();
  if (call.release_workspace) staged_->release();
  if (context_.target.blocking) finish_call(context_.target, s);
  return result;
}

void StagedFftRoute::free() noexcept {
  // The chunks' cuFFT plans may still be read by the last transform queued: wait for the last phase first.
  if (staged_) wait_for_last_phase();
  staged_.reset();
}

}  // namespace cuplan::detail
