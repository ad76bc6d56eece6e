// SPDX-License-Identifier: Apache-2.0
// The cuBLASLt product of a Matmul (see lt_product.hpp): planning, staging, execute, autotune.

#include "matmul/routes/lt_product.hpp"

#include <fmt/format.h>

#include <chrono>
#include <span>

#include "base/cuda_check.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "matmul/cublaslt/bias_gradient.hpp"
#include "matmul/matmul_validate.hpp"
#include "matmul/routes/device_views.hpp"
#include "plan/cache/tuning_store.hpp"
#include "runtime/access.hpp"
#include "runtime/pinned_cache.hpp"

namespace cuplan::detail {
namespace {

constexpr std::size_t default_memory_limit = std::size_t{32} << 20;
/// Heuristics only read the alignment of epilog output pointers, which are allocated per execute from the pool
/// (256-byte aligned); this stands in for them at plan time and is never dereferenced.
void* const planning_placeholder = reinterpret_cast<void*>(std::uintptr_t{1} << 20);

}  // namespace

using enum mm::Slot;
using mm::bytes_of;
using mm::dense_view;
using mm::device_view;

LtProduct::LtProduct(const MatmulRouteContext& context, bool host_operands)
    : context_(context),
      host_operands_(host_operands),
      work_area_(resolve_work_area(context.options.work_area, context.options.work_area_buffer, context.who),
                 context.who) {
  replay_.set_enabled(context.options.graph_replay);
}

LtProduct::~LtProduct() = default;

bool LtProduct::c_in_d() const noexcept {
  // Host operands: C goes to the device inside D. Device operands: operands the planning layer marked needs_copy
  // are copied as it describes them, and C that cannot be read directly is copied into D.
  const mm::Problem& problem = context_.problem;
  return problem.has_c && (host_operands_ || problem.c.needs_copy);
}

void LtProduct::plan(const MatmulPlanOptions& options, const EventList& after) {
  lt_.reset();
  replay_.invalidate();  // the graphs ran the old plan's descriptors and algorithm
  bias_gradient_kernel_ = false;
  recorded_stream_.forget();  // bias / epilog_aux may have changed
  const ExecutionTarget& target = context_.target;
  const MatmulOptions& object_options = context_.options;
  const mm::OperandSlots& operands = context_.operands;
  const mm::Problem& problem = context_.problem;
  const int device = target.device;
  Phase phase(context_.order, context_.streams, target, options.stream, after, "plan");
  const StreamRef stream = phase.stream();
  try {
    // Host fp8 scale values live in a small device buffer for the object's life.
    mm::LtPointers p;
    if (problem.a_dtype.is_fp8()) {
      auto* scales = static_cast<float*>(scales_.ensure(2 * sizeof(float), device, stream));
      const float host[2] = {object_options.scales.a.value.value_or(1.0f),
                             object_options.scales.b.value.value_or(1.0f)};
      CUPLAN_CUDA_CHECK(cudaMemcpyAsync(scales, host, sizeof(host), cudaMemcpyHostToDevice, stream));
      CUPLAN_CUDA_CHECK(cudaStreamSynchronize(stream));  // `host` is a stack array
      p.scale_a = object_options.scales.a.tensor ? object_options.scales.a.tensor->view().data() : scales;
      p.scale_b = object_options.scales.b.tensor ? object_options.scales.b.tensor->view().data() : scales + 1;
    }
    auto device_pointer = [&](int slot, bool staged) -> const void* {
      if (!operands[slot].ref) return nullptr;
      return staged ? planning_placeholder : operands[slot].ref->view().data();
    };
    p.a = device_pointer(slot_a, host_operands_ || problem.a.needs_copy);
    p.b = device_pointer(slot_b, host_operands_ || problem.b.needs_copy);
    p.c = c_in_d() ? nullptr : device_pointer(slot_c, false);
    p.bias = device_pointer(slot_bias, host_operands_);
    const mm::EpilogTraits traits = mm::epilog_traits(problem.epilog);
    if (traits.aux_input) p.aux = const_cast<void*>(device_pointer(slot_aux, host_operands_));
    if (traits.aux_output) p.aux = planning_placeholder;
    if (traits.bias_gradient) p.bias_gradient = planning_placeholder;
    plan_cuda_product(options.preferences, p);
    work_area_.check(lt_->workspace_bytes(), device);  // an external buffer: big enough, on this device
  } catch (...) {
    lt_.reset();
    throw;
  }
  phase.close();
}

void LtProduct::plan_cuda_product(const MatmulPreferences& preferences, const mm::LtPointers& pointers) {
  const MatmulOptions& options = context_.options;
  const mm::Problem& problem = context_.problem;
  const char* who = context_.who;
  const bool user_limit = options.memory_limit != 0;
  const std::size_t limit = user_limit ? options.memory_limit : default_memory_limit;
  lt_ = std::make_unique<mm::LtPlan>(problem, context_.target.device, options.alpha, options.beta, c_in_d(), who);
  try {
    lt_->find_algorithms(preferences, limit, user_limit, pointers);
    return;
  } catch (const NotSupported&) {
    // cuBLASLt fuses bgrada / bgradb only for some dtype and transposition combinations.
    const bool from_a = problem.epilog == Epilog::bgrada;
    if (!from_a && problem.epilog != Epilog::bgradb) throw;
    if (!mm::bias_gradient_supported(from_a ? problem.a_dtype : problem.b_dtype, problem.result_dtype)) throw;
  }
  mm::Problem plain = problem;
  plain.epilog = Epilog::none;
  lt_ = std::make_unique<mm::LtPlan>(plain, context_.target.device, options.alpha, options.beta, c_in_d(), who);
  lt_->find_algorithms(preferences, limit, user_limit, pointers);
  bias_gradient_kernel_ = true;
  log(LogLevel::info,
      "{}: cuBLASLt has no fused {} algorithm for this product; running the plain product, then a bias-gradient "
      "reduction kernel on the same stream",
      who, to_string(problem.epilog));
}

std::vector<AlgorithmInfo> LtProduct::algorithms() const {
  return lt_ ? lt_->algorithms() : std::vector<AlgorithmInfo>{};
}

mm::LtPointers LtProduct::stage(StreamRef stream, void* d, void* aux, void* bias_gradient) {
  const ExecutionTarget& target = context_.target;
  const MatmulOptions& options = context_.options;
  const mm::OperandSlots& operands = context_.operands;
  const mm::Problem& problem = context_.problem;
  const int device = target.device;
  mm::LtPointers p;
  auto matrix = [&](int slot, const mm::MatrixLayout& layout, bool vector_is_row) -> const void* {
    const TensorView& v = operands[slot].ref->view();
    if (!host_operands_ && !layout.needs_copy) return v.data();
    // Dense copy: the operand as it is, or broadcast to the full batch when its strides need that.
    // In the orientation the planning layer chose for it (layout.row_major).
    const Shape shape =
        layout.needs_copy ? mm::dense_copy_shape(problem.batch_shape, layout.rows, layout.cols) : v.shape();
    const TensorView src =
        layout.needs_copy
            ? TensorView(v.data(), v.dtype(), shape, mm::matrix_operand_strides(v, problem.batch_shape, vector_is_row),
                         v.device(), v.memory_space())
            : v;
    void* buffer = staging_[slot].ensure(bytes_of(shape, v.dtype()), device, stream);
    copy(src, device_view(buffer, v.dtype(), shape, mm::matrix_stack_strides(shape, layout.row_major), device), stream);
    return buffer;
  };
  auto vector = [&](int slot) -> const void* {
    if (!operands[slot].ref) return nullptr;
    const TensorView& v = operands[slot].ref->view();
    if (!host_operands_) return v.data();
    void* buffer = staging_[slot].ensure(bytes_of(v.shape(), v.dtype()), device, stream);
    copy(v, dense_view(buffer, v.dtype(), v.shape(), device), stream);
    return buffer;
  };
  p.a = matrix(slot_a, problem.a, true);
  p.b = matrix(slot_b, problem.b, false);
  p.d = d;
  if (problem.has_c) {
    if (c_in_d()) {
      const TensorView& c = operands[slot_c].ref->view();
      const Shape full = mm::dense_copy_shape(problem.batch_shape, problem.m, problem.n);
      // D given over C itself (same elements, checked by execute): C is already where D goes.
      if (c.data() != d)
        copy(TensorView(c.data(), c.dtype(), full, problem.c_strides, c.device(), c.memory_space()),
             device_view(d, c.dtype(), full, problem.d_strides, device), stream);
    } else {
      p.c = operands[slot_c].ref->view().data();
    }
  }
  p.bias = vector(slot_bias);
  p.aux = aux != nullptr ? aux : const_cast<void*>(vector(slot_aux));
  p.bias_gradient = bias_gradient;
  p.scale_a = problem.a_dtype.is_fp8()
                  ? (options.scales.a.tensor ? options.scales.a.tensor->view().data() : scales_.data())
                  : nullptr;
  p.scale_b = problem.a_dtype.is_fp8() ? (options.scales.b.tensor ? options.scales.b.tensor->view().data()
                                                                  : static_cast<float*>(scales_.data()) + 1)
                                       : nullptr;
  return p;
}

ReplayKey LtProduct::replay_key(const mm::LtPointers& p, const void* workspace, std::size_t workspace_bytes) const {
  ReplayKey key;
  key.add(p.a).add(p.b).add(p.c).add(p.d).add(p.bias).add(p.aux).add(p.bias_gradient).add(p.scale_a).add(p.scale_b);
  key.add(workspace).add(workspace_bytes);
  return key;
}

void LtProduct::record_operand_uses(StreamRef stream) {
  if (recorded_stream_.covers(stream)) return;
  for (const mm::OperandSlot& o : context_.operands)
    if (o.ref) o.ref->record_stream(stream);
  recorded_stream_.remember(stream);
}

void LtProduct::launch_bias_gradient(const mm::LtPointers& p, StreamRef stream) const {
  const mm::Problem& problem = context_.problem;
  const bool from_a = problem.epilog == Epilog::bgrada;
  const mm::MatrixLayout& x = from_a ? problem.a : problem.b;  // describes the memory at p.a / p.b
  const std::int64_t row_stride = x.row_major ? x.ld : 1, col_stride = x.row_major ? 1 : x.ld;
  mm::BiasGradientReduction r;
  r.x = from_a ? p.a : p.b;
  r.x_dtype = from_a ? problem.a_dtype : problem.b_dtype;
  r.out = p.bias_gradient;
  r.out_dtype = problem.result_dtype;
  r.batch_count = problem.batch_count;
  // bgrada sums op(A) (M x K) along its rows, bgradb sums op(B) (K x N) down its columns.
  r.length = from_a ? problem.m : problem.n;
  r.sum_length = problem.k;
  r.stride_l = from_a ? row_stride : col_stride;
  r.stride_s = from_a ? col_stride : row_stride;
  r.batch_stride = x.batch_stride;
  mm::launch_bias_gradient(r, stream.native());
}

MatmulResult LtProduct::execute(const MatmulExecuteOptions& options) {
  const ExecutionTarget& target = context_.target;
  const mm::OperandSlots& operands = context_.operands;
  const mm::Problem& problem = context_.problem;
  const int device = target.device;
  // An external area the call's operands lie in would be overwritten mid-product: refused before any work.
  static constexpr const char* slot_names[mm::slot_count] = {"a", "b", "c", "bias", "epilog_aux"};
  for (int slot = 0; slot < mm::slot_count; ++slot)
    if (operands[slot].ref) work_area_.check_apart(operands[slot].ref->view(), slot_names[slot]);
  if (options.out) work_area_.check_apart(options.out->view(), "out");
  // cuBLASLt runs on the current device, which the phase makes the target's.
  Phase phase(context_.order, context_.streams, target, options.stream, options.after, "execute");
  const StreamRef stream = phase.stream();
  MatmulResult result;
  Tensor& d = result.d;
  Tensor& aux = result.aux;  // the epilog's outputs, written in place (undefined when the epilog has none)
  Tensor& bgrad = result.bias_gradient;
  {
    const mm::EpilogTraits traits = mm::epilog_traits(problem.epilog);
    const Device gpu = Device::cuda(device);
    // This stream's area (shared: grown meanwhile, or another stream's phase); cuBLASLt takes it at every call.
    const WorkAreaHold area = work_area_.acquire(lt_->workspace_bytes(), device, stream);
    void* workspace = area.data();
    void *d_ptr, *aux_ptr = nullptr, *bgrad_ptr = nullptr;
    if (host_operands_) {
      d_ptr = result_staging_.ensure(bytes_of(problem.result_shape, problem.result_dtype), device, stream);
      if (traits.aux_output)
        aux_ptr = aux_staging_.ensure(bytes_of(problem.aux_shape, problem.aux_dtype), device, stream);
      if (traits.bias_gradient)
        bgrad_ptr =
            bias_gradient_staging_.ensure(bytes_of(problem.bias_gradient_shape, problem.result_dtype), device, stream);
    } else {
      d = options.out
              ? options.out->as_tensor()
              : Tensor::empty_strided(problem.result_shape, problem.result_strides, problem.result_dtype, gpu, stream);
      d_ptr = d.data();
      if (traits.aux_output) {
        aux = Tensor::empty(problem.aux_shape, problem.aux_dtype, gpu, stream);
        aux_ptr = aux.data();
      }
      if (traits.bias_gradient) {
        bgrad = Tensor::empty(problem.bias_gradient_shape, problem.result_dtype, gpu, stream);
        bgrad_ptr = bgrad.data();
      }
    }
    if (!host_operands_) {
      // Only the operands this product has (an absent one would be skipped by the ordering and the checker alike),
      // in this order: D over C (same elements) is one range written after it is read, so listing C then D records
      // the write. cuplan Tensors among them are ordered after their pending producers first.
      static constexpr const char* read_names[mm::slot_count] = {"a", "b", "c", "bias", "aux"};
      std::array<OperandUse, mm::slot_count + 4> uses;
      std::size_t count = 0;
      const auto read = [&](const char* name, const TensorRef& ref) {
        uses[count++] = {name, &ref.view(), false, false, Access::storage(ref).get()};
      };
      for (int slot = 0; slot < mm::slot_count; ++slot)
        if (operands[slot].ref) read(read_names[slot], *operands[slot].ref);
      if (const std::optional<TensorRef>& scale = context_.options.scales.a.tensor) read("scale_a", *scale);
      if (const std::optional<TensorRef>& scale = context_.options.scales.b.tensor) read("scale_b", *scale);
      uses[count++] = {"out", &d.view(), true, !options.out, Access::storage(d).get()};
      if (const TensorView* view = area.view()) uses[count++] = {"work area", view, true};
      phase.operands(std::span<const OperandUse>(uses.data(), count));
    }
    const mm::LtPointers p = stage(stream, d_ptr, aux_ptr, bgrad_ptr);
    lt_->bind(p);
    const std::size_t workspace_bytes = workspace == nullptr ? 0 : lt_->workspace_bytes();
    // cuBLASLt writes aux's first m rows only; the rows that pad it to aux_ld are zeroed, so the aux a caller gets
    // holds no indeterminate bytes (and copying it reads only written memory). Part of the replayed graph.
    const bool zero_aux_padding = traits.aux_output && problem.aux_ld > problem.m;
    replay_.run(replay_key(p, workspace, workspace_bytes), device, stream.native(), [&](cudaStream_t s) {
      if (zero_aux_padding)
        CUPLAN_CUDA_CHECK(cudaMemsetAsync(p.aux, 0, bytes_of(problem.aux_shape, problem.aux_dtype), s));
      lt_->run(p, s, workspace, workspace_bytes);
      if (bias_gradient_kernel_) launch_bias_gradient(p, StreamRef(s));
    });
    lt_->mark_result_written(p.d, stream.native());    // outside the graph: a replay marks its D too
    if (!host_operands_) record_operand_uses(stream);  // host operands: the call blocks
    if (host_operands_) {
      // D comes back in its planned layout (the staging buffer holds it densely in that layout).
      auto back = [&](void* src, const Shape& shape, const Strides& strides, DType dtype) {
        Tensor host = empty_host_result(shape, strides, dtype);  // pinned when large: one DMA
        copy(device_view(src, dtype, shape, strides, device), host.view(), stream);
        return host;
      };
      if (options.out) {
        d = options.out->as_tensor();
        copy(TensorRef(device_view(d_ptr, problem.result_dtype, problem.result_shape, problem.result_strides, device)),
             TensorRef(d), stream);
      } else {
        d = back(d_ptr, problem.result_shape, problem.result_strides, problem.result_dtype);
      }
      if (traits.aux_output)
        aux = back(aux_ptr, problem.aux_shape, row_major_strides(problem.aux_shape), problem.aux_dtype);
      if (traits.bias_gradient)
        bgrad = back(bgrad_ptr, problem.bias_gradient_shape, row_major_strides(problem.bias_gradient_shape),
                     problem.result_dtype);
    }
    if (options.release_workspace) work_area_.release();
  }
  phase.close();
  if (target.blocking) finish_call(target, stream);
  return result;
}

void LtProduct::autotune(const AutotuneOptions& options) {
  const ExecutionTarget& target = context_.target;
  const mm::Problem& problem = context_.problem;
  const char* who = context_.who;
  const int device = target.device;
  // A choice saved by tuning::save for this problem, device kind and cuBLASLt version replaces the timing.
  const std::string tuning_key = tuning_problem();
  const std::string context = mm::tuning_context(device);
  if (const auto saved = tuning_lookup("matmul", tuning_key, context, who)) {
    if (lt_->apply_choice(*saved)) {
      replay_.invalidate();  // the chosen algorithm may have changed
      log(LogLevel::info, "{}: autotune took the saved choice (algo tile stages split-k scheme: {})", who, *saved);
      return;
    }
    log(LogLevel::info, "{}: saved choice {} is not among this plan's candidates; tuning again", who, *saved);
  }
  Phase phase(context_.order, context_.streams, target, options.stream, EventList{}, "autotune");
  const StreamRef stream = phase.stream();
  {
    const mm::EpilogTraits traits = mm::epilog_traits(problem.epilog);
    // Scratch outputs: the timed runs must not touch tensors the caller may hold.
    void* d = result_staging_.ensure(bytes_of(problem.result_shape, problem.result_dtype), device, stream);
    void* aux = traits.aux_output ? aux_staging_.ensure(bytes_of(problem.aux_shape, problem.aux_dtype), device, stream)
                                  : nullptr;
    void* bgrad =
        traits.bias_gradient
            ? bias_gradient_staging_.ensure(bytes_of(problem.bias_gradient_shape, problem.result_dtype), device, stream)
            : nullptr;
    const mm::LtPointers p = stage(stream, d, aux, bgrad);
    lt_->bind(p);
    const std::size_t ws_bytes = lt_->max_workspace_bytes();
    const WorkAreaHold area = work_area_.acquire(ws_bytes, device, stream);
    void* workspace = area.data();
    void* flush = nullptr;
    std::size_t flush_bytes = 0;
    if (options.flush_cache) {
      int l2 = 0;
      CUPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
      flush_bytes = static_cast<std::size_t>(l2) * 2;
      flush = flush_.ensure(flush_bytes, device, stream);
    }
    // Autotune runs every candidate `iterations` times and waits for the timings: it can take seconds.
    log(LogLevel::info, "{}: autotune started: {} timed runs per candidate", who, options.iterations);
    const auto started = std::chrono::steady_clock::now();
    lt_->autotune(p, stream, workspace, workspace == nullptr ? 0 : ws_bytes, options.iterations, flush, flush_bytes,
                  options.progress);
    log(LogLevel::info, "{}: autotune took {:.1f} ms", who,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    replay_.invalidate();  // the chosen algorithm may have changed
    if (!host_operands_) record_operand_uses(stream);
    flush_.release();
  }
  phase.close();
  tuning_record({"matmul", tuning_key, context, lt_->choice()});
}

std::string LtProduct::tuning_problem() const {
  const mm::Problem& p = context_.problem;
  return fmt::format("{}x{}x{} batch {} {} x {} -> {} compute {} epilog {}{}{}{} D {} {} candidates {}", p.m, p.n, p.k,
                     p.batch_count, p.a_dtype.name(), p.b_dtype.name(), p.result_dtype.name(), p.compute,
                     to_string(p.epilog), p.has_c ? " with C" : "", p.conjugate_a ? " conj A" : "",
                     p.conjugate_b ? " conj B" : "", mm::shape_string(p.result_shape),
                     p.swapped ? "row-major" : "column-major", lt_->candidate_signature());
}

std::size_t LtProduct::host_operands_bytes() const {
  const mm::OperandSlots& operands = context_.operands;
  const mm::Problem& problem = context_.problem;
  const mm::EpilogTraits traits = mm::epilog_traits(problem.epilog);
  auto matrix = [&](int slot, const mm::MatrixLayout& layout) {
    const TensorView& v = operands[slot].ref->view();
    return layout.needs_copy ? bytes_of(mm::dense_copy_shape(problem.batch_shape, layout.rows, layout.cols), v.dtype())
                             : bytes_of(v.shape(), v.dtype());
  };
  auto vector = [&](int slot) {
    return operands[slot].ref ? bytes_of(operands[slot].ref->view().shape(), operands[slot].ref->view().dtype())
                              : std::size_t{0};
  };
  std::size_t need = matrix(slot_a, problem.a) + matrix(slot_b, problem.b) + vector(slot_bias) + vector(slot_aux) +
                     bytes_of(problem.result_shape, problem.result_dtype) + lt_->workspace_bytes();
  if (traits.aux_output) need += bytes_of(problem.aux_shape, problem.aux_dtype);
  if (traits.bias_gradient) need += bytes_of(problem.bias_gradient_shape, problem.result_dtype);
  return need;
}

void LtProduct::scalars_changed(std::complex<double> alpha, std::complex<double> beta) {
  if (lt_ && lt_->set_scalars(alpha, beta)) replay_.invalidate();
}

void LtProduct::operands_changed() noexcept {
  recorded_stream_.forget();
}

void LtProduct::free() noexcept {
  lt_.reset();
  release_idle_memory();
  work_area_.release();
  scales_.release();
  flush_.release();
  replay_.reset();
}

std::size_t LtProduct::workspace_size() const noexcept {
  return lt_ ? lt_->workspace_bytes() : 0;
}

std::size_t LtProduct::held_bytes() const noexcept {
  std::size_t bytes =
      work_area_.held_bytes() + result_staging_.size() + aux_staging_.size() + bias_gradient_staging_.size();
  for (const DeviceBuffer& buffer : staging_) bytes += buffer.size();
  return bytes;
}

void LtProduct::release_idle_memory() noexcept {
  // Stream-ordered after the last use; the next execute allocates again (the fp8 scale values stay: planned once).
  work_area_.release();
  for (auto& s : staging_) s.release();
  result_staging_.release();
  aux_staging_.release();
  bias_gradient_staging_.release();
  flush_.release();
}

MatmulRouteDescription LtProduct::description() const {
  MatmulRouteDescription d;
  d.epilog_note = bias_gradient_kernel_ ? " (bias gradient by a separate kernel)" : "";
  d.execution = fmt::format("CUDA execution on cuda:{}", context_.target.device);
  if (!lt_) {
    d.algorithm = "cuBLASLt, not planned yet";
  } else {
    const std::vector<AlgorithmInfo> candidates = lt_->algorithms();
    d.algorithm =
        candidates.empty() ? std::string("cuBLASLt, no algorithm") : "cuBLASLt " + candidates.front().description;
  }
  d.location = fmt::format("cuda:{} (cuBLASLt)", context_.target.device);
  return d;
}

}  // namespace cuplan::detail
