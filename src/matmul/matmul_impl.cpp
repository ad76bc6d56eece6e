// SPDX-License-Identifier: Apache-2.0
// MatmulImpl: construction (the planned problem and the route), the lifecycle shared with the function form's
// cached plans, and execute's checks. The route runs each phase (matmul_route.hpp).
#include "matmul/matmul_impl.hpp"

#include <fmt/format.h>

#include "base/error_context.hpp"
#include "base/geometry.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "matmul/matmul_validate.hpp"
#include "plan/work_area.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan::detail {
namespace {

// In the order of MatmulOperand (and of the slots).
constexpr const char* slot_names[] = {"a", "b", "c", "bias", "epilog_aux"};
constexpr std::optional<TensorRef> MatmulOperands::*slot_members[] = {
    &MatmulOperands::a, &MatmulOperands::b, &MatmulOperands::c, &MatmulOperands::bias, &MatmulOperands::epilog_aux};

template <class Operands>  // MatmulOperands, const or not
auto* slot_of(Operands& operands, int slot) {
  return &(operands.*slot_members[slot]);
}

}  // namespace

using enum mm::Slot;

MatmulImpl::MatmulImpl(TensorRef a, TensorRef b, MatmulOptions options, const char* who)
    : who_(who), options_(std::move(options)), state_("Matmul"), streams_(options_.stream, who) {
  mm::require_defined_operands(a, b, options_, who_);
  mm::validate_matmul_options(options_, who_);
  operands_[slot_a].ref = std::move(a);
  operands_[slot_b].ref = std::move(b);
  operands_[slot_c].ref = options_.c;
  operands_[slot_bias].ref = options_.bias;
  operands_[slot_aux].ref = options_.epilog_aux;
  std::vector<TensorView> views;
  std::vector<const char*> names;
  for (int i = 0; i < slot_count; ++i) {
    if (!operands_[i].ref) continue;
    const TensorView& v = operands_[i].ref->view();
    // The construction's operands, before anything else (execute checks every later one).
    check_work_area_apart(options_.work_area, options_.work_area_buffer, v, slot_names[i], who_);
    check_alignment(v.data(), v.dtype().alignment(), slot_names[i], who_);
    operands_[i].planned = OperandSignature::of(v);
    planned_views_[i] = v;
    views.push_back(v);
    names.push_back(slot_names[i]);
  }
  target_ = resolve_execution(options_.execution, options_.blocking, views, names, who_);
  if (!target_.cuda) check_work_area_unused(options_.work_area_buffer, who_, "CPU execution");
  route_ = make_matmul_route({who_, options_, problem_, operands_, target_, order_, streams_});
  validate_and_plan_problem();
  state_.set_operand(true);
}

MatmulImpl::~MatmulImpl() {
  free();
}

void MatmulImpl::validate_and_plan_problem() {
  mm::ProblemSpec spec;
  spec.a = planned_views_[slot_a];
  spec.b = planned_views_[slot_b];
  if (operands_[slot_c].ref) spec.c = planned_views_[slot_c];
  if (operands_[slot_bias].ref) spec.bias = planned_views_[slot_bias];
  if (operands_[slot_aux].ref) spec.epilog_aux = planned_views_[slot_aux];
  spec.alpha = options_.alpha;
  spec.beta = options_.beta;
  spec.epilog = options_.epilog;
  spec.compute = options_.compute;
  spec.result_dtype = options_.result_dtype;
  spec.conjugate_a = options_.conjugate_a;
  spec.conjugate_b = options_.conjugate_b;
  spec.scale_a = options_.scales.a.given();
  spec.scale_b = options_.scales.b.given();
  spec.scale_c = options_.scales.c.given();
  spec.scale_d = options_.scales.d.given();
  spec.route = route_->traits().request;
  problem_ = route_->adapt(mm::plan_problem(spec, who_));  // NotSupported where the route cannot run it
  for (const ScaleFactor* s : {&options_.scales.a, &options_.scales.b}) {
    if (!s->tensor) continue;
    const TensorView& t = s->tensor->view();
    if (!(t.dtype() == f32) || t.numel() != 1 || t.on_host())
      throw InvalidArgument(fmt::format("{}: a scale tensor must be one f32 element in device memory; got {} {} on {}",
                                        who_, t.dtype().name(), mm::shape_string(t.shape()),
                                        t.on_host() ? "the host" : "the device"));
  }
  plan_output_signature();
}

void MatmulImpl::plan_output_signature() {
  const mm::Problem& p = problem_;
  // D lives where the operands live, whatever executes (the blocking rule; FFT does the same).
  const MatmulRouteTraits traits = route_->traits();
  const auto alignment =
      traits.result_alignment != 0 ? traits.result_alignment : static_cast<std::uint32_t>(p.result_dtype.alignment());
  out_signature_ = OperandSignature::result(p.result_dtype, p.result_shape, p.result_strides, target_.host_operands,
                                            traits.result_device, alignment);
  out_strides_note_ = mm::orientation_note(p);
}

