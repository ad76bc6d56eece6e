// SPDX-License-Identifier: Apache-2.0
// RealTransformImpl: validation and decision at construction, the lifecycle, and execute's checks.

#include "r2r/real_transform_impl.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error_context.hpp"
#include "base/overlap.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "plan/option_checks.hpp"
#include "plan/work_area.hpp"

namespace cuplan::detail {
namespace {

std::string kinds_text(const std::vector<R2RKind>& kinds) {
  std::string text;
  for (std::size_t i = 0; i < kinds.size(); ++i) text += fmt::format("{}{}", i == 0 ? "" : ", ", to_string(kinds[i]));
  return text;
}

}  // namespace

RealTransformImpl::RealTransformImpl(TensorRef operand, const RealTransformOptions& options, const char* who,
                                     bool all_axes_by_default, const char* axes_option)
    : PlannedOperation("RealTransform", std::move(operand), options.stream, options.after) {
  validate_r2r_options(options, who);
  const TensorView& x = operand_.view();
  if (x.data() == nullptr && x.numel() > 0)
    throw InvalidArgument(fmt::format("{}: operand: expected a tensor with data, got a null pointer", who));
  // The construction's operand, before anything else (execute checks every later one).
  check_work_area_apart(options.work_area, options.work_area_buffer, x, "operand", who);
  static constexpr const char* kNames[] = {"operand"};
  target_ = resolve_execution(options.execution, options.blocking, std::span<const TensorView>(&x, 1), kNames, who);
  if (options.inplace) {
    check_writable(x, "operand", who);
    check_no_self_overlap(x, "operand", who);
  }
  decision_ = plan_r2r({.dtype = x.dtype(),
                        .shape = x.shape(),
                        .strides = x.strides(),
                        .axes = options.axes,
                        .kinds = options.kinds,
                        .norm = options.norm,
                        .orthogonalize = options.orthogonalize,
                        .inplace = options.inplace,
                        .all_axes_by_default = all_axes_by_default,
                        .axes_option = axes_option},
                       who);
  check_alignment(x.data(), x.dtype().alignment(), "operand", who);
  operand_signature_ = OperandSignature::of(x);
  operand_signature_.alignment = static_cast<std::uint32_t>(x.dtype().alignment());
  out_signature_ =
      OperandSignature::result(decision_.dtype, decision_.shape, decision_.out_strides, x.on_host(), x.device().index(),
                               static_cast<std::uint32_t>(decision_.dtype.alignment()));
  if (!target_.cuda) check_work_area_unused(options.work_area_buffer, who, "CPU execution");
  route_ = make_r2r_route({route_context(), decision_, who}, options, x);
  state_.set_operand(true);
}

RealTransformImpl::~RealTransformImpl() {
  free();
}

void RealTransformImpl::plan(std::optional<StreamRef> stream) {
  plan_phase([&](EventList& pending_after) { route_->plan(stream, pending_after); });
}

Tensor RealTransformImpl::execute(const RealTransformExecuteOptions& options) {
  require_runnable("execute");
  check_enum_range(options.direction, Direction::inverse, "RealTransform.execute", "direction", "Direction");
  const TensorRef* out = checked_out(options.out, decision_.inplace, "RealTransform.execute");
  return execute_validated(options.direction, options.stream, options.after, out, options.release_workspace);
}

Tensor RealTransformImpl::execute_validated(Direction direction, const std::optional<StreamRef>& stream,
                                            const EventList& after, const TensorRef* out, bool release_workspace) try {
  return route_->execute({route_call(stream, after, out, release_workspace), direction});
} catch (const LibraryError& error) {
  rethrow_with_context(error, "RealTransform.execute", [this] { return error_context(); });
}

void RealTransformImpl::reset_operand(TensorRef operand, std::optional<StreamRef> stream) try {
  replace_operand(std::move(operand), decision_.inplace ? "RealTransform.reset_operand (inplace)" : nullptr,
                  [&] { route_->order_new_operand(stream); });
} catch (const LibraryError& error) {
  rethrow_with_context(error, "RealTransform.reset_operand", [this] { return error_context(); });
}

void RealTransformImpl::free() noexcept {
  if (state_.freed()) return;
  route_->free();
  operand_ = TensorRef{};
  state_.set_freed();
}

std::string RealTransformImpl::describe() const {
  const R2RDecision& d = decision_;
  return fmt::format("RealTransform [{}] {} axes [{}] shape [{}], norm {}, orthogonalize {}{}, {}, workspace {} bytes",
                     kinds_text(d.kinds), d.dtype.name(), fmt::join(d.axes, ", "), fmt::join(d.shape.span(), ", "),
                     to_string(d.norm), d.orthogonalize, d.inplace ? ", in place" : "", route_->execution(),
                     workspace_size());
}

std::string RealTransformImpl::error_context() const {
  const R2RDecision& d = decision_;
  return fmt::format("real-to-real [{}] {}, shape [{}], axes [{}], on {}", kinds_text(d.kinds), d.dtype.name(),
                     fmt::join(d.shape.span(), ", "), fmt::join(d.axes, ", "), route_->location());
}

}  // namespace cuplan::detail
