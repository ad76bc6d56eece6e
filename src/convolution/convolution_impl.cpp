// SPDX-License-Identifier: Apache-2.0
// ConvolutionImpl: construction (geometry and runner), the lifecycle, and execute's checks.

#include "convolution/convolution_impl.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error_context.hpp"
#include "base/overlap.hpp"
#include "cuplan/errors.hpp"
#include "plan/option_checks.hpp"
#include "plan/work_area.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan::detail {
namespace {

std::string str(const Dims& dims) {
  return fmt::format("[{}]", fmt::join(dims.span(), ", "));
}

}  // namespace

void validate_convolution_options(const ConvolutionOptions& o, const char* op) {
  check_enum_range(o.mode, ConvolutionMode::circular, op, "mode", "ConvolutionMode");
  check_enum_range(o.route, cuplan::ConvolutionRoute::separate, op, "route", "ConvolutionRoute");
  check_operation_options(o, op, "convolve");
}

ConvolutionImpl::ConvolutionImpl(TensorRef operand, TensorRef kernel, const ConvolutionOptions& options)
    : PlannedOperation("Convolution", std::move(operand), options.stream, options.after), kernel_(std::move(kernel)) {
  require_defined(kernel_, "Convolution", "kernel");
  validate_convolution_options(options, "Convolution");
  const TensorView& x = operand_.view();
  const TensorView& k = kernel_.view();
  if (x.data() == nullptr)
    throw InvalidArgument("Convolution: operand: expected a tensor with data, got an empty operand (null pointer)");
  if (k.data() == nullptr)
    throw InvalidArgument("Convolution: kernel: expected a tensor with data, got an empty kernel (null pointer)");
  // The construction's operand and kernel, before anything else (execute and reset_kernel check later ones).
  check_work_area_apart(options.work_area, options.work_area_buffer, x, "operand", "Convolution");
  check_work_area_apart(options.work_area, options.work_area_buffer, k, "kernel", "Convolution");
  const TensorView views[] = {x, k};
  static constexpr const char* kNames[] = {"operand", "kernel"};
  target_ = resolve_execution(options.execution, options.blocking, views, kNames, "Convolution");

  ConvolutionRequest request;
  request.in_dtype = x.dtype();
  request.kernel_dtype = k.dtype();
  request.in_shape = x.shape();
  request.kernel_shape = k.shape();
  request.axes = options.axes;
  request.mode = options.mode;
  const ConvolutionRunnerContext context{route_context(), geometry_};
  if (target_.cuda) {
    DeviceConvolutionChoice choice = choose_device_convolution(request, x, options.route, target_.device);
    geometry_ = std::move(choice.geometry);
    not_fused_ = choice.not_fused;
    runner_ = make_device_convolution_runner(context, options, choice, x);
  } else {
    check_work_area_unused(options.work_area_buffer, "Convolution", "CPU execution");
    geometry_ = plan_convolution(request);
    if (options.route == cuplan::ConvolutionRoute::fused)
      throw NotSupported(
          "Convolution: route: the fused route needs CUDA execution; CPU execution (FFTW) runs separate passes");
    not_fused_ = "CPU execution";
    runner_ = make_cpu_convolution_runner(context, options, x);
  }
  check_alignment(x.data(), x.dtype().alignment(), "operand", "Convolution");
  check_alignment(k.data(), k.dtype().alignment(), "kernel", "Convolution");
  operand_signature_ = OperandSignature::of(x);
  operand_signature_.alignment = static_cast<std::uint32_t>(x.dtype().alignment());
  kernel_signature_ = OperandSignature::of(k);
  kernel_signature_.alignment = static_cast<std::uint32_t>(k.dtype().alignment());
  out_signature_ =
      OperandSignature::result(geometry_.out_dtype, geometry_.out_shape, geometry_.out_strides, x.on_host(),
                               x.device().index(), static_cast<std::uint32_t>(geometry_.out_dtype.alignment()));
  state_.set_operand(true);
}

ConvolutionImpl::~ConvolutionImpl() {
  free();
}

