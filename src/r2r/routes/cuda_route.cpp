// SPDX-License-Identifier: Apache-2.0
// The CUDA route of a RealTransform (cuda_route.hpp).

#include "r2r/routes/cuda_route.hpp"

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "runtime/access.hpp"

namespace cuplan::detail {

CudaR2RRoute::CudaR2RRoute(const R2RRouteContext& context, const RealTransformOptions& options,
                           const TensorView& operand)
    : R2RRoute(context),
      host_operand_(operand.on_host()),
      work_area_(resolve_work_area(options.work_area, options.work_area_buffer, "RealTransform"), "RealTransform") {
  replay_.set_enabled(options.graph_replay);
  // Each axis's route is decided now (no GPU work), so that a refused `fused` fails at construction and describe()
  // names the routes before plan() (which moves an automatic axis to the passes only where the device cannot run
  // the fused kernel). A host operand is transformed in its device stage, laid out as the result.
  const R2RDecision& d = context.decision;
  cufft_ = std::make_unique<CufftR2R>(d, context.target.device, options.route,
                                      host_operand_ ? d.out_strides : d.in_strides, context.who);
}

CudaR2RRoute::~CudaR2RRoute() {
  free();
}

void CudaR2RRoute::plan(const std::optional<StreamRef>& stream, EventList& pending_after) {
  Phase phase(context_.order, context_.streams, context_.target, stream, pending_after, "plan");
  pending_after = EventList{};
  cufft_->plan();
  work_area_.check(cufft_->workspace_size(), context_.target.device);  // external: big enough, on this device
  (void)work_area_.acquire(cufft_->workspace_size(), context_.target.device, phase.stream());
  phase.close();
}

Tensor CudaR2RRoute::execute(const R2RCall& call) {
  const R2RDecision& d = context_.decision;
  const TensorView& x = call.operand.view();
  // An external area the call's operands lie in would be overwritten mid-transform: refused before any work.
  work_area_.check_apart(x, "operand");
  if (call.out != nullptr) work_area_.check_apart(call.out->view(), "out");
  Phase phase(context_.order, context_.streams, context_.target, call.stream, call.after, "execute");
  const StreamRef s = phase.stream();
  std::optional<Tensor> given = given_result(call);
  const bool fresh = !given;
  if (!host_operand_) {
    Tensor result =
        given ? std::move(*given)
              : Tensor::empty_strided(d.shape, d.out_strides, d.dtype, Device::cuda(context_.target.operand_device), s);
    const WorkAreaHold area = work_area_.acquire(cufft_->workspace_size(), context_.target.device, s);
    // cuplan Tensors are ordered after their pending producers first.
    phase.operands({{"operand", &x, d.inplace, false, Access::storage(call.operand).get()},
                    {"result", &result.view(), true, fresh, Access::storage(result).get()},
                    {"work area", area.view(), true}});
    if (x.numel() > 0) {
      void* workspace = area.data();
      const void* in = x.data();
      void* out = result.data();
      // The passes and cuFFT calls of every axis, replayed as one graph launch when these pointers came recently.
      ReplayKey key;
      key.add(in).add(out).add(workspace).add(call.direction);
      replay_.run(key, context_.target.device, s.native(), [&](cudaStream_t captured) {
        cufft_->execute(call.direction, in, d.in_strides, out, workspace, captured);
      });
    }
    if (call.release_workspace) work_area_.release();
    result.record_stream(s);
    phase.close();
    finish_call(context_.target, s);
    return result;
  }
  // Host operand: stage on the device, transform in place there, copy back; the call blocks.
  Tensor result = given ? std::move(*given) : Tensor::empty_strided(d.shape, d.out_strides, d.dtype, Device::cpu());
  if (x.numel() > 0) {
    if (device_stage_.data() == nullptr)
      device_stage_ = Tensor::empty_strided(d.shape, d.out_strides, d.dtype, Device::cuda(context_.target.device), s);
    const WorkAreaHold area = work_area_.acquire(cufft_->workspace_size(), context_.target.device, s);
    copy(x, device_stage_.view(), s);
    cufft_->execute(call.direction, device_stage_.data(), d.out_strides, device_stage_.data(), area.data(), s.native());
    copy(device_stage_.view(), result.view(), s);
    if (call.release_workspace) {
      work_area_.release();
      device_stage_ = Tensor{};
    }
  }
  phase.close();
  s.synchronize();
  return result;
}

void CudaR2RRoute::order_new_operand(const std::optional<StreamRef>& stream) {
  context_.order_after_last_phase(stream);
}

void CudaR2RRoute::free() noexcept {
  // cuFFT plans and the stage are read by work already enqueued: the last phase must be done before they go.
  if (cufft_) {
    try {
      context_.order.synchronize();
    } catch (...) {  // a failed synchronize is reported by the next CUDA call; free never throws
    }
  }
  replay_.reset();  // the graphs hold the cuFFT plans' kernels and the workspace
  cufft_.reset();
  work_area_.release();
  device_stage_ = Tensor{};
}

std::size_t CudaR2RRoute::workspace_size() const noexcept {
  return cufft_ ? cufft_->workspace_size() : 0;
}

std::size_t CudaR2RRoute::held_bytes() const noexcept {
  return work_area_.held_bytes() + (device_stage_.data() != nullptr ? device_stage_.view().span_bytes() : 0);
}

void CudaR2RRoute::release_idle_memory() noexcept {
  // Stream-ordered after the last use (the stage's uses are recorded on its stream); the next execute allocates.
  work_area_.release();
  device_stage_ = Tensor{};
}

std::string CudaR2RRoute::execution() const {
  return fmt::format("CUDA execution on cuda:{} ({}; inverse: {})", context_.target.device,
                     cufft_ ? cufft_->algorithms(Direction::forward) : "not planned",
                     cufft_ ? cufft_->algorithms(Direction::inverse) : "not planned");
}

std::string CudaR2RRoute::location() const {
  return fmt::format("cuda:{} (cuFFT)", context_.target.device);
}

}  // namespace cuplan::detail
