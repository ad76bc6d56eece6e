// SPDX-License-Identifier: Apache-2.0
// Execution of a planned Matmul: staging, the CUDA and CPU execute paths, autotuning. The device execute path is
// kept to one cublasLtMatmul call (or one graph launch replaying it) plus integer compares when nothing changed.
#include <fmt/format.h>

#include <chrono>

#include "base/cuda_check.hpp"
#include "base/error_context.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "matmul/cpu/cpu_backend.hpp"
#include "matmul/cublaslt/bias_gradient.hpp"
#include "matmul/matmul_impl.hpp"
#include "matmul/matmul_validate.hpp"
#include "plan/cache/tuning_store.hpp"
#include "runtime/current_stream.hpp"
#include "runtime/pinned_cache.hpp"

namespace cuplan::detail {

using mm::bytes_of;
using mm::dense_view;
using mm::device_view;

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
      // D given over C itself (same elements, checked by execute): C is already where D goes.
      if (c.data() != d)
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

Tensor MatmulImpl::execute(const MatmulExecuteOptions& options) try {
  NvtxRange range(nvtx_name(nvtx_execute, "cuplan::Matmul::execute"));
  require_ready("execute");
  if (options.out) {
    // Overlap first (an out over an operand usually also misses the planned layout, and the overlap is the error
    // to report), every call: the operands may have changed since the last one.
    const TensorView* inputs[slot_count] = {};
    for (int i = 0; i < slot_count; ++i)
      if (operands_[i].ref) inputs[i] = &operands_[i].ref->view();
    mm::check_output_aliasing(*options.out, inputs, who_);
    out_signature_.require_match(*options.out, who_, "execute", "out", out_strides_note_.c_str());
  }
  return target_.cuda ? execute_cuda(options) : execute_cpu(options);
} catch (const LibraryError& error) {
  rethrow_with_context(error, fmt::format("{}.execute", who_), [this] { return error_context(); });
}

ReplayKey MatmulImpl::replay_key(const mm::LtPointers& p, const void* workspace, std::size_t workspace_bytes) const {
  ReplayKey key;
  key.add(p.a).add(p.b).add(p.c).add(p.d).add(p.bias).add(p.aux).add(p.bias_gradient).add(p.scale_a).add(p.scale_b);
  key.add(workspace).add(workspace_bytes);
  return key;
}

void MatmulImpl::record_operand_uses(StreamRef stream) {
  if (recorded_stream_.covers(stream)) return;
  for (const Operand& o : operands_)
    if (o.ref) o.ref->record_stream(stream);
  recorded_stream_.remember(stream);
}

void MatmulImpl::launch_bias_gradient(const mm::LtPointers& p, StreamRef stream) const {
  const bool from_a = problem_.epilog == Epilog::bgrada;
  const mm::MatrixLayout& x = from_a ? problem_.a : problem_.b;  // describes the memory at p.a / p.b
  const std::int64_t row_stride = x.row_major ? x.ld : 1, col_stride = x.row_major ? 1 : x.ld;
  mm::BiasGradientReduction r;
  r.x = from_a ? p.a : p.b;
  r.x_dtype = from_a ? problem_.a_dtype : problem_.b_dtype;
  r.out = p.bias_gradient;
  r.out_dtype = problem_.result_dtype;
  r.batch_count = problem_.batch_count;
  // bgrada sums op(A) (M x K) along its rows, bgradb sums op(B) (K x N) down its columns.
  r.length = from_a ? problem_.m : problem_.n;
  r.sum_length = problem_.k;
  r.stride_l = from_a ? row_stride : col_stride;
  r.stride_s = from_a ? col_stride : row_stride;
  r.batch_stride = x.batch_stride;
  mm::launch_bias_gradient(r, stream.native());
}

Tensor MatmulImpl::execute_cpu(const MatmulExecuteOptions& options) {
  const std::optional<TensorView>& out = options.out;
  // The caller's `after` events order their producers before this read: device operands are copied to the host
  // (blocking) on a stream that waits for them; host operands wait on the host.
  std::optional<StreamRef> copy_stream;
  for (const Operand& o : operands_) {
    if (o.ref && !o.ref->view().on_host()) {
      copy_stream = resolve_stream(streams_.pick(options.stream), o.ref->view().device().index());
      break;
    }
  }
  if (copy_stream) {
    for (const EventRef& e : options.after)
      CUPLAN_CUDA_CHECK(cudaStreamWaitEvent(copy_stream->native(), e.native(), 0));
  } else {
    wait_on_host(options.after);
  }
  std::array<Tensor, slot_count> host_copies;
  auto host_view = [&](int slot) -> std::optional<TensorView> {
    if (!operands_[slot].ref) return std::nullopt;
    const TensorView& v = operands_[slot].ref->view();
    if (v.on_host()) return v;
    host_copies[slot] = Tensor::wrap(v).to(Device::cpu(), copy_stream);
    return host_copies[slot].view();
  };
  std::optional<TensorView> c_view = host_view(slot_c);
  if (c_view && out && c_view->data() == out->data()) {
    // D written over C (checked to be the very same elements): gemm writes D before C is read, so read a copy.
    host_copies[slot_c] = Tensor::empty(c_view->shape(), c_view->dtype(), Device::cpu());
    copy(*c_view, host_copies[slot_c].view());
    c_view = host_copies[slot_c].view();
  }
  mm::CpuOperands in{*host_view(slot_a), *host_view(slot_b), c_view, host_view(slot_bias), host_view(slot_aux)};
  // Device operands get device results (the blocking rule, as FFT): computed on the host, then copied back.
  const bool device_result = copy_stream.has_value();
  Tensor d = out && !device_result ? Tensor::wrap(*out)
                                   : Tensor::empty_strided(problem_.result_shape, problem_.result_strides,
                                                           problem_.result_dtype, Device::cpu());
  const mm::EpilogTraits traits = mm::epilog_traits(problem_.epilog);
  aux_out_ = traits.aux_output ? Tensor::empty(problem_.aux_shape, problem_.aux_dtype, Device::cpu()) : Tensor();
  bias_gradient_out_ = traits.bias_gradient
                           ? Tensor::empty(problem_.bias_gradient_shape, problem_.result_dtype, Device::cpu())
                           : Tensor();
  mm::cpu_matmul(problem_, in, options_.alpha, options_.beta, {d.data(), aux_out_.data(), bias_gradient_out_.data()},
                 target_.cpu_threads);
  if (!device_result) return d;
  const Device device = Device::cuda(target_.operand_device);
  Tensor device_d = out ? Tensor::wrap(*out)
                        : Tensor::empty_strided(problem_.result_shape, problem_.result_strides, problem_.result_dtype,
                                                device, copy_stream);
  copy(d, device_d, copy_stream);  // from host memory: blocking
  if (aux_out_.numel() > 0) aux_out_ = aux_out_.to(device, copy_stream);
  if (bias_gradient_out_.numel() > 0) bias_gradient_out_ = bias_gradient_out_.to(device, copy_stream);
  return device_d;
}

StagedOperands MatmulImpl::staged_operands() const {
  StagedOperands o{operands_[slot_a].ref->view(), operands_[slot_b].ref->view(), std::nullopt, std::nullopt};
  if (operands_[slot_c].ref) o.c = operands_[slot_c].ref->view();
  if (operands_[slot_bias].ref) o.bias = operands_[slot_bias].ref->view();
  return o;
}

void MatmulImpl::require_unsplit_fits(const char* reason) const {
  const std::size_t limit = options_.device_memory_limit;
  if (limit == 0) return;  // the default limit: the unsplit staging runs as it always has
  const mm::EpilogTraits traits = mm::epilog_traits(problem_.epilog);
  auto matrix = [&](int slot, const mm::MatrixLayout& layout) {
    const TensorView& v = operands_[slot].ref->view();
    return layout.needs_copy ? bytes_of(mm::dense_copy_shape(problem_.batch_shape, layout.rows, layout.cols), v.dtype())
                             : bytes_of(v.shape(), v.dtype());
  };
  auto vector = [&](int slot) {
    return operands_[slot].ref ? bytes_of(operands_[slot].ref->view().shape(), operands_[slot].ref->view().dtype())
                               : std::size_t{0};
  };
  std::size_t need = matrix(slot_a, problem_.a) + matrix(slot_b, problem_.b) + vector(slot_bias) + vector(slot_aux) +
                     bytes_of(problem_.result_shape, problem_.result_dtype) + lt_->workspace_bytes();
  if (traits.aux_output) need += bytes_of(problem_.aux_shape, problem_.aux_dtype);
  if (traits.bias_gradient) need += bytes_of(problem_.bias_gradient_shape, problem_.result_dtype);
  if (need <= limit) return;
  throw NotSupported(fmt::format(
      "{}: device_memory_limit: {} bytes cannot hold this product unsplit ({} bytes of operands, result and "
      "workspace), and its host operands cannot be split: {} (epilog {}); the minimum limit for this product is {} "
      "bytes",
      who_, limit, need, reason, to_string(problem_.epilog), need));
}

Tensor MatmulImpl::execute_staged(const MatmulExecuteOptions& options, const StagedOperands& operands) {
  const int device = target_.device;
  Phase phase(order_, streams_, target_, options.stream, options.after, "execute");
  const StreamRef stream = phase.stream();
  if (!staged_) staged_ = std::make_unique<StagedMatmul>(options_, problem_, operands, device, who_);
  // A new D is pinned (docs/staging.md): the download DMAs into it, no fresh pageable pages to fault in.
  Tensor d = options.out ? Tensor::wrap(*options.out)
                         : empty_host_result(problem_.result_shape, problem_.result_strides, problem_.result_dtype);
  staged_->execute(operands, d.view(), options_.alpha, options_.beta, stream);
  aux_out_ = Tensor();
  bias_gradient_out_ = Tensor();
  if (options.release_workspace) staged_->release();
  phase.close();
  if (target_.blocking) finish_call(target_, stream);
  return d;
}

Tensor MatmulImpl::execute_cuda(const MatmulExecuteOptions& options) {
  // Host operands: chunk by chunk within device_memory_limit, unless the product cannot be split; then the unsplit
  // staging below, when it fits an explicit limit.
  if (target_.host_operands) {
    const StagedOperands operands = staged_operands();
    const char* reason = StagedMatmul::unsplittable(problem_, operands);
    if (reason == nullptr) return execute_staged(options, operands);
    require_unsplit_fits(reason);
  }
  const int device = target_.device;
  // cuBLASLt runs on the current device, which the phase makes the target's.
  Phase phase(order_, streams_, target_, options.stream, options.after, "execute");
  const StreamRef stream = phase.stream();
  Tensor d;
  {
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
    if (!target_.host_operands) {
      const auto view_of = [&](Slot slot) { return operands_[slot].ref ? &operands_[slot].ref->view() : nullptr; };
      // D over C (same elements) is one range written after it is read: listing C then D records the write.
      phase.operands({{"a", view_of(slot_a), false},
                      {"b", view_of(slot_b), false},
                      {"c", view_of(slot_c), false},
                      {"bias", view_of(slot_bias), false},
                      {"aux", view_of(slot_aux), false},
                      {"out", &d.view(), true, !options.out}});
    }
    const mm::LtPointers p = stage(stream, d_ptr, aux_ptr, bgrad_ptr);
    lt_->bind(p);
    const std::size_t workspace_bytes = workspace == nullptr ? 0 : lt_->workspace_bytes();
    // cuBLASLt writes aux's first m rows only; the rows that pad it to aux_ld are zeroed, so the aux a caller gets
    // holds no indeterminate bytes (and copying it reads only written memory). Part of the replayed graph.
    const bool zero_aux_padding = traits.aux_output && problem_.aux_ld > problem_.m;
    replay_.run(replay_key(p, workspace, workspace_bytes), device, stream.native(), [&](cudaStream_t s) {
      if (zero_aux_padding)
        CUPLAN_CUDA_CHECK(cudaMemsetAsync(p.aux, 0, bytes_of(problem_.aux_shape, problem_.aux_dtype), s));
      lt_->run(p, s, workspace, workspace_bytes);
      if (bias_gradient_kernel_) launch_bias_gradient(p, StreamRef(s));
    });
    lt_->mark_result_written(p.d, stream.native());           // outside the graph: a replay marks its D too
    if (!target_.host_operands) record_operand_uses(stream);  // host operands: the call blocks
    if (target_.host_operands) {
      // D comes back in its planned layout (the staging buffer holds it densely in that layout).
      auto back = [&](void* src, const Shape& shape, const Strides& strides, DType dtype) {
        Tensor host = empty_host_result(shape, strides, dtype);  // pinned when large: one DMA
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
  }
  phase.close();
  if (target_.blocking) finish_call(target_, stream);
  return d;
}

void MatmulImpl::autotune(const AutotuneOptions& options) try {
  NvtxRange range(nvtx_name(nvtx_autotune, "cuplan::Matmul::autotune"));
  require_ready("autotune");
  mm::check_autotune_options(options, who_);
  if (!lt_) {
    log(LogLevel::info, "{}: autotune on the CPU: one algorithm, nothing to choose", who_);
    return;
  }
  const int device = target_.device;
  // A choice saved by tuning::save for this problem, device kind and cuBLASLt version replaces the timing.
  const std::string problem = tuning_problem();
  const std::string context = mm::tuning_context(device);
  if (const auto saved = tuning_lookup("matmul", problem, context, who_)) {
    if (lt_->apply_choice(*saved)) {
      replay_.invalidate();  // the chosen algorithm may have changed
      log(LogLevel::info, "{}: autotune took the saved choice (algo tile stages split-k scheme: {})", who_, *saved);
      return;
    }
    log(LogLevel::info, "{}: saved choice {} is not among this plan's candidates; tuning again", who_, *saved);
  }
  Phase phase(order_, streams_, target_, options.stream, EventList{}, "autotune");
  const StreamRef stream = phase.stream();
  {
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
    // Autotune runs every candidate `iterations` times and waits for the timings: it can take seconds.
    log(LogLevel::info, "{}: autotune started: {} timed runs per candidate", who_, options.iterations);
    const auto started = std::chrono::steady_clock::now();
    lt_->autotune(p, stream, workspace, workspace == nullptr ? 0 : ws_bytes, options.iterations, flush, flush_bytes,
                  options.progress);
    log(LogLevel::info, "{}: autotune took {:.1f} ms", who_,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    replay_.invalidate();  // the chosen algorithm may have changed
    if (!target_.host_operands) record_operand_uses(stream);
    flush_.release();
  }
  phase.close();
  tuning_record({"matmul", problem, context, lt_->choice()});
} catch (const LibraryError& error) {
  rethrow_with_context(error, fmt::format("{}.autotune", who_), [this] { return error_context(); });
}

std::string MatmulImpl::tuning_problem() const {
  const mm::Problem& p = problem_;
  return fmt::format("{}x{}x{} batch {} {} x {} -> {} compute {} epilog {}{}{}{} D {} {} candidates {}", p.m, p.n, p.k,
                     p.batch_count, p.a_dtype.name(), p.b_dtype.name(), p.result_dtype.name(), p.compute,
                     to_string(p.epilog), p.has_c ? " with C" : "", p.conjugate_a ? " conj A" : "",
                     p.conjugate_b ? " conj B" : "", mm::shape_string(p.result_shape),
                     p.swapped ? "row-major" : "column-major", lt_->candidate_signature());
}

}  // namespace cuplan::detail
