// Class form of Matmul and the lifecycle shared with the function form's cached plans.
#include "matmul/matmul_impl.hpp"

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/log.hpp"
#include "cuplan/errors.hpp"
#include "matmul/cpu_backend.hpp"

namespace cuplan::detail {
namespace {

constexpr const char* slot_names[] = {"a", "b", "c", "bias", "epilog_aux"};
constexpr std::size_t default_memory_limit = std::size_t{32} << 20;
/// Heuristics only read the alignment of epilog output pointers, which are allocated per execute from the pool
/// (256-byte aligned); this stands in for them at plan time and is never dereferenced.
void* const planning_placeholder = reinterpret_cast<void*>(std::uintptr_t{1} << 20);

std::uint32_t alignment_class(const void* p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t a = 1;
  while (a < 16 && v % (a * 2) == 0) a *= 2;
  return a;
}

bool same_layout(const TensorView& x, const TensorView& y) {
  return x.dtype() == y.dtype() && x.shape() == y.shape() && x.strides() == y.strides() && x.on_host() == y.on_host() &&
         x.device() == y.device();
}

/// A device view of dense memory at `data` of `shape` with `strides`.
TensorView device_view(void* data, DType dtype, const Shape& shape, const Strides& strides, int device) {
  return TensorView(data, dtype, shape, strides, Device::cuda(device), MemorySpace::device);
}
TensorView dense_view(void* data, DType dtype, const Shape& shape, int device) {
  return device_view(data, dtype, shape, row_major_strides(shape), device);
}

/// Strides equal on every axis of extent > 1 (the stride of an extent-1 axis is never used).
bool same_strides(const Shape& shape, const Strides& x, const Strides& y) {
  if (x.size() != shape.size() || y.size() != shape.size()) return false;
  for (int i = 0; i < shape.size(); ++i)
    if (shape[i] > 1 && x[i] != y[i]) return false;
  return true;
}

std::size_t bytes_of(const Shape& shape, DType dtype) {
  return static_cast<std::size_t>(checked_numel(shape)) * dtype.size();
}

}  // namespace

MatmulImpl::MatmulImpl(TensorRef a, TensorRef b, MatmulOptions options, const char* who)
    : who_(who), options_(std::move(options)), state_("Matmul") {
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
    operands_[i].alignment = alignment_class(v.data());
    planned_views_[i] = v;
    views.push_back(v);
    names.push_back(slot_names[i]);
  }
  target_ = resolve_execution(options_.execution, options_.blocking, views, names, who_);
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
}

void MatmulImpl::require_ready(const char* method) const {
  state_.require_alive(method);
  state_.require_planned(method);
  state_.require_operand(method);
}

void MatmulImpl::set_scalars(std::complex<double> alpha, std::complex<double> beta) {
  if (!problem_.a_dtype.is_complex() && (alpha.imag() != 0 || beta.imag() != 0))
    throw InvalidArgument(
        fmt::format("{}: alpha and beta must be real for {} operands", who_, problem_.a_dtype.name()));
  options_.alpha = alpha;
  options_.beta = beta;
  if (lt_) lt_->set_scalars(alpha, beta);
}