void ConvolutionImpl::plan(std::optional<StreamRef> stream) {
  plan_phase([&](EventList& pending_after) {
    // The first plan computes the kernel's spectrum and drops the kernel; a later plan keeps the spectrum.
    runner_->plan(stream, pending_after, kernel_held_ ? &kernel_ : nullptr);
    kernel_ = TensorRef{};
    kernel_held_ = false;
  });
}

Tensor ConvolutionImpl::execute(const ConvolutionExecuteOptions& options) {
  require_runnable("execute");
  const TensorRef* out = checked_out(options.out, false, "Convolution.execute");
  return execute_validated(options.stream, options.after, out, options.release_workspace);
}

Tensor ConvolutionImpl::execute_validated(const std::optional<StreamRef>& stream, const EventList& after,
                                          const TensorRef* out, bool release_workspace) try {
  return runner_->execute(route_call(stream, after, out, release_workspace));
} catch (const LibraryError& error) {
  rethrow_with_context(error, "Convolution.execute", [this] { return error_context(); });
}

void ConvolutionImpl::reset_operand(TensorRef operand, std::optional<StreamRef> stream) try {
  replace_operand(std::move(operand), nullptr, [&] { runner_->order_new_operand(stream); });
} catch (const LibraryError& error) {
  rethrow_with_context(error, "Convolution.reset_operand", [this] { return error_context(); });
}

void ConvolutionImpl::reset_kernel(TensorRef kernel, std::optional<StreamRef> stream, const EventList& after) try {
  state_.require_planned("reset_kernel");
  require_defined(kernel, "Convolution", "reset_kernel", "kernel");
  kernel_signature_.require_match(kernel.view(), "Convolution", "reset_kernel", "kernel");
  runner_->set_kernel(stream, after, kernel);
  // The spectrum holds the kernel now; an owning kernel Tensor was recorded on the phase's stream.
} catch (const LibraryError& error) {
  rethrow_with_context(error, "Convolution.reset_kernel", [this] { return error_context(); });
}

void ConvolutionImpl::adopt_kernel(TensorRef&& kernel) {
  if (kernel_held_) kernel_ = std::move(kernel);
}

void ConvolutionImpl::free() noexcept {
  if (state_.freed()) return;
  if (runner_) runner_->free();
  operand_ = TensorRef{};
  kernel_ = TensorRef{};
  state_.set_freed();
}

std::size_t ConvolutionImpl::estimate_work_area_size() const try {
  state_.require_alive("estimate_work_area_size");
  return runner_->estimate_work_area_size();
} catch (const LibraryError& error) {
  rethrow_with_context(error, "estimate_work_area_size", [this] { return error_context(); });
}

std::string ConvolutionImpl::describe() const {
  const ConvolutionGeometry& g = geometry_;
  std::string route(to_string(runner_->kind()));
  if (runner_->kind() == cuplan::ConvolutionRoute::separate && target_.cuda && !not_fused_.empty())
    route += fmt::format(" (not fused: {})", not_fused_);
  return fmt::format(
      "Convolution {} {} * {} -> {} axes [{}] shape {} * {} -> {}, FFT lengths [{}], route {}, {}, "
      "workspace {} bytes",
      to_string(g.mode), g.in_dtype.name(), g.kernel_dtype.name(), g.out_dtype.name(), fmt::join(g.axes, ", "),
      str(g.in_shape), str(g.kernel_shape), str(g.out_shape),
      fmt::join(std::span(g.fft_length, static_cast<std::size_t>(g.rank)), ", "), route, runner_->execution(),
      workspace_size());
}

std::string ConvolutionImpl::error_context() const {
  const ConvolutionGeometry& g = geometry_;
  return fmt::format("convolution {} {} * {}, shape {} * {} -> {}, axes [{}], on {}", to_string(g.mode),
                     g.in_dtype.name(), g.kernel_dtype.name(), str(g.in_shape), str(g.kernel_shape), str(g.out_shape),
                     fmt::join(g.axes, ", "), runner_->location());
}

}  // namespace cuplan::detail
