// SPDX-License-Identifier: Apache-2.0
// The device route of an FFT (see device_route.hpp). On the repeated call with device operands, execute allocates
// only the result Tensor and formats nothing.

#include "fft/routes/device_route.hpp"

#include <fmt/format.h>

#include "fft/cufft/scale.hpp"
#include "runtime/access.hpp"

namespace cuplan::detail {

DeviceFftRoute::DeviceFftRoute(const FftRouteContext& context, const FFTOptions& options, const TensorView& operand)
    : CufftRoute(context, options, true),
      operand_device_(operand.device()),
      sm_(device_sm(context.target.device)),
      work_area_(resolve_work_area(options.work_area, options.work_area_buffer, "FFT"), "FFT") {
  replay_.set_enabled(options.graph_replay);
  route_options_.route = options.route;
  route_options_.prolog = options.prolog;
  route_options_.epilog = options.epilog;
}

void DeviceFftRoute::check_supported(const LayoutDecision& decision) const {
  const bool wants_fused =
      route_options_.route == FFTRoute::fused ||
      (route_options_.route == FFTRoute::automatic && (route_options_.prolog || route_options_.epilog));
  fused_route_ = wants_fused && takes_fused_route(decision, {route_options_, sm_, fused_fft::headers_problem(),
                                                             fused_fft::is_native_length});
  if (!fused_route_) CufftRoute::check_supported(decision);
}

std::size_t DeviceFftRoute::required_alignment(DType dtype) const noexcept {
  return fused_route_ ? dtype.alignment() : CufftRoute::required_alignment(dtype);
}

DeviceFftRoute::~DeviceFftRoute() = default;

void DeviceFftRoute::plan(const std::optional<StreamRef>& stream, EventList& pending_after) {
  const LayoutDecision& decision = context_.decision;
  Phase phase(context_.order, context_.streams, context_.target, stream, pending_after, "plan");
  pending_after = EventList{};
  load_kernels();
  if (fused_route_ && !fused_) {
    fused_ =
        std::make_unique<FusedFftPlan>(decision, context_.target.device, sm_, context_.callbacks.get(), phase.stream());
    replay_.invalidate();
  } else if (!fused_route_ && !cufft_ && decision.layout.rank > 0) {
    cufft_ = std::make_unique<CufftPlan>(decision, context_.target.device, context_.callbacks.get(), phase.stream());
    replay_.invalidate();  // graphs of an earlier plan (none today: the plan is made once) are stale
  }
  // Every later phase runs after this one, so after the setup cuFFT left queued when planning.
  if (cufft_) cufft_->order_setup_before(phase.stream().native());
  buffers_ready_ = false;
  work_area_.check(workspace_size(), context_.target.device);  // an external buffer: big enough, on this device
  ensure_buffers(phase.stream());
  // The work area now (an owned one is kept, the shared one grows to this plan's need), not at the first execute.
  (void)work_area_.acquire(workspace_size(), context_.target.device, phase.stream());
  phase.close();
}

void DeviceFftRoute::ensure_buffers(StreamRef s) {
  const LayoutDecision& decision = context_.decision;
  const int device = context_.target.device;
  const std::size_t in_bytes = static_cast<std::size_t>(checked_numel(decision.in_shape)) * decision.in_dtype.size();
  const std::size_t out_bytes = static_cast<std::size_t>(checked_numel(decision.out_shape)) * decision.out_dtype.size();
  if (decision.input_copy) in_stage_ptr_ = in_stage_.ensure(in_bytes, device, s);
  if (decision.output_copy) out_stage_ptr_ = out_stage_.ensure(out_bytes, device, s);
  buffers_stream_ = s.native();
  buffers_ready_ = true;
}

void DeviceFftRoute::record_operand_use(const TensorRef& operand, StreamRef stream) {
  const std::shared_ptr<Storage>& owner = Access::storage(operand);
  if (!owner) return;  // a borrowed view: its owner orders its own uses
  // Same owner (control block) and same stream as the last record: nothing new to record.
  const bool same_owner = !recorded_owner_.owner_before(owner) && !owner.owner_before(recorded_owner_);
  if (same_owner && recorded_stream_.covers(stream)) return;
  operand.record_stream(stream);
  recorded_owner_ = owner;
  recorded_stream_.remember(stream);
}

Tensor DeviceFftRoute::execute(const FftCall& call) {
  const LayoutDecision& decision = context_.decision;
  const ExecutionTarget& target = context_.target;
  const int device = target.device;
  // An external area the call's operands lie in would be overwritten mid-transform: refused before any work.
  work_area_.check_apart(call.operand.view(), "operand");
  if (call.out != nullptr) work_area_.check_apart(call.out->view(), "out");
  Phase phase(context_.order, context_.streams, target, call.stream, call.after, "execute");
  const StreamRef s = phase.stream();
  if (!buffers_ready_ || s.native() != buffers_stream_) ensure_buffers(s);
  // This stream's area (shared: grown meanwhile, or another stream's phase): cuFFT is bound to it below.
  const WorkAreaHold area = work_area_.acquire(workspace_size(), device, s);
  const TensorView& x = call.operand.view();
  std::optional<Tensor> given = given_result(call);
  Tensor result = given ? std::move(*given)
                        : Tensor::empty_strided(decision.out_shape, decision.out_strides, decision.out_dtype,
                                                operand_device_, std::optional<StreamRef>(s));
  const bool in_place = result.data() == x.data();
  // A result this call allocated is new memory (the pool orders its reuse): recorded, not checked.
  // cuplan Tensors (the operand, an in-place result) are ordered after their pending producers first.
  phase.operands({{"operand", &x, in_place, false, Access::storage(call.operand).get()},
                  {"out", &result.view(), true, call.out == nullptr && !in_place, Access::storage(result).get()},
                  {"work area", area.view(), true}});

  const void* in = x.data();
  void* out = result.data();
  if (decision.input_copy) {
    copy(x,
         TensorView(in_stage_ptr_, decision.in_dtype, decision.in_shape, decision.compute_in_strides,
                    Device::cuda(device), MemorySpace::device),
         s);
    in = in_stage_ptr_;
  }
  if (decision.output_copy) out = out_stage_ptr_;
  const double scale = call.scale;
  const OutputWalk& walk = context_.walk;
  if (fused_ || cufft_) {
    // The transform and its scaling, replayed as one graph launch when these pointers came recently (on the fused
    // route one kernel, and the scaling pass when an epilog must see the unscaled value). A callback's caller_info
    // block is rewritten before it when its user data changed: the graph reads the block.
    if (context_.callbacks) {
      if (fused_)
        fused_->update_callbacks(*context_.callbacks, s.native());
      else
        cufft_->update_callbacks(*context_.callbacks, s.native());
    }
    ReplayKey key;
    key.add(in).add(out).add(area.data()).add(call.direction).add(scale);
    replay_.run(key, device, s.native(), [&](cudaStream_t captured) {
      if (fused_) {
        fused_->execute(call.direction, in, out, scale, captured);
        if (scale != 1.0 && !fused_->scales_in_kernel()) scale_device(out, decision.out_dtype, walk, scale, captured);
        return;
      }
      cufft_->bind(captured, area.data());
      cufft_->execute(call.direction, in, out);
      if (scale != 1.0) scale_device(out, decision.out_dtype, walk, scale, captured);
    });
  } else {
    if (in != out)  // every transformed axis has length 1: the transform is the identity
      copy(TensorView(in, decision.in_dtype, decision.in_shape, decision.compute_in_strides, Device::cuda(device),
                      MemorySpace::device),
           TensorView(out, decision.out_dtype, decision.out_shape, decision.compute_out_strides, Device::cuda(device),
                      MemorySpace::device),
           s);
    if (scale != 1.0) scale_device(out, decision.out_dtype, walk, scale, s);
  }
  if (decision.output_copy)
    copy(TensorView(out_stage_ptr_, decision.out_dtype, decision.out_shape, decision.compute_out_strides,
                    Device::cuda(device), MemorySpace::device),
         result.view(), s);
  record_operand_use(call.operand, s);
  phase.close();
  if (call.release_workspace) work_area_.release();
  if (target.blocking) finish_call(target, s);
  return result;
}

void DeviceFftRoute::order_new_operand(const std::optional<StreamRef>& stream) {
  context_.order_after_last_phase(stream);
}

void DeviceFftRoute::free() noexcept {
  // A cuFFT plan's tables are read by every transform enqueued with it (and by graphs replaying them), and cuFFT
  // does not document that destroying the plan waits for them. Function-form plans are destroyed by cache eviction
  // on whichever thread returns a lease, with their last transform possibly still queued on another stream: the
  // object's last phase must be done before its plans go.
  if (cufft_ || fused_) wait_for_last_phase();  // graph replays exist only with a plan
  replay_.reset();
  cufft_.reset();
  fused_.reset();
  work_area_.release();
  in_stage_.release();
  out_stage_.release();
  in_stage_ptr_ = out_stage_ptr_ = nullptr;
  buffers_ready_ = false;
}

std::size_t DeviceFftRoute::estimate_workspace_size() const {
  const LayoutDecision& decision = context_.decision;
  const int device = context_.target.device;
  if (cufft_) return cufft_->workspace_size();
  // The fused kernel needs no library work area; every transformed axis of length 1 needs no plan at all.
  if (fused_route_ || decision.layout.rank == 0) return 0;
  // Callbacks are linked into the plan's kernels, which may change what they need: plan with them, as plan() does.
  if (context_.callbacks)
    return CufftPlan(decision, device, context_.callbacks.get(), current_stream(Device::cuda(device))).workspace_size();
  return cufft_workspace_size(decision, device);
}

std::size_t DeviceFftRoute::held_bytes() const noexcept {
  return work_area_.held_bytes() + in_stage_.size() + out_stage_.size();
}

void DeviceFftRoute::release_idle_memory() noexcept {
  // Stream-ordered after the last use; the next execute allocates again (ensure_buffers).
  work_area_.release();
  in_stage_.release();
  out_stage_.release();
  in_stage_ptr_ = out_stage_ptr_ = nullptr;
  buffers_ready_ = false;
}

std::size_t DeviceFftRoute::workspace_size() const noexcept {
  return cufft_ ? cufft_->workspace_size() : 0;
}

std::size_t DeviceFftRoute::calls_per_execute() const noexcept {
  return fused_route_ ? 1 : CufftRoute::calls_per_execute();
}

std::string DeviceFftRoute::execution() const {
  if (!fused_route_) return CufftRoute::execution() + " (route cufft)";
  return fmt::format("route fused: {} on cuda:{}",
                     fused_ ? fused_->description() : "fused cuFFTDx kernel of cuplan's own", context_.target.device);
}

}  // namespace cuplan::detail
