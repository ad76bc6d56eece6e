// SPDX-License-Identifier: Apache-2.0
// The class form RealTransform (a move-only handle over RealTransformImpl), the function forms dct ... idstn over
// the shared plan cache, and the enums' names.

#include <fmt/format.h>

#include "base/overlap.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "cuplan/r2r.hpp"
#include "plan/handle.hpp"
#include "plan/planning/planned_call.hpp"
#include "r2r/real_transform_impl.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
namespace {

constexpr const char* who = "RealTransform.";

}  // namespace

RealTransform::RealTransform(TensorRef operand, RealTransformOptions options)
    : impl_(std::make_unique<detail::RealTransformImpl>(std::move(operand), options, "RealTransform")) {}
RealTransform::RealTransform(RealTransform&&) noexcept = default;
RealTransform& RealTransform::operator=(RealTransform&& other) noexcept {
  if (this != &other) {
    free();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
RealTransform::~RealTransform() {
  free();
}

void RealTransform::plan(std::optional<StreamRef> stream) {
  detail::live(impl_, who, "plan").plan(stream);
}
Tensor RealTransform::execute(RealTransformExecuteOptions options) {
  return detail::held(impl_, who, "execute").execute(options);
}
void RealTransform::reset_operand(TensorRef operand, std::optional<StreamRef> stream) {
  detail::live(impl_, who, "reset_operand").reset_operand(std::move(operand), stream);
}
void RealTransform::release_operand() {
  detail::live(impl_, who, "release_operand").release_operand();
}
void RealTransform::free() noexcept {
  if (impl_) impl_->free();
}

const std::vector<int>& RealTransform::axes() const {
  return detail::live(impl_, who, "axes").decision().axes;
}
const std::vector<R2RKind>& RealTransform::kinds() const {
  return detail::live(impl_, who, "kinds").decision().kinds;
}
Shape RealTransform::result_shape() const {
  return detail::live(impl_, who, "result_shape").decision().shape;
}
DType RealTransform::result_dtype() const {
  return detail::live(impl_, who, "result_dtype").decision().dtype;
}
Strides RealTransform::result_strides() const {
  return detail::live(impl_, who, "result_strides").decision().out_strides;
}
bool RealTransform::uses_cuda() const {
  return detail::live(impl_, who, "uses_cuda").target().cuda;
}
std::size_t RealTransform::workspace_size() const {
  return detail::live(impl_, who, "workspace_size").workspace_size();
}
std::string RealTransform::describe() const {
  return detail::live(impl_, who, "describe").describe();
}

std::string_view RealTransform::state() const noexcept {
  if (!impl_) return "moved-from";
  return impl_->freed() ? "freed" : "live";
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
      .add(o.planning);
  key.add_host_execution_device(x, o.execution);
  key.add_work_area(o.work_area, o.work_area_buffer);
  if (out != nullptr) key.add(detail::OperandSignature::of(out->view()));
  return key;
}

Tensor run(TensorRef&& x, const RealTransformOptions& options, bool all_axes, Direction direction, const TensorRef* out,
           const char* name) {
  // Every call, before the key: a hit rejects what a miss rejects.
  detail::validate_r2r_options(options, name);
  if (out != nullptr) {
    if (options.inplace)
      throw InvalidArgument(fmt::format("{}: out: an output cannot be given for an in-place transform", name));
    detail::check_writable(out->view(), "out", name);
  }
  if (options.inplace) detail::check_writable(x.view(), "operand", name);
  // `out` is not in the key: checked on a hit and a miss alike.
  const auto check_out = [&](const detail::RealTransformImpl& impl) {
    if (out != nullptr && !impl.out_signature().matches(out->view())) {
      detail::check_no_self_overlap(out->view(), "out", name);
      impl.out_signature().require_match(out->view(), name, nullptr, "out");
    }
  };
  const int operand_device = x.view().on_host() ? -1 : x.view().device().index();
  return detail::run_cached_planning<detail::RealTransformImpl>(
      make_key(x.view(), options, all_axes, out),
      {options.planning_mode, options.stream, options.after, name, "RealTransform"}, operand_device,
      [&] { return std::make_unique<detail::RealTransformImpl>(x, options, name, all_axes); },
      [&](detail::RealTransformImpl& impl) { impl.plan(options.stream); },
      [](detail::RealTransformImpl& impl, StreamRef s) { impl.plan(s); },
      [&](const detail::RealTransformImpl& impl) { return detail::gateable_device(impl.target(), options.inplace); },
      [&](detail::RealTransformImpl& impl, StreamRef caller) {
        check_out(impl);
        const detail::R2RDecision& d = impl.decision();
        return detail::operand_work<detail::RealTransformImpl>(
            x, detail::background_result(out, d.shape, d.out_strides, d.dtype, impl.target().device, caller),
            [direction](detail::RealTransformImpl& planned, StreamRef s, const TensorView& written) {
              const TensorRef written_ref(written);  // borrowed: the call ordered it on its stream
              (void)planned.execute_validated(direction, s, EventList{}, &written_ref, false);
            });
      },
      [&](detail::RealTransformImpl& impl) { impl.adopt_operand(std::move(x)); },
      [&](detail::RealTransformImpl& impl) {
        check_out(impl);
        return impl.execute_validated(direction, options.stream, options.after, out, false);
      });
}

template <class Options>
RealTransformOptions common(const Options& o, R2RKind kind) {
  RealTransformOptions r;
  r.kinds = {kind};
  r.norm = o.norm;
  r.orthogonalize = o.orthogonalize;
  r.inplace = o.inplace;
  r.execution = o.execution;
  r.blocking = o.blocking;
  r.stream = o.stream;
  r.after = o.after;
  r.planning = o.planning;
  r.planning_mode = o.planning_mode;
  r.work_area = WorkAreaPolicy::shared;  // a cached plan uses its stream's area
  return r;
}

Tensor one_axis(TensorRef&& x, const R2ROptions& o, bool sine, Direction direction, const TensorRef* out,
                const char* name) {
  RealTransformOptions r = common(o, detail::kind_of_type(o.type, sine, name));
  r.axes = {o.axis};
  return run(std::move(x), r, false, direction, out, name);
}

Tensor several_axes(TensorRef&& x, const R2RNOptions& o, bool sine, Direction direction, const TensorRef* out,
                    const char* name) {
  RealTransformOptions r = common(o, detail::kind_of_type(o.type, sine, name));
  r.axes = o.axes;
  return run(std::move(x), r, true, direction, out, name);
}

}  // namespace

Tensor dct(TensorRef x, R2ROptions o) {
  return one_axis(std::move(x), o, false, Direction::forward, nullptr, "dct");
}
Tensor idct(TensorRef x, R2ROptions o) {
  return one_axis(std::move(x), o, false, Direction::inverse, nullptr, "idct");
}
Tensor dst(TensorRef x, R2ROptions o) {
  return one_axis(std::move(x), o, true, Direction::forward, nullptr, "dst");
}
Tensor idst(TensorRef x, R2ROptions o) {
  return one_axis(std::move(x), o, true, Direction::inverse, nullptr, "idst");
}
Tensor dctn(TensorRef x, R2RNOptions o) {
  return several_axes(std::move(x), o, false, Direction::forward, nullptr, "dctn");
}
Tensor idctn(TensorRef x, R2RNOptions o) {
  return several_axes(std::move(x), o, false, Direction::inverse, nullptr, "idctn");
}
Tensor dstn(TensorRef x, R2RNOptions o) {
  return several_axes(std::move(x), o, true, Direction::forward, nullptr, "dstn");
}
Tensor idstn(TensorRef x, R2RNOptions o) {
  return several_axes(std::move(x), o, true, Direction::inverse, nullptr, "idstn");
}
void dct(TensorRef x, TensorRef out, R2ROptions o) {
  one_axis(std::move(x), o, false, Direction::forward, &out, "dct");
}
void idct(TensorRef x, TensorRef out, R2ROptions o) {
  one_axis(std::move(x), o, false, Direction::inverse, &out, "idct");
}
void dst(TensorRef x, TensorRef out, R2ROptions o) {
  one_axis(std::move(x), o, true, Direction::forward, &out, "dst");
}
void idst(TensorRef x, TensorRef out, R2ROptions o) {
  one_axis(std::move(x), o, true, Direction::inverse, &out, "idst");
}
void dctn(TensorRef x, TensorRef out, R2RNOptions o) {
  several_axes(std::move(x), o, false, Direction::forward, &out, "dctn");
}
void idctn(TensorRef x, TensorRef out, R2RNOptions o) {
  several_axes(std::move(x), o, false, Direction::inverse, &out, "idctn");
}
void dstn(TensorRef x, TensorRef out, R2RNOptions o) {
  several_axes(std::move(x), o, true, Direction::forward, &out, "dstn");
}
void idstn(TensorRef x, TensorRef out, R2RNOptions o) {
  several_axes(std::move(x), o, true, Direction::inverse, &out, "idstn");
}

std::string_view to_string(R2RKind kind) {
  static constexpr std::string_view names[] = {"dct1", "dct2", "dct3", "dct4", "dst1", "dst2", "dst3", "dst4"};
  const auto i = static_cast<unsigned>(kind);
  return i < 8 ? names[i] : "?";
}

std::string_view to_string(R2RNorm norm) {
  switch (norm) {
    case R2RNorm::backward:
      return "backward";
    case R2RNorm::ortho:
      return "ortho";
    case R2RNorm::forward:
      return "forward";
  }
  return "?";
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