void MatmulImpl::plan(const MatmulPlanOptions& options) {
  state_.require_alive("plan");
  if (options.epilog) {
    options_.epilog = *options.epilog;
    operands_[slot_bias].ref = options.bias;
    operands_[slot_aux].ref = options.epilog_aux;
    for (int i : {int(slot_bias), int(slot_aux)}) {
      if (!operands_[i].ref) continue;
      const TensorView& v = operands_[i].ref->view();
      check_alignment(v.data(), v.dtype().alignment(), slot_names[i], who_);
      operands_[i].alignment = alignment_class(v.data());
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
  if (!target_.cuda) {
    state_.set_planned(true);
    log(LogLevel::info, "{}: CPU product {} x {} x {} batch {} {} epilog {}", who_, problem_.m, problem_.n, problem_.k,
        problem_.batch_count, problem_.a_dtype.name(), to_string(problem_.epilog));
    return;
  }
  const int device = target_.device;
  DeviceScope scope(Device::cuda(device));
  const StreamRef stream = resolve_stream(options.stream, device);
  check_stream_device(stream, device, who_);
  order_.begin(stream, options.after, device);
  try {
    lt_ = std::make_unique<mm::LtPlan>(problem_, device, options_.alpha, options_.beta, c_in_d_, who_);
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
    const bool user_limit = options_.memory_limit != 0;
    lt_->find_algorithms(options.preferences, user_limit ? options_.memory_limit : default_memory_limit, user_limit, p);
  } catch (...) {
    lt_.reset();
    order_.end(stream);
    throw;
  }
  order_.end(stream);
  state_.set_planned(true);
}

std::vector<AlgorithmInfo> MatmulImpl::algorithms() const {
  state_.require_alive("algorithms");
  state_.require_planned("algorithms");
  if (lt_) return lt_->algorithms();
  AlgorithmInfo cpu;
  cpu.description = "OpenBLAS gemm per batch entry, epilog in C++";
  return {cpu};
}

mm::LtPointers MatmulImpl::stage(StreamRef stream, void* d, void* aux, void* bias_gradient) {
  const int device = target_.device;
  mm::LtPointers p;
  auto matrix = [&](int slot, const mm::MatrixLayout& layout, bool vector_is_row) -> const void* {
    const TensorView& v = operands_[slot].ref->view();
    if (!target_.host_operands && !layout.needs_copy) return v.data();
    // Dense copy: the operand as it is, or broadcast to the full batch when its strides need that.
    // In the orientation the planning layer chose for it (layout.row_major).
    const Shape shape =
        layout.needs_copy ? mm::dense_copy_shape(problem_.batch_shape, layout.rows, layout.cols) : v.shape();
    const TensorView src =
        layout.needs_copy
            ? TensorView(v.data(), v.dtype(), shape, mm::matrix_operand_strides(v, problem_.batch_shape, vector_is_row),
                         v.device(), v.memory_space())
            : v;
    void* buffer = staging_[slot].ensure(bytes_of(shape, v.dtype()), device, stream);
    copy(src, device_view(buffer, v.dtype(), shape, mm::matrix_stack_strides(shape, layout.row_major), device), stream);
    return buffer;
  };
  auto vector = [&](int slot) -> const void* {
    if (!operands_[slot].ref) return nullptr;
    const TensorView& v = operands_[slot].ref->view();
    if (!target_.host_operands) return v.data();
    void* buffer = staging_[slot].ensure(bytes_of(v.shape(), v.dtype()), device, stream);
    copy(v, dense_view(buffer, v.dtype(), v.shape(), device), stream);
    return buffer;
  };
  p.a = matrix(slot_a, problem_.a, true);
  p.b = matrix(slot_b, problem_.b, false);
  p.d = d;
  if (problem_.has_c) {
    if (c_in_d_) {
      const TensorView& c = operands_[slot_c].ref->view();
      const Shape full = mm::dense_copy_shape(problem_.batch_shape, problem_.m, problem_.n);
      copy(TensorView(c.data(), c.dtype(), full, problem_.c_strides, c.device(), c.memory_space()),
           device_view(d, c.dtype(), full, problem_.d_strides, device), stream);
    } else {
      p.c = operands_[slot_c].ref->view().data();
    }
  }
  p.bias = vector(slot_bias);
  p.aux = aux != nullptr ? aux : const_cast<void*>(vector(slot_aux));
  p.bias_gradient = bias_gradient;
  p.scale_a = problem_.a_dtype.is_fp8()
                  ? (options_.scales.a.tensor ? options_.scales.a.tensor->view().data() : scales_.data())
                  : nullptr;
  p.scale_b = problem_.a_dtype.is_fp8() ? (options_.scales.b.tensor ? options_.scales.b.tensor->view().data()
                                                                    : static_cast<float*>(scales_.data()) + 1)
                                        : nullptr;
  return p;
}

Tensor MatmulImpl::execute(const MatmulExecuteOptions& options) {
  require_ready("execute");
  if (options.out) check_output(*options.out);
  return target_.cuda ? execute_cuda(options) : execute_cpu(options.out);
}

void MatmulImpl::check_output(const TensorView& out) const {
  const mm::Problem& p = problem_;
  if (!(out.dtype() == p.result_dtype) || !(out.shape() == p.result_shape))
    throw InvalidArgument(fmt::format("{}.execute: out is {} {}; expected D's dtype and shape {} {}", who_,
                                      out.dtype().name(), mm::shape_string(out.shape()), p.result_dtype.name(),
                                      mm::shape_string(p.result_shape)));
  if (!same_strides(p.result_shape, out.strides(), p.result_strides))
    throw InvalidArgument(fmt::format("{}.execute: out has strides {}; expected {} (D is {} for epilog {}{})", who_,
                                      mm::shape_string(out.strides()), mm::shape_string(p.result_strides),
                                      p.swapped ? "row-major" : "column-major", to_string(p.epilog),
                                      p.swapped ? "" : ", cuBLASLt's native orientation"));
  const bool host_result = !target_.cuda || target_.host_operands;
  if (host_result != out.on_host() || (!host_result && out.device() != Device::cuda(target_.device)))
    throw InvalidArgument(fmt::format(
        "{}.execute: out lives on {} ({}); expected {}", who_, out.device().to_string(),
        out.on_host() ? "host memory" : "device memory",
        host_result ? "host memory, as the operands" : Device::cuda(target_.device).to_string() + " device memory"));
  // Device outputs are written by the planned algorithms, chosen for 16-byte aligned D.
  check_alignment(out.data(), host_result ? out.dtype().alignment() : 16, "out", who_);
}

Tensor MatmulImpl::execute_cpu(const std::optional<TensorView>& out) {
  // Device operands with CPU execution are copied to the host first (blocking, design.md section 4).
  std::array<Tensor, slot_count> host_copies;
  auto host_view = [&](int slot) -> std::optional<TensorView> {
    if (!operands_[slot].ref) return std::nullopt;
    const TensorView& v = operands_[slot].ref->view();
    if (v.on_host()) return v;
    host_copies[slot] = Tensor::wrap(v).to(Device::cpu());
    return host_copies[slot].view();
  };
  mm::CpuOperands in{*host_view(slot_a), *host_view(slot_b), host_view(slot_c), host_view(slot_bias),
                     host_view(slot_aux)};
  Tensor d =
      out ? Tensor::wrap(*out)
          : Tensor::empty_strided(problem_.result_shape, problem_.result_strides, problem_.result_dtype, Device::cpu());
  const mm::EpilogTraits traits = mm::epilog_traits(problem_.epilog);
  aux_out_ = traits.aux_output ? Tensor::empty(problem_.aux_shape, problem_.aux_dtype, Device::cpu()) : Tensor();
  bias_gradient_out_ = traits.bias_gradient
                           ? Tensor::empty(problem_.bias_gradient_shape, problem_.result_dtype, Device::cpu())
                           : Tensor();
  mm::cpu_matmul(problem_, in, options_.alpha, options_.beta, {d.data(), aux_out_.data(), bias_gradient_out_.data()},
                 target_.cpu_threads);
  return d;
}

Tensor MatmulImpl::execute_cuda(const MatmulExecuteOptions& options) {
  const int device = target_.device;
  DeviceScope scope(Device::cuda(device));  // cuBLASLt runs on the current device
  const StreamRef stream = resolve_stream(options.stream, device);
  order_.begin(stream, options.after, device);
  Tensor d;
  try {
    const mm::EpilogTraits traits = mm::epilog_traits(problem_.epilog);
    const Device gpu = Device::cuda(device);
    void* workspace = workspace_.ensure(lt_->workspace_bytes(), device, stream);
    Tensor aux, bgrad;
    void *d_ptr, *aux_ptr = nullptr, *bgrad_ptr = nullptr;
    if (target_.host_operands) {
      d_ptr = result_staging_.ensure(bytes_of(problem_.result_shape, problem_.result_dtype), device, stream);
      if (traits.aux_output)
        aux_ptr = aux_staging_.ensure(bytes_of(problem_.aux_shape, problem_.aux_dtype), device, stream);
      if (traits.bias_gradient)
        bgrad_ptr = bias_gradient_staging_.ensure(bytes_of(problem_.bias_gradient_shape, problem_.result_dtype), device,
                                                  stream);
    } else {
      d = options.out ? Tensor::wrap(*options.out)
                      : Tensor::empty_strided(problem_.result_shape, problem_.result_strides, problem_.result_dtype,
                                              gpu, stream);
      d_ptr = d.data();
      if (traits.aux_output) {
        aux = Tensor::empty(problem_.aux_shape, problem_.aux_dtype, gpu, stream);
        aux_ptr = aux.data();
      }
      if (traits.bias_gradient) {
        bgrad = Tensor::empty(problem_.bias_gradient_shape, problem_.result_dtype, gpu, stream);
        bgrad_ptr = bgrad.data();
      }
    }
    const mm::LtPointers p = stage(stream, d_ptr, aux_ptr, bgrad_ptr);
    lt_->bind(p);
    lt_->run(p, stream, workspace, workspace == nullptr ? 0 : lt_->workspace_bytes());
    for (const Operand& o : operands_)
      if (o.ref) o.ref->record_stream(stream);
    if (target_.host_operands) {
      // D comes back in its planned layout (the staging buffer holds it densely in that layout).
      auto back = [&](void* src, const Shape& shape, const Strides& strides, DType dtype) {
        Tensor host = Tensor::empty_strided(shape, strides, dtype, Device::cpu());
        copy(device_view(src, dtype, shape, strides, device), host.view(), stream);
        return host;
      };
      if (options.out) {
        copy(device_view(d_ptr, problem_.result_dtype, problem_.result_shape, problem_.result_strides, device),
             *options.out, stream);
        d = Tensor::wrap(*options.out);
      } else {
        d = back(d_ptr, problem_.result_shape, problem_.result_strides, problem_.result_dtype);
      }
      if (traits.aux_output)
        aux = back(aux_ptr, problem_.aux_shape, row_major_strides(problem_.aux_shape), problem_.aux_dtype);
      if (traits.bias_gradient)
        bgrad = back(bgrad_ptr, problem_.bias_gradient_shape, row_major_strides(problem_.bias_gradient_shape),
                     problem_.result_dtype);
    }
    aux_out_ = std::move(aux);
    bias_gradient_out_ = std::move(bgrad);
    if (options.release_workspace) workspace_.release();
  } catch (...) {
    order_.end(stream);
    throw;
  }
  order_.end(stream);
  if (target_.blocking) finish_call(target_, stream);
  return d;
}

void MatmulImpl::autotune(const AutotuneOptions& options) {
  require_ready("autotune");
  if (!lt_) {
    log(LogLevel::info, "{}: autotune on the CPU: one algorithm, nothing to choose", who_);
    return;
  }
  const int device = target_.device;
  DeviceScope scope(Device::cuda(device));
  const StreamRef stream = resolve_stream(options.stream, device);
  check_stream_device(stream, device, who_);
  order_.begin(stream, {}, device);
  try {
    const mm::EpilogTraits traits = mm::epilog_traits(problem_.epilog);
    // Scratch outputs: the timed runs must not touch tensors the caller may hold.
    void* d = result_staging_.ensure(bytes_of(problem_.result_shape, problem_.result_dtype), device, stream);
    void* aux = traits.aux_output
                    ? aux_staging_.ensure(bytes_of(problem_.aux_shape, problem_.aux_dtype), device, stream)
                    : nullptr;
    void* bgrad = traits.bias_gradient
                      ? bias_gradient_staging_.ensure(bytes_of(problem_.bias_gradient_shape, problem_.result_dtype),
                                                      device, stream)
                      : nullptr;
    const mm::LtPointers p = stage(stream, d, aux, bgrad);
    lt_->bind(p);
    const std::size_t ws_bytes = lt_->max_workspace_bytes();
    void* workspace = workspace_.ensure(ws_bytes, device, stream);
    void* flush = nullptr;
    std::size_t flush_bytes = 0;
    if (options.flush_cache) {
      int l2 = 0;
      CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
      flush_bytes = static_cast<std::size_t>(l2) * 2;
      flush = flush_.ensure(flush_bytes, device, stream);
    }
    lt_->autotune(p, stream, workspace, workspace == nullptr ? 0 : ws_bytes, options.iterations, flush, flush_bytes);
    for (const Operand& o : operands_)
      if (o.ref) o.ref->record_stream(stream);
    flush_.release();
  } catch (...) {
    order_.end(stream);
    throw;
  }
  order_.end(stream);
}

void MatmulImpl::reset_operands(const MatmulOperands& operands, std::optional<StreamRef> stream) {
  state_.require_alive("reset_operands");
  const std::optional<TensorRef>* given[slot_count] = {&operands.a, &operands.b, &operands.c, &operands.bias,
                                                       &operands.epilog_aux};
  // Validate everything before changing anything, so a rejected call leaves the object as it was.
  for (int i = 0; i < slot_count; ++i) {
    if (!*given[i]) continue;
    const TensorView& v = (*given[i])->view();
    if (planned_views_[i].data() == nullptr && planned_views_[i].numel() == 0 && !operands_[i].alignment)
      throw InvalidArgument(
          fmt::format("{}.reset_operands: operand {} was not part of the planned product", who_, slot_names[i]));
    const TensorView& planned = planned_views_[i];
    if (!same_layout(v, planned))
      throw InvalidArgument(
          fmt::format("{}.reset_operands: operand {} is {} {} strides {} on {}; expected {} {} "
                      "strides {} on {} as planned",
                      who_, slot_names[i], v.dtype().name(), mm::shape_string(v.shape()), mm::shape_string(v.strides()),
                      v.device().to_string(), planned.dtype().name(), mm::shape_string(planned.shape()),
                      mm::shape_string(planned.strides()), planned.device().to_string()));
    check_alignment(v.data(), operands_[i].alignment, slot_names[i], "Matmul.reset_operands");
  }
  // New operands may be written by work on `stream`: order it after this object's last phase.
  if (target_.cuda && stream) {
    check_stream_device(*stream, target_.device, who_);
    order_.begin(*stream, {}, target_.device);
    order_.end(*stream);
  }
  for (int i = 0; i < slot_count; ++i)
    if (*given[i]) operands_[i].ref = **given[i];
  if (operands_[slot_a].ref && operands_[slot_b].ref) state_.set_operand(true);
}

void MatmulImpl::release_operands() noexcept {
  for (int i = 0; i < slot_count; ++i) operands_[i].ref.reset();
  options_.c.reset();
  options_.bias.reset();
  options_.epilog_aux.reset();
  state_.set_operand(false);
}

void MatmulImpl::free() noexcept {
  if (state_.freed()) return;
  release_operands();
  lt_.reset();
  for (auto& s : staging_) s.release();
  workspace_.release();
  result_staging_.release();
  aux_staging_.release();
  bias_gradient_staging_.release();
  scales_.release();
  flush_.release();
  aux_out_ = Tensor();
  bias_gradient_out_ = Tensor();
  state_.set_freed();
}

}  // namespace cuplan::detail

namespace cuplan {

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
Tensor Matmul::execute(MatmulExecuteOptions options) {
  return alive(impl_, "execute").execute(options);
}
void Matmul::reset_operands(MatmulOperands operands, std::optional<StreamRef> stream) {
  alive(impl_, "reset_operands").reset_operands(operands, stream);
}
void Matmul::release_operands() {
  alive(impl_, "release_operands").release_operands();
}
void Matmul::free() {
  if (impl_) impl_->free();
}
Tensor Matmul::aux() const {
  return alive(impl_, "aux").aux();
}
Tensor Matmul::bias_gradient() const {
  return alive(impl_, "bias_gradient").bias_gradient();
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

}  // namespace cuplan
