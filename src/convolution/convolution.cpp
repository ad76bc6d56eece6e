// SPDX-License-Identifier: Apache-2.0
// The class form Convolution (a thin, move-only handle over ConvolutionImpl), the function form fftconvolve (a
// cached ConvolutionImpl per plan key) and the enum names.

#include "cuplan/convolution.hpp"

#include <fmt/format.h>

#include <utility>

#include "base/overlap.hpp"
#include "convolution/convolution_impl.hpp"
#include "cuplan/enum_name.hpp"
#include "cuplan/errors.hpp"
#include "plan/handle.hpp"
#include "plan/planning/planned_call.hpp"
#include "plan/work_area.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
namespace {

constexpr const char* who = "Convolution.";

// Everything that defines a ConvolutionImpl: operand and kernel views, the options that shape the plan, the
// execution target and, for host operands run on CUDA, the current device.
detail::PlanKey make_key(const TensorView& x, const TensorView& kernel, const ConvolutionOptions& o) {
  detail::PlanKey key(detail::PlanKind::convolution);
  key.add(detail::OperandSignature::of(x));
  key.add(detail::OperandSignature::of(kernel));
  key.add(static_cast<std::int64_t>(o.axes.size()));
  for (int a : o.axes) key.add(a);
  key.add(o.mode).add(o.route).add(o.blocking).add(o.execution.kind()).add(o.planning);
  key.add(o.execution.device()).add(o.execution.threads());
  key.add_host_execution_device(x, o.execution);
  key.add_work_area(o.work_area, o.work_area_buffer);
  return key;
}

Tensor run(TensorRef&& x, TensorRef&& kernel, ConvolutionOptions options, const TensorRef* out) {
  // Every call, before the plan key: a hit must reject what a miss rejects.
  detail::require_defined(x, "fftconvolve", "x");
  detail::require_defined(kernel, "fftconvolve", "kernel");
  if (out != nullptr) detail::require_defined(*out, "fftconvolve", "out");
  detail::validate_convolution_options(options, "fftconvolve");
  options.work_area = detail::function_form_work_area(options.work_area);
  if (out != nullptr) {
    detail::check_writable(out->view(), "out", "fftconvolve");
    // As every operation's out stays apart from every input of its call (the operand: at execute, below).
    detail::check_no_overlap(out->view(), "out", kernel.view(), "kernel", "fftconvolve");
  }
  // Up front as well as in the runner: on a cache hit as on a miss, before anything is enqueued.
  const std::pair<const TensorRef*, const char*> operands[] = {{&x, "operand"}, {&kernel, "kernel"}, {out, "out"}};
  for (const auto& [operand, name] : operands)
    if (operand != nullptr)
      detail::check_work_area_apart(options.work_area, options.work_area_buffer, operand->view(), name, "fftconvolve");
  // `out` is not in the key: checked on a hit and a miss alike.
  const auto check_out = [&](const detail::ConvolutionImpl& impl) {
    if (out != nullptr && !impl.out_signature().matches(out->view())) {
      detail::check_no_self_overlap(out->view(), "out", "fftconvolve");
      impl.out_signature().require_match(out->view(), "fftconvolve", nullptr, "out");
    }
  };
  // A miss plans at the call in either planning mode (plan/planning/planned_call.hpp).
  return detail::run_cached_on_callers_thread<detail::ConvolutionImpl>(
      make_key(x.view(), kernel.view(), options), "fftconvolve",
      [&] { return std::make_unique<detail::ConvolutionImpl>(x, kernel, options); },
      [&](detail::ConvolutionImpl& impl) { impl.plan(options.stream); },
      [&](detail::ConvolutionImpl& impl) {
        impl.adopt_operand(std::move(x));
        impl.reset_kernel(std::move(kernel), options.stream, options.after);  // this call's kernel: its spectrum
      },
      [&](detail::ConvolutionImpl& impl) {
        check_out(impl);
        return impl.execute_validated(options.stream, options.after, out, false);
      });
}

}  // namespace

Convolution::Convolution(TensorRef operand, TensorRef kernel, ConvolutionOptions options)
    : impl_(std::make_unique<detail::ConvolutionImpl>(std::move(operand), std::move(kernel), options)) {}
CUPLAN_OPERATION_HANDLE(Convolution, ConvolutionExecuteOptions, geometry, out_shape, out_dtype, out_strides)

void Convolution::reset_kernel(TensorRef kernel, std::optional<StreamRef> stream) {
  detail::held(impl_, who, "reset_kernel").reset_kernel(std::move(kernel), stream);
}
std::string_view Convolution::state() const noexcept {
  return detail::lifecycle_state(impl_);
}
std::size_t Convolution::work_area_size() const {
  return detail::live(impl_, who, "work_area_size").work_area_size();
}
ConvolutionMode Convolution::mode() const {
  return detail::live(impl_, who, "mode").geometry().mode;
}
ConvolutionRoute Convolution::route() const {
  return detail::live(impl_, who, "route").route();
}
std::vector<std::int64_t> Convolution::fft_lengths() const {
  const detail::ConvolutionGeometry& g = detail::live(impl_, who, "fft_lengths").geometry();
  std::vector<std::int64_t> lengths;
  for (int axis : g.axes) {
    std::int64_t length = 1;  // an axis where the kernel has length 1 is not transformed
    for (int i = 0; i < g.rank; ++i)
      if (g.conv_axes[static_cast<std::size_t>(i)] == axis) length = g.fft_length[i];
    lengths.push_back(length);
  }
  return lengths;
}

std::size_t estimate_work_area_size(TensorRef x, TensorRef kernel, const ConvolutionOptions& options) {
  // The class form's construction (its checks and geometry, no GPU work), then cuFFT's sizes for its plans.
  return detail::ConvolutionImpl(std::move(x), std::move(kernel), options).estimate_work_area_size();
}

Tensor fftconvolve(TensorRef x, TensorRef kernel, ConvolutionOptions options) {
  return run(std::move(x), std::move(kernel), std::move(options), nullptr);
}
void fftconvolve(TensorRef x, TensorRef kernel, TensorRef out, ConvolutionOptions options) {
  run(std::move(x), std::move(kernel), std::move(options), &out);
}

std::string_view to_string(ConvolutionMode mode) {
  return detail::enum_name<ConvolutionMode::circular>(mode, {"full", "same", "valid", "circular"});
}

std::string_view to_string(ConvolutionRoute route) {
  return detail::enum_name<ConvolutionRoute::separate>(route, {"automatic", "fused", "separate"});
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan

namespace cuplan::detail {

Tensor ConvolutionRunner::make_result(const ConvolutionCall& call, Device device,
                                      const std::optional<StreamRef>& stream) const {
  const ConvolutionGeometry& g = context_.geometry;
  if (call.out != nullptr) return call.out->as_tensor();
  return Tensor::empty_strided(g.out_shape, g.out_strides, g.out_dtype, device, stream);
}

}  // namespace cuplan::detail
