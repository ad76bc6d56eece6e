// SPDX-License-Identifier: Apache-2.0
// FftImpl: construction (the layout decision and the route), the lifecycle, and execute's checks. The route runs
// each phase (fft_route.hpp); on the device route with device operands an execute allocates only the result Tensor
// and formats nothing.

#include "fft/fft_impl.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "base/error_context.hpp"
#include "base/nvtx.hpp"
#include "base/overlap.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "fft/fft_validate.hpp"
#include "plan/work_area.hpp"
#include "runtime/access.hpp"
#include "runtime/storage.hpp"

namespace cuplan::detail {
namespace {

std::string str(const Dims& dims) {
  return fmt::format("[{}]", fmt::join(dims.span(), ", "));
}

}  // namespace

FftImpl::FftImpl(TensorRef operand, const FFTOptions& options, const std::optional<TensorView>& out_hint)
    : PlannedOperation("FFT", std::move(operand), options.stream, options.after),
      inplace_(options.inplace),
      normalization_(options.normalization) {
  validate_fft_options(options, "FFT");
  const TensorView& x = operand_.view();
  // The construction's operand, before anything else (execute checks every later one).
  check_work_area_apart(options.work_area, options.work_area_buffer, x, "operand", "FFT");
  static constexpr const char* kNames[] = {"operand"};
  target_ = resolve_execution(options.execution, options.blocking, std::span<const TensorView>(&x, 1), kNames, "FFT");
  // An external area serves cuFFT on device operands; the CPU and the staged route of a host operand have none.
  if (!target_.cuda)
    check_work_area_unused(options.work_area_buffer, "FFT", "CPU execution");
  else if (x.on_host())
    check_work_area_unused(options.work_area_buffer, "FFT", "an operand in host memory");
  route_ = make_fft_route({route_context(), decision_, walk_, callbacks_, options.inplace}, options, x);

  LayoutRequest request;
  // An in-place transform writes the operand: no element may be reached twice (before any layout message).
  if (options.inplace) {
    check_writable(x, "operand", "FFT (inplace)");
    check_no_self_overlap(x, "operand", "FFT (inplace)");
  }
  request.dtype = x.dtype();
  request.shape = x.shape();
  request.strides = x.strides();
  request.axes = options.axes;
  request.type = options.fft_type;
  request.parity = options.last_axis_parity;
  request.inplace = options.inplace;
  request.result_layout = options.result_layout;
  if (out_hint) {
    if (options.inplace)
      throw InvalidArgument("FFT: out: an output cannot be given for an in-place transform (inplace = true)");
    check_writable(*out_hint, "out", "FFT");
    check_no_self_overlap(*out_hint, "out", "FFT");  // its strides would become the planned result layout
    request.out_shape = out_hint->shape();
    request.out_dtype = out_hint->dtype();
    request.out_strides = out_hint->strides();
  }
  route_->shape_request(request);  // staging copies, costly loops, aligned real calls
  decision_ = plan_layout(request);
  if (options.prolog || options.epilog) callbacks_ = std::make_unique<CallbackSet>(options, decision_, target_);
  // The backend's limits (half precision on the CPU, cuFFT's f16 lengths) and its route, which sets the alignment.
  route_->check_supported(decision_);
  check_alignment(x.data(), route_->required_alignment(x.dtype()), "operand", "FFT");
  check_inplace_room(operand_, "FFT");
  if (options.inplace) {
    // Written in place: the result seen over the operand's memory may not reach an element twice either.
    check_no_self_overlap(TensorView(x.data(), decision_.out_dtype, decision_.out_shape, decision_.out_strides,
                                     x.device(), x.memory_space()),
                          "result", "FFT (inplace)");
  }
  // Alignment: what the route needs (not the pointer's class), so a reset may bring any usable pointer.
  operand_signature_ = OperandSignature::of(x);
  operand_signature_.alignment = static_cast<std::uint32_t>(route_->required_alignment(x.dtype()));
  out_signature_ = OperandSignature::result(
      decision_.out_dtype, decision_.out_shape, decision_.out_strides, x.on_host(), x.device().index(),
      static_cast<std::uint32_t>(route_->required_alignment(decision_.out_dtype)));
  if (out_hint) out_signature_.require_match(*out_hint, "FFT", nullptr, "out");

  default_direction_ = decision_.type == FFTType::c2r ? Direction::inverse : Direction::forward;
  const double n = static_cast<double>(decision_.layout.transform_size);
  switch (normalization_) {
    case Normalization::none:
      break;
    case Normalization::inverse:
      inverse_scale_ = 1.0 / n;
      break;
    case Normalization::forward:
      forward_scale_ = 1.0 / n;
      break;
    case Normalization::ortho:
      forward_scale_ = inverse_scale_ = 1.0 / std::sqrt(n);
      break;
  }
  walk_ = output_walk(decision_.layout, decision_.type);
  state_.set_operand(true);
}

FftImpl::~FftImpl() {
  free();
}

void FftImpl::check_inplace_room(const TensorRef& operand, const char* method) const {
  if (!inplace_ || decision_.type == FFTType::c2c || !operand.owning()) return;
  const TensorView& x = operand.view();
  const TensorView result(x.data(), decision_.out_dtype, decision_.out_shape, decision_.out_strides, x.device(),
                          x.memory_space());
  const Storage& owner = *Access::storage(operand);
  const auto offset = static_cast<std::size_t>(static_cast<const char*>(x.data()) - static_cast<char*>(owner.data()));
  if (offset + result.span_bytes() > owner.bytes())
    throw InvalidArgument(fmt::format(
        "{}: inplace: the {} result (shape {}, strides {}) needs {} bytes from the operand's start, but the "
        "operand's memory holds {}; pad the real rows along axis {} to {} values",
        method, decision_.out_dtype.name(), str(decision_.out_shape), str(decision_.out_strides), result.span_bytes(),
        owner.bytes() - offset, decision_.axes.back(),
        2 * (decision_.type == FFTType::r2c ? decision_.out_shape : decision_.in_shape)[decision_.axes.back()]));
}

const char* FftImpl::nvtx_name(NvtxPhase phase, const char* range) noexcept {
  // The layout decision is fixed at construction, so the label never changes: "FFT c2c c64 [64, 256] axes [0, 1]".
  return nvtx_.get(phase, range, [this] {
    return fmt::format("FFT {} {} {} axes [{}]", to_string(decision_.type), decision_.in_dtype.name(),
                       str(decision_.in_shape), fmt::join(decision_.axes, ", "));
  });
}

void FftImpl::plan(std::optional<StreamRef> stream) {
  NvtxRange range(nvtx_name(nvtx_plan, "cuplan::FFT::plan"));
  plan_phase([&](EventList& pending_after) { route_->plan(stream, pending_after); });
}

Tensor FftImpl::execute(const FFTExecuteOptions& options) {
  require_runnable("execute");  // planned (so alive) and holding an operand
  if (options.direction) check_direction(*options.direction, "FFT.execute");
  const Direction direction = options.direction.value_or(default_direction_);
  if (decision_.type == FFTType::r2c && direction != Direction::forward)
    throw InvalidArgument("FFT.execute: direction: an R2C transform runs forward only, got Direction::inverse");
  if (decision_.type == FFTType::c2r && direction != Direction::inverse)
    throw InvalidArgument("FFT.execute: direction: a C2R transform runs inverse only, got Direction::forward");
  const TensorRef* out = checked_out(options.out, inplace_, "FFT.execute");
  set_callback_data(options.prolog_data, options.epilog_data, "FFT.execute");
  return execute_validated(direction, options.stream, options.after, out, options.release_workspace);
}

Tensor FftImpl::execute_validated(Direction direction, const std::optional<StreamRef>& stream, const EventList& after,
                                  const TensorRef* out, bool release_workspace) try {
  NvtxRange range(nvtx_name(nvtx_execute, "cuplan::FFT::execute"));
  // Out of place only: the constructor rejects out with inplace.
  return route_->execute({route_call(stream, after, out, release_workspace), direction, scale_for(direction)});
} catch (const LibraryError& error) {
  rethrow_with_context(error, "FFT.execute", [this] { return error_context(); });
}

void FftImpl::reset_operand(TensorRef operand, std::optional<StreamRef> stream) try {
  NvtxRange range(nvtx_name(nvtx_reset, "cuplan::FFT::reset_operand"));
  replace_operand(std::move(operand), inplace_ ? "FFT.reset_operand (inplace)" : nullptr, [&] {
    check_inplace_room(operand, "FFT.reset_operand");
    route_->order_new_operand(stream);
  });
} catch (const LibraryError& error) {
  rethrow_with_context(error, "FFT.reset_operand", [this] { return error_context(); });
}

void FftImpl::adopt_operand(TensorRef&& operand) {
  // The plan key fixed the view; the owner's size is not in it, so in-place R2C/C2R still checks the room.
  check_inplace_room(operand, "FFT");
  PlannedOperation::adopt_operand(std::move(operand));
}

void FftImpl::release_operand() {
  NvtxRange range(nvtx_name(nvtx_release, "cuplan::FFT::release_operand"));
  PlannedOperation::release_operand();
}

void FftImpl::set_callback_data(const std::optional<void*>& prolog, const std::optional<void*>& epilog,
                                const char* method) {
  if (!prolog && !epilog) return;
  if (!callbacks_)
    throw StateError(fmt::format("{}: {}: the FFT was planned without callbacks; set FFTOptions::prolog or epilog",
                                 method, prolog ? "prolog_data" : "epilog_data"));
  callbacks_->set_user_data(prolog, epilog, method);
}

void FftImpl::free() noexcept {
  if (state_.freed()) return;
  NvtxRange range(nvtx_name(nvtx_free, "cuplan::FFT::free"));
  route_->free();  // waits for the last phase first where the route's plans may still be read
  operand_ = TensorRef{};
  state_.set_freed();
}

std::size_t FftImpl::workspace_size() const noexcept {
  return route_->workspace_size();
}

std::size_t FftImpl::estimate_workspace_size() const try {
  state_.require_alive("estimate_workspace_size");
  return route_->estimate_workspace_size();
} catch (const LibraryError& error) {
  rethrow_with_context(error, "estimate_workspace_size", [this] { return error_context(); });
}

std::string FftImpl::describe() const {
  const LayoutDecision& d = decision_;
  const AdvancedLayout& l = d.layout;
  std::string copies;
  if (d.input_copy) copies += fmt::format(", input copy ({})", d.input_copy_reason);
  if (d.output_copy) copies += fmt::format(", output copy ({})", d.output_copy_reason);
  return fmt::format(
             "FFT {} {} -> {} axes [{}] shape {} -> {}, lengths [{}], {} batch dim(s) ({} call(s) per execute){}{}, "
             "normalization {}, {}, workspace {} bytes",
             to_string(d.type), d.in_dtype.name(), d.out_dtype.name(), fmt::join(d.axes, ", "), str(d.in_shape),
             str(d.out_shape), fmt::join(std::span(l.n, static_cast<std::size_t>(l.rank)), ", "), l.batch_dims.size(),
             route_->calls_per_execute(), d.inplace_compute ? ", in place" : "", copies, to_string(normalization_),
             route_->execution(), workspace_size()) +
         callbacks_description();
}

std::string FftImpl::callbacks_description() const {
  if (!callbacks_) return {};
  std::string text;
  for (CallbackRole role : {CallbackRole::prolog, CallbackRole::epilog})
    if (callbacks_->has(role)) text += ", " + callback_name(role, callbacks_->callback(role));
  return text;
}

std::string FftImpl::error_context() const {
  const LayoutDecision& d = decision_;
  return fmt::format("{} {} -> {}, shape {} -> {}, axes [{}], on {}", to_string(d.type), d.in_dtype.name(),
                     d.out_dtype.name(), str(d.in_shape), str(d.out_shape), fmt::join(d.axes, ", "),
                     route_->location());
}

}  // namespace cuplan::detail
