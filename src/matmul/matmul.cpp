// SPDX-License-Identifier: Apache-2.0
// Class form of Matmul and the lifecycle shared with the function form's cached plans.
#include "matmul/matmul_impl.hpp"

#include <fmt/format.h>

#include "base/cuda_check.hpp"
#include "base/error_context.hpp"
#include "base/geometry.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "matmul/cpu/cpu_backend.hpp"
#include "matmul/cublaslt/bias_gradient.hpp"
#include "matmul/matmul_validate.hpp"

namespace cuplan::detail {
namespace {

// In the order of MatmulOperand (and of the impl's slots).
constexpr const char* slot_names[] = {"a", "b", "c", "bias", "epilog_aux"};
constexpr std::optional<TensorRef> MatmulOperands::*slot_members[] = {
    &MatmulOperands::a, &MatmulOperands::b, &MatmulOperands::c, &MatmulOperands::bias, &MatmulOperands::epilog_aux};

template <class Operands>  // MatmulOperands, const or not
auto* slot_of(Operands& operands, int slot) {
  return &(operands.*slot_members[slot]);
}
constexpr std::size_t default_memory_limit = std::size_t{32} << 20;
/// Heuristics only read the alignment of epilog output pointers, which are allocated per execute from the pool
/// (256-byte aligned); this stands in for them at plan time and is never dereferenced.
void* const planning_placeholder = reinterpret_cast<void*>(std::uintptr_t{1} << 20);

}  // namespace

MatmulImpl::MatmulImpl(TensorRef a, TensorRef b, MatmulOptions options, const char* who)
    : who_(who), options_(std::move(options)), state_("Matmul"), streams_(options_.stream, who) {
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
    check_alignment(v.data(), v.dtype().alignment(), slot_names[i], who_);
    operands_[i].planned = OperandSignature::of(v);
    planned_views_[i] = v;
    views.push_back(v);
    names.push_back(slot_names[i]);
  }
  target_ = resolve_execution(options_.execution, options_.blocking, views, names, who_);
  replay_.set_enabled(options_.graph_replay);
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
  spec.cuda = target_.cuda;
  problem_ = mm::plan_problem(spec, who_);
  if (!target_.cuda) mm::check_cpu_support(problem_, who_);
  for (const ScaleFactor* s : {&options_.scales.a, &options_.scales.b}) {
    if (!s->tensor) continue;
    const TensorView& t = s->tensor->view();
    if (!(t.dtype() == f32) || t.numel() != 1 || t.on_host())
      throw InvalidArgument(fmt::format("{}: a scale tensor must be one f32 element in device memory; got {} {} on {}",
                                        who_, t.dtype().name(), mm::shape_string(t.shape()),
                                        t.on_host() ? "the host" : "the device"));
  }
  // Operands the planning layer marked needs_copy are copied as it describes them. Host operands are staged into
  // dense device copies in their own orientation, so that the planned form (and D's layout) stays the same.
  if (target_.cuda) {
    c_in_d_ = problem_.has_c && (target_.host_operands || problem_.c.needs_copy);
    for (mm::MatrixLayout* m : {&problem_.a, &problem_.b})
      if (target_.host_operands && !m->needs_copy) mm::describe_dense_copy(*m, false, problem_.batch_count);
  }
  plan_output_signature();
}