void MatmulImpl::require_ready(const char* method) const {
  state_.require_planned(method);  // planned and operand both check alive first
  state_.require_operand(method);
}

void MatmulImpl::set_scalars(std::complex<double> alpha, std::complex<double> beta) {
  if (!problem_.a_dtype.is_complex() && (alpha.imag() != 0 || beta.imag() != 0))
    throw InvalidArgument(
        fmt::format("{}: alpha and beta must be real for {} operands", who_, problem_.a_dtype.name()));
  mm::check_beta_needs_c(beta, problem_.has_c, who_);
  options_.alpha = alpha;
  options_.beta = beta;
  route_->scalars_changed(alpha, beta);
}

const char* MatmulImpl::nvtx_name(NvtxPhase phase, const char* range) noexcept {
  // The problem is fixed at construction, so the label never changes: "Matmul 128 x 32 x 64 batch 1 f32".
  return nvtx_.get(phase, range, [this] {
    return fmt::format("{} {} x {} x {} batch {} {}", who_, problem_.m, problem_.n, problem_.k, problem_.batch_count,
                       problem_.a_dtype.name());
  });
}

void MatmulImpl::plan(const MatmulPlanOptions& options) try {
  NvtxRange range(nvtx_name(nvtx_plan, "cuplan::Matmul::plan"));
  state_.require_alive("plan");
  mm::check_preferences(options.preferences, who_);
  require_defined(options.bias, who_, "plan", "bias");
  require_defined(options.epilog_aux, who_, "plan", "epilog_aux");
  if (options.epilog) {
    mm::check_epilog(*options.epilog, who_);
    // The new epilog's inputs obey the construction's rules: in the memory space and on the device of the other
    // operands (device memory needing a GPU), and apart from an external work area. Checked before anything changes.
    std::vector<TensorView> views;
    std::vector<const char*> names;
    for (int i = 0; i < slot_count; ++i) {
      const std::optional<TensorRef>& ref =
          i == slot_bias ? options.bias : (i == slot_aux ? options.epilog_aux : operands_[i].ref);
      if (!ref) continue;
      views.push_back(ref->view());
      names.push_back(slot_names[i]);
      if (i == slot_bias || i == slot_aux)
        check_work_area_apart(options_.work_area, options_.work_area_buffer, views.back(), slot_names[i], who_);
    }
    (void)resolve_execution(options_.execution, options_.blocking, views, names, who_);
    options_.epilog = *options.epilog;
    operands_[slot_bias].ref = options.bias;
    operands_[slot_aux].ref = options.epilog_aux;
    for (int i : {int(slot_bias), int(slot_aux)}) {
      operands_[i].planned.reset();  // an input the new epilog does not take cannot be reset later
      if (!operands_[i].ref) continue;
      const TensorView& v = operands_[i].ref->view();
      check_alignment(v.data(), v.dtype().alignment(), slot_names[i], who_);
      operands_[i].planned = OperandSignature::of(v);
      planned_views_[i] = v;
    }
    validate_and_plan_problem();
  } else if (options.bias || options.epilog_aux) {
    throw InvalidArgument(
        fmt::format("{}.plan: bias / epilog_aux are given with the epilog they belong to; set "
                    "MatmulPlanOptions::epilog too",
                    who_));
  }
  state_.set_planned(false);
  // The first plan also waits for MatmulOptions::after unless the plan options name their own events.
  route_->plan(options, construct_after_pending_ && options.after.empty() ? options_.after : options.after);
  construct_after_pending_ = false;
  state_.set_planned(true);
} catch (const LibraryError& error) {
  rethrow_with_context(error, fmt::format("{}.plan", who_), [this] { return error_context(); });
}

std::string MatmulImpl::error_context() const {
  const mm::Problem& p = problem_;
  const MatmulRouteDescription route = route_->description();
  return fmt::format("M x N x K = {} x {} x {}, batch {}, {} x {} -> {}, epilog {}, D shape {}, on {}", p.m, p.n, p.k,
                     p.batch_count, p.a_dtype.name(), p.b_dtype.name(), p.result_dtype.name(), to_string(p.epilog),
                     mm::shape_string(p.result_shape), route.location);
}

std::size_t MatmulImpl::workspace_size() const noexcept {
  return state_.freed() ? 0 : route_->workspace_size();
}

std::string MatmulImpl::describe() const {
  const mm::Problem& p = problem_;
  const MatmulRouteDescription route = route_->description();
  return fmt::format("{} {} x {} x {} batch {} {} -> {}, epilog {}{}, D {} {}, {}: {}", who_, p.m, p.n, p.k,
                     p.batch_count, p.a_dtype.name(), p.result_dtype.name(), to_string(p.epilog), route.epilog_note,
                     mm::shape_string(p.result_shape), p.swapped ? "row-major" : "column-major", route.execution,
                     route.algorithm);
}

std::vector<AlgorithmInfo> MatmulImpl::algorithms() const {
  state_.require_planned("algorithms");
  return route_->algorithms();
}

