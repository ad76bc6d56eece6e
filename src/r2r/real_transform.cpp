// SPDX-License-Identifier: Apache-2.0
// The class form RealTransform (a move-only handle over RealTransformImpl), the function forms dct ... idstn over
// the shared plan cache, and the enums' names.

#include <fmt/format.h>

#include "base/overlap.hpp"
#include "cuplan/enum_name.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "cuplan/r2r.hpp"
#include "plan/handle.hpp"
#include "plan/planning/planned_call.hpp"
#include "plan/work_area.hpp"
#include "r2r/real_transform_impl.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
RealTransform::RealTransform(TensorRef operand, RealTransformOptions options)
    : impl_(std::make_unique<detail::RealTransformImpl>(std::move(operand), options, "RealTransform")) {}
CUPLAN_OPERATION_HANDLE(RealTransform, RealTransformExecuteOptions, decision, shape, dtype, out_strides)

const std::vector<R2RKind>& RealTransform::kinds() const {
  return detail::live(impl_, "RealTransform.", "kinds").decision().kinds;
}
std::string_view RealTransform::state() const noexcept {
  return detail::lifecycle_state(impl_);
}

namespace {

// Everything that defines a RealTransformImpl of a function form (as for fft's key).
detail::PlanKey make_key(const TensorView& x, const RealTransformOptions& o, bool all_axes, const TensorRef* out) {
  detail::PlanKey key(detail::PlanKind::r2r);
  key.add(detail::OperandSignature::of(x));
  key.add(o.axes.size());
  for (int a : o.axes) key.add(a);
  key.add(o.kinds.size());
  for (R2RKind k : o.kinds) key.add(k);
  key.add(o.norm).add(o.orthogonalize ? (*o.orthogonalize ? 2 : 1) : 0).add(o.inplace).add(all_axes);
  key.add(o.blocking)
      .add(o.graph_replay)
      .add(o.execution.kind())
      .add(o.execution.device())
      .add(o.execution.threads())
      .add(o.planning)
      .add(o.route);
  key.add_host_execution_device(x, o.execution);
  key.add_work_area(o.work_area, o.work_area_buffer);
  if (out != nullptr) key.add(detail::OperandSignature::of(out->view()));
  return key;
}

Tensor run(TensorRef&& x, RealTransformOptions options, bool all_axes, Direction direction, const TensorRef* out,
           const char* name, const char* axes_option) {
  // Every call, before the key: a hit rejects what a miss rejects.
  detail::require_defined(x, name, "x");
  if (out != nullptr) detail::require_defined(*out, name, "out");
  detail::validate_r2r_options(options, name);
  options.work_area = detail::function_form_work_area(options.work_area);
  if (out != nullptr) {
    if (options.inplace)
      throw InvalidArgument(fmt::format("{}: out: an output cannot be given for an in-place transform", name));
    detail::check_writable(out->view(), "out", name);
  }
  if (options.inplace) detail::check_writable(x.view(), "operand", name);
  // Up front as well as in the route's execute: on a cache hit as on a miss, before anything is enqueued.
  detail::check_work_area_apart(options.work_area, options.work_area_buffer, x.view(), "operand", name);
  if (out != nullptr)
    detail::check_work_area_apart(options.work_area, options.work_area_buffer, out->view(), "out", name);
  // `out` is not in the key: checked on a hit and a miss alike.
  const auto check_out = [&](const detail::RealTransformImpl& impl) {
    if (out != nullptr && !impl.out_signature().matches(out->view())) {
      detail::check_no_self_overlap(out->view(), "out", name);
      impl.out_signature().require_match(out->view(), name, nullptr, "out");
    }
  };
  // A miss plans at the call in either planning mode (plan/planning/planned_call.hpp).
  return detail::run_cached_on_callers_thread<detail::RealTransformImpl>(
      make_key(x.view(), options, all_axes, out), name,
      [&] { return std::make_unique<detail::RealTransformImpl>(x, options, name, all_axes, axes_option); },
      [&](detail::RealTransformImpl& impl) { impl.plan(options.stream); },
      [&](detail::RealTransformImpl& impl) { impl.adopt_operand(std::move(x)); },
      [&](detail::RealTransformImpl& impl) {
        check_out(impl);
        return impl.execute_validated(direction, options.stream, options.after, out, false);
      });
}

// The class form's options for a function form's call: one kind on the given axes, the rest as the call set it.
template <class Options>
RealTransformOptions transform_options(const Options& o, std::vector<int> axes, R2RKind kind) {
  return {.axes = std::move(axes),
          .kinds = {kind},
          .norm = o.norm,
          .orthogonalize = o.orthogonalize,
          .inplace = o.inplace,
          .execution = o.execution,
          .blocking = o.blocking,
          .stream = o.stream,
          .after = o.after,
          .planning = o.planning,
          .planning_mode = o.planning_mode,
          .work_area = o.work_area,
          .work_area_buffer = o.work_area_buffer,
          .route = o.route};
}

Tensor one_axis(TensorRef&& x, const R2ROptions& o, bool sine, Direction direction, const TensorRef* out,
                const char* name) {
  return run(std::move(x), transform_options(o, {o.axis}, detail::kind_of_type(o.type, sine, name)), false, direction,
             out, name, "axis");
}

Tensor several_axes(TensorRef&& x, const R2RNOptions& o, bool sine, Direction direction, const TensorRef* out,
                    const char* name) {
  return run(std::move(x), transform_options(o, o.axes, detail::kind_of_type(o.type, sine, name)), true, direction, out,
             name, "axes");
}

}  // namespace

// A forward and inverse pair of function forms (dct and idct, ...), each returning a new Tensor or writing `out`.
#define CUPLAN_R2R_FUNCTION_PAIR(forward_name, inverse_name, Options, entry, sine)   \
  Tensor forward_name(TensorRef x, Options o) {                                      \
    return entry(std::move(x), o, sine, Direction::forward, nullptr, #forward_name); \
  }                                                                                  \
  Tensor inverse_name(TensorRef x, Options o) {                                      \
    return entry(std::move(x), o, sine, Direction::inverse, nullptr, #inverse_name); \
  }                                                                                  \
  void forward_name(TensorRef x, TensorRef out, Options o) {                         \
    entry(std::move(x), o, sine, Direction::forward, &out, #forward_name);           \
  }                                                                                  \
  void inverse_name(TensorRef x, TensorRef out, Options o) {                         \
    entry(std::move(x), o, sine, Direction::inverse, &out, #inverse_name);           \
  }

CUPLAN_R2R_FUNCTION_PAIR(dct, idct, R2ROptions, one_axis, false)
CUPLAN_R2R_FUNCTION_PAIR(dst, idst, R2ROptions, one_axis, true)
CUPLAN_R2R_FUNCTION_PAIR(dctn, idctn, R2RNOptions, several_axes, false)
CUPLAN_R2R_FUNCTION_PAIR(dstn, idstn, R2RNOptions, several_axes, true)
#undef CUPLAN_R2R_FUNCTION_PAIR

std::string_view to_string(R2RKind kind) {
  return detail::enum_name<R2RKind::dst4>(kind, {"dct1", "dct2", "dct3", "dct4", "dst1", "dst2", "dst3", "dst4"});
}

std::string_view to_string(R2RNorm norm) {
  return detail::enum_name<R2RNorm::forward>(norm, {"backward", "ortho", "forward"});
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