void MatmulImpl::plan_output_signature() {
  const mm::Problem& p = problem_;
  // D lives where the operands live, whatever executes (the blocking rule; FFT does the same).
  const bool host_result = target_.host_operands;
  // Device outputs of CUDA execution are written by the planned algorithms, chosen for 16-byte aligned D.
  const bool algorithm_writes_out = target_.cuda && !host_result;
  out_signature_ =
      OperandSignature::result(p.result_dtype, p.result_shape, p.result_strides, host_result,
                               target_.cuda ? target_.device : target_.operand_device,
                               algorithm_writes_out ? 16 : static_cast<std::uint32_t>(p.result_dtype.alignment()));
  out_strides_note_ = fmt::format("D is {} for epilog {}{}", p.swapped ? "row-major" : "column-major",
                                  to_string(p.epilog), p.swapped ? "" : ", cuBLASLt's native orientation");
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
  if (lt_ && lt_->set_scalars(alpha, beta)) replay_.invalidate();
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
  if (options.epilog) {
    mm::check_epilog(*options.epilog, who_);
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
  lt_.reset();
  replay_.invalidate();  // the graphs ran the old plan's descriptors and algorithm
  bias_gradient_kernel_ = false;
  recorded_stream_.forget();  // bias / epilog_aux may have changed
  if (!target_.cuda) {
    state_.set_planned(true);
    log(LogLevel::info, "{}: CPU product {} x {} x {} batch {} {} epilog {}", who_, problem_.m, problem_.n, problem_.k,
        problem_.batch_count, problem_.a_dtype.name(), to_string(problem_.epilog));
    return;
  }
  const int device = target_.device;
  // The first plan also waits for MatmulOptions::after unless the plan options name their own events.
  Phase phase(order_, streams_, target_, options.stream,
              construct_after_pending_ && options.after.empty() ? options_.after : options.after, "plan");
  construct_after_pending_ = false;
  const StreamRef stream = phase.stream();
  try {
    // Host fp8 scale values live in a small device buffer for the object's life.
    mm::LtPointers p;
    if (problem_.a_dtype.is_fp8()) {
      auto* scales = static_cast<float*>(scales_.ensure(2 * sizeof(float), device, stream));
      const float host[2] = {options_.scales.a.value.value_or(1.0f), options_.scales.b.value.value_or(1.0f)};
      CUPLAN_CUDA_CHECK(cudaMemcpyAsync(scales, host, sizeof(host), cudaMemcpyHostToDevice, stream));
      CUPLAN_CUDA_CHECK(cudaStreamSynchronize(stream));  // `host` is a stack array
      p.scale_a = options_.scales.a.tensor ? options_.scales.a.tensor->view().data() : scales;
      p.scale_b = options_.scales.b.tensor ? options_.scales.b.tensor->view().data() : scales + 1;
    }
    auto device_pointer = [&](int slot, bool staged) -> const void* {
      if (!operands_[slot].ref) return nullptr;
      return staged ? planning_placeholder : operands_[slot].ref->view().data();
    };
    p.a = device_pointer(slot_a, target_.host_operands || problem_.a.needs_copy);
    p.b = device_pointer(slot_b, target_.host_operands || problem_.b.needs_copy);
    p.c = c_in_d_ ? nullptr : device_pointer(slot_c, false);
    p.bias = device_pointer(slot_bias, target_.host_operands);
    const mm::EpilogTraits traits = mm::epilog_traits(problem_.epilog);
    if (traits.aux_input) p.aux = const_cast<void*>(device_pointer(slot_aux, target_.host_operands));
    if (traits.aux_output) p.aux = planning_placeholder;
    if (traits.bias_gradient) p.bias_gradient = planning_placeholder;
    plan_cuda_product(options.preferences, p);
  } catch (...) {
    lt_.reset();
    throw;
  }
  phase.close();
  state_.set_planned(true);
} catch (const LibraryError& error) {
  rethrow_with_context(error, fmt::format("{}.plan", who_), [this] { return error_context(); });
}

void MatmulImpl::plan_cuda_product(const MatmulPreferences& preferences, const mm::LtPointers& pointers) {
  const bool user_limit = options_.memory_limit != 0;
  const std::size_t limit = user_limit ? options_.memory_limit : default_memory_limit;
  lt_ = std::make_unique<mm::LtPlan>(problem_, target_.device, options_.alpha, options_.beta, c_in_d_, who_);
  try {
    lt_->find_algorithms(preferences, limit, user_limit, pointers);
    return;
  } catch (const NotSupported&) {
    // cuBLASLt fuses bgrada / bgradb only for some dtype and transposition combinations.
    const bool from_a = problem_.epilog == Epilog::bgrada;
    if (!from_a && problem_.epilog != Epilog::bgradb) throw;
    if (!mm::bias_gradient_supported(from_a ? problem_.a_dtype : problem_.b_dtype, problem_.result_dtype)) throw;
  }
  mm::Problem plain = problem_;
  plain.epilog = Epilog::none;
  lt_ = std::make_unique<mm::LtPlan>(plain, target_.device, options_.alpha, options_.beta, c_in_d_, who_);
  lt_->find_algorithms(preferences, limit, user_limit, pointers);
  bias_gradient_kernel_ = true;
  log(LogLevel::info,
      "{}: cuBLASLt has no fused {} algorithm for this product; running the plain product, then a bias-gradient "
      "reduction kernel on the same stream",
      who_, to_string(problem_.epilog));
}

std::string MatmulImpl::error_context() const {
  const mm::Problem& p = problem_;
  return fmt::format("M x N x K = {} x {} x {}, batch {}, {} x {} -> {}, epilog {}, D shape {}, on {} ({})", p.m, p.n,
                     p.k, p.batch_count, p.a_dtype.name(), p.b_dtype.name(), p.result_dtype.name(), to_string(p.epilog),
                     mm::shape_string(p.result_shape),
                     target_.cuda ? fmt::format("cuda:{}", target_.device) : std::string("cpu"),
                     target_.cuda ? "cuBLASLt" : "BLAS");
}

std::string MatmulImpl::describe() const {
  const mm::Problem& p = problem_;
  std::string algorithm = "OpenBLAS gemm per batch entry";
  if (lt_) {
    const std::vector<AlgorithmInfo> candidates = lt_->algorithms();
    algorithm =
        candidates.empty() ? std::string("cuBLASLt, no algorithm") : "cuBLASLt " + candidates.front().description;
  } else if (target_.cuda) {
    algorithm = "cuBLASLt, not planned yet";
  }
  return fmt::format("{} {} x {} x {} batch {} {} -> {}, epilog {}{}, D {} {}, {} execution{}: {}", who_, p.m, p.n, p.k,
                     p.batch_count, p.a_dtype.name(), p.result_dtype.name(), to_string(p.epilog),
                     bias_gradient_kernel_ ? " (bias gradient by a separate kernel)" : "",
                     mm::shape_string(p.result_shape), p.swapped ? "row-major" : "column-major",
                     target_.cuda ? "CUDA" : "CPU", target_.cuda ? fmt::format(" on cuda:{}", target_.device) : "",
                     algorithm);
}

std::vector<AlgorithmInfo> MatmulImpl::algorithms() const {
  state_.require_planned("algorithms");
  if (lt_) return lt_->algorithms();
  AlgorithmInfo cpu;
  cpu.description = "OpenBLAS gemm per batch entry, epilog in C++";
  return {cpu};
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
    if (!operands_[i].planned)
      throw InvalidArgument(
          fmt::format("{}.{}: operand {}: expected one of the planned product's operands, got {}, "
                      "which it was planned without",
                      who_, method, slot_names[i], slot_names[i]));
    operands_[i].planned->require_match(given->view(), who_, method, slot_names[i]);
  }
  // New operands may be written by work on the stream (by the object's rule): order it after the last phase.
  if (target_.cuda && !target_.host_operands) {
    Phase phase(order_, streams_, target_, stream, EventList{}, method);
    phase.close();
  }
  for (int i = 0; i < slot_count; ++i)
    if (const std::optional<TensorRef>& given = *slot_of(operands, i)) operands_[i].ref = given;
  recorded_stream_.forget();
  if (operands_[slot_a].ref && operands_[slot_b].ref) state_.set_operand(true);
} catch (const LibraryError& error) {
  rethrow_with_context(error, fmt::format("{}.{}", who_, method), [this] { return error_context(); });
}