void MatmulImpl::autotune(const AutotuneOptions& options) try {
  NvtxRange range(nvtx_name(nvtx_autotune, "cuplan::Matmul::autotune"));
  require_ready("autotune");
  mm::check_autotune_options(options, who_);
  route_->autotune(options);
} catch (const LibraryError& error) {
  rethrow_with_context(error, fmt::format("{}.autotune", who_), [this] { return error_context(); });
}

Tensor MatmulImpl::execute(const MatmulExecuteOptions& options) try {
  NvtxRange range(nvtx_name(nvtx_execute, "cuplan::Matmul::execute"));
  require_ready("execute");
  require_defined(options.out, who_, "execute", "out");
  if (options.out) {
    // Overlap first (an out over an operand usually also misses the planned layout, and the overlap is the error
    // to report), every call: the operands may have changed since the last one.
    const TensorView* inputs[slot_count] = {};
    for (int i = 0; i < slot_count; ++i)
      if (operands_[i].ref) inputs[i] = &operands_[i].ref->view();
    mm::check_output_aliasing(options.out->view(), inputs, who_);
    out_signature_.require_match(options.out->view(), who_, "execute", "out", out_strides_note_.c_str());
  }
  MatmulResult result = route_->execute(options);
  // The epilog's outputs replace the last ones; without them (most products) nothing was and nothing is held.
  if (result.aux.defined() || last_.aux.defined()) last_.aux = std::move(result.aux);
  if (result.bias_gradient.defined() || last_.bias_gradient.defined())
    last_.bias_gradient = std::move(result.bias_gradient);
  return std::move(result.d);
} catch (const LibraryError& error) {
  rethrow_with_context(error, fmt::format("{}.execute", who_), [this] { return error_context(); });
}

void MatmulImpl::reset_operand(MatmulOperand which, TensorRef operand, std::optional<StreamRef> stream) {
  state_.require_alive("reset_operand");  // after free(), every member is a StateError, whatever its arguments
  const auto slot = static_cast<unsigned>(which);
  if (slot >= slot_count)
    throw InvalidArgument(
        fmt::format("{}.reset_operand: which: expected a MatmulOperand (a, b, c, bias, epilog_aux), "
                    "got value {}",
                    who_, slot));
  MatmulOperands operands;
  *slot_of(operands, static_cast<int>(slot)) = std::move(operand);
  replace_operands(operands, stream, "reset_operand");
}

void MatmulImpl::reset_operands(const MatmulOperands& operands, std::optional<StreamRef> stream) {
  replace_operands(operands, stream, "reset_operands");
}

void MatmulImpl::replace_operands(const MatmulOperands& operands, std::optional<StreamRef> stream,
                                  const char* method) try {
  NvtxRange range(nvtx_name(nvtx_reset, "cuplan::Matmul::reset_operand"));
  state_.require_alive(method);
  // Validate everything before changing anything, so a rejected call leaves the object as it was.
  for (int i = 0; i < slot_count; ++i) {
    const std::optional<TensorRef>& given = *slot_of(operands, i);
    if (!given) continue;
    require_defined(*given, who_, method, slot_names[i]);
    if (!operands_[i].planned)
      throw InvalidArgument(
          fmt::format("{}.{}: operand {}: expected one of the planned product's operands, got {}, "
                      "which it was planned without",
                      who_, method, slot_names[i], slot_names[i]));
    operands_[i].planned->require_match(given->view(), who_, method, slot_names[i]);
  }
  route_->order_new_operands(stream, method);
  for (int i = 0; i < slot_count; ++i)
    if (const std::optional<TensorRef>& given = *slot_of(operands, i)) operands_[i].ref = given;
  route_->operands_changed();
  if (operands_[slot_a].ref && operands_[slot_b].ref) state_.set_operand(true);
} catch (const LibraryError& error) {
  rethrow_with_context(error, fmt::format("{}.{}", who_, method), [this] { return error_context(); });
}

void MatmulImpl::adopt_operands(MatmulOperands&& operands) noexcept {
  for (int i = 0; i < slot_count; ++i)
    if (std::optional<TensorRef>& given = *slot_of(operands, i)) operands_[i].ref = std::move(given);
  route_->operands_changed();
  state_.set_operand(operands_[slot_a].ref && operands_[slot_b].ref);
}

void MatmulImpl::release_operand() noexcept {
  NvtxRange range(nvtx_name(nvtx_release, "cuplan::Matmul::release_operand"));
  for (int i = 0; i < slot_count; ++i) operands_[i].ref.reset();
  options_.c.reset();
  options_.bias.reset();
  options_.epilog_aux.reset();
  state_.set_operand(false);
  route_->operands_changed();
}

void MatmulImpl::free() noexcept {
  if (state_.freed()) return;
  NvtxRange range(nvtx_name(nvtx_free, "cuplan::Matmul::free"));
  route_->free();  // plans, workspace and buffers
  last_ = MatmulResult();
  release_operand();
  state_.set_freed();
}

}  // namespace cuplan::detail