void MatmulImpl::adopt_operands(MatmulOperands&& operands) noexcept {
  for (int i = 0; i < slot_count; ++i)
    if (std::optional<TensorRef>& given = *slot_of(operands, i)) operands_[i].ref = std::move(given);
  recorded_stream_.forget();
  state_.set_operand(operands_[slot_a].ref && operands_[slot_b].ref);
}

void MatmulImpl::release_operand() noexcept {
  NvtxRange range(nvtx_name(nvtx_release, "cuplan::Matmul::release_operand"));
  for (int i = 0; i < slot_count; ++i) operands_[i].ref.reset();
  options_.c.reset();
  options_.bias.reset();
  options_.epilog_aux.reset();
  state_.set_operand(false);
  recorded_stream_.forget();
}

void MatmulImpl::free() noexcept {
  if (state_.freed()) return;
  NvtxRange range(nvtx_name(nvtx_free, "cuplan::Matmul::free"));
  staged_.reset();
  release_operand();
  lt_.reset();
  for (auto& s : staging_) s.release();
  workspace_.release();
  result_staging_.release();
  aux_staging_.release();
  bias_gradient_staging_.release();
  scales_.release();
  flush_.release();
  replay_.reset();
  aux_out_ = Tensor();
  bias_gradient_out_ = Tensor();
  state_.set_freed();
}

}  // namespace cuplan::detail

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

Matmul::Matmul(TensorRef a, TensorRef b, MatmulOptions options)
    : impl_(std::make_unique<detail::MatmulImpl>(std::move(a), std::move(b), std::move(options), "Matmul")) {}
Matmul::Matmul(Matmul&&) noexcept = default;
Matmul& Matmul::operator=(Matmul&&) noexcept = default;
Matmul::~Matmul() = default;

namespace {
detail::MatmulImpl& alive(const std::unique_ptr<detail::MatmulImpl>& impl, const char* method) {
  if (!impl) throw StateError(fmt::format("Matmul.{}: the object was moved from", method));
  return *impl;
}
/// As alive, and not freed (queries of the plan, like FFT's).
detail::MatmulImpl& live(const std::unique_ptr<detail::MatmulImpl>& impl, const char* method) {
  detail::MatmulImpl& object = alive(impl, method);
  object.require_alive(method);
  return object;
}
}  // namespace

void Matmul::plan(MatmulPlanOptions options) {
  alive(impl_, "plan").plan(options);
}
std::vector<AlgorithmInfo> Matmul::algorithms() const {
  return alive(impl_, "algorithms").algorithms();
}
void Matmul::autotune(AutotuneOptions options) {
  alive(impl_, "autotune").autotune(options);
}
Tensor Matmul::execute(const MatmulExecuteOptions& options) {
  return alive(impl_, "execute").execute(options);
}
void Matmul::reset_operand(MatmulOperand which, TensorRef operand, std::optional<StreamRef> stream) {
  alive(impl_, "reset_operand").reset_operand(which, std::move(operand), stream);
}
void Matmul::reset_operands(MatmulOperands operands, std::optional<StreamRef> stream) {
  alive(impl_, "reset_operands").reset_operands(operands, stream);
}
void Matmul::release_operand() {
  alive(impl_, "release_operand").require_alive("release_operand");
  impl_->release_operand();
}
void Matmul::free() noexcept {
  if (impl_) impl_->free();
}
Shape Matmul::result_shape() const {
  return live(impl_, "result_shape").result_shape();
}
DType Matmul::result_dtype() const {
  return live(impl_, "result_dtype").result_dtype();
}
Strides Matmul::result_strides() const {
  return live(impl_, "result_strides").result_strides();
}
std::string Matmul::describe() const {
  return live(impl_, "describe").describe();
}
Tensor Matmul::aux() const {
  alive(impl_, "aux").require_alive("aux");
  return impl_->aux();
}
Tensor Matmul::bias_gradient() const {
  alive(impl_, "bias_gradient").require_alive("bias_gradient");
  return impl_->bias_gradient();
}

const char* to_string(Epilog e) noexcept {
  switch (e) {
    case Epilog::none:
      return "none";
    case Epilog::relu:
      return "relu";
    case Epilog::gelu:
      return "gelu";
    case Epilog::bias:
      return "bias";
    case Epilog::relu_bias:
      return "relu_bias";
    case Epilog::gelu_bias:
      return "gelu_bias";
    case Epilog::relu_aux:
      return "relu_aux";
    case Epilog::gelu_aux:
      return "gelu_aux";
    case Epilog::relu_aux_bias:
      return "relu_aux_bias";
    case Epilog::gelu_aux_bias:
      return "gelu_aux_bias";
    case Epilog::drelu:
      return "drelu";
    case Epilog::drelu_bgrad:
      return "drelu_bgrad";
    case Epilog::dgelu:
      return "dgelu";
    case Epilog::dgelu_bgrad:
      return "dgelu_bgrad";
    case Epilog::bgrada:
      return "bgrada";
    case Epilog::bgradb:
      return "bgradb";
  }
  return "?";
}

const char* to_string(Compute c) noexcept {
  switch (c) {
    case Compute::automatic:
      return "automatic";
    case Compute::f16:
      return "f16";
    case Compute::f32:
      return "f32";
    case Compute::tf32:
      return "tf32";
    case Compute::f64:
      return "f64";
  }
  return "?";
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
