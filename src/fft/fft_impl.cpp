// SPDX-License-Identifier: Apache-2.0
#include "fft/fft_impl.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "base/cuda_check.hpp"
#include "base/error_context.hpp"
#include "base/log.hpp"
#include "base/nvtx.hpp"
#include "base/overlap.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "fft/cufft/scale_kernel.hpp"
#include "fft/fft_validate.hpp"
#include "runtime/access.hpp"
#include "runtime/copy_kernels.hpp"
#include "runtime/storage.hpp"

namespace cuplan::detail {
namespace {

std::string str(const Dims& dims) {
  return fmt::format("[{}]", fmt::join(dims.span(), ", "));
}

bool is_host(MemorySpace space) {
  return space == MemorySpace::host_pageable || space == MemorySpace::host_pinned;
}

bool power_of_two(std::int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

}  // namespace

FftImpl::FftImpl(TensorRef operand, const FFTOptions& options, const std::optional<TensorView>& out_hint)
    : streams_(options.stream, "FFT"),
      operand_(std::move(operand)),
      operand_device_(operand_.view().device()),
      operand_space_(operand_.view().memory_space()),
      inplace_(options.inplace),
      normalization_(options.normalization),
      pending_after_(options.after),
      parity_(options.last_axis_parity),
      device_memory_limit_(options.device_memory_limit),
      planning_(options.planning) {
  validate_fft_options(options, "FFT");
  const TensorView& x = operand_.view();
  static constexpr const char* kNames[] = {"operand"};
  target_ = resolve_execution(options.execution, options.blocking, std::span<const TensorView>(&x, 1), kNames, "FFT");
  replay_.set_enabled(options.graph_replay);
  const bool staged = target_.cuda == target_.host_operands;  // operand memory is not the execution's memory

  LayoutRequest request;
  // An in-place transform writes the operand: no element may be reached twice (before any layout message).
  if (options.inplace) {
    check_writable(x, "operand", "FFT (inplace)");
    check_no_self_overlap(x, "operand", "FFT (inplace)");
  }
  request.dtype = x.dtype();
  request.shape = x.shape();
  request.strides = x.strides();
  request.axes = options.axes;
  request.type = options.fft_type;
  request.parity = options.last_axis_parity;
  request.inplace = options.inplace;
  request.result_layout = options.result_layout;
  if (out_hint) {
    if (options.inplace)
      throw InvalidArgument("FFT: out: an output cannot be given for an in-place transform (inplace = true)");
    check_writable(*out_hint, "out", "FFT");
    check_no_self_overlap(*out_hint, "out", "FFT");  // its strides would become the planned result layout
    request.out_shape = out_hint->shape();
    request.out_dtype = out_hint->dtype();
    request.out_strides = out_hint->strides();
  }
  request.stage_input = staged;
  request.stage_output = staged;
  request.loop_is_costly = target_.cuda;
  request.aligned_real_calls = target_.cuda;
  request.single_call = target_.cuda && (options.prolog || options.epilog);
  decision_ = plan_layout(request);
  if (options.prolog || options.epilog) callbacks_ = std::make_unique<CallbackSet>(options, decision_, target_);
  check_alignment(x.data(), required_alignment(x.dtype()), "operand", "FFT");
  check_inplace_room(operand_, "FFT");
  if (options.inplace) {
    // Written in place: the result seen over the operand's memory may not reach an element twice either.
    check_no_self_overlap(TensorView(x.data(), decision_.out_dtype, decision_.out_shape, decision_.out_strides,
                                     x.device(), x.memory_space()),
                          "result", "FFT (inplace)");
  }
  // Alignment: what the backend needs (not the pointer's class), so a reset may bring any usable pointer.
  operand_signature_ = OperandSignature::of(x);
  planned_strides_ = x.strides();
  operand_signature_.alignment = static_cast<std::uint32_t>(required_alignment(x.dtype()));
  out_signature_ = OperandSignature::result(decision_.out_dtype, decision_.out_shape, decision_.out_strides,
                                            is_host(operand_space_), operand_device_.index(),
                                            static_cast<std::uint32_t>(required_alignment(decision_.out_dtype)));
  if (out_hint) out_signature_.require_match(*out_hint, "FFT", nullptr, "out");

  if (decision_.in_dtype.real() == f16) {
    if (!target_.cuda)
      throw NotSupported(
          fmt::format("FFT: half precision ({}) needs CUDA execution; CPU execution (FFTW) supports "
                      "f32/f64 only",
                      decision_.in_dtype.name()));
    for (int k = 0; k < decision_.layout.rank; ++k)
      if (!power_of_two(decision_.layout.n[k]))
        throw NotSupported(fmt::format("FFT: half precision ({}) needs power-of-two lengths, got length {}",
                                       decision_.in_dtype.name(), decision_.layout.n[k]));
  }

  default_direction_ = decision_.type == FFTType::c2r ? Direction::inverse : Direction::forward;
  const double n = static_cast<double>(decision_.layout.transform_size);
  switch (normalization_) {
    case Normalization::none:
      break;
    case Normalization::inverse:
      inverse_scale_ = 1.0 / n;
      break;
    case Normalization::forward:
      forward_scale_ = 1.0 / n;
      break;
    case Normalization::ortho:
      forward_scale_ = inverse_scale_ = 1.0 / std::sqrt(n);
      break;
  }
  walk_ = output_walk(decision_.layout, decision_.type);
  state_.set_operand(true);
}

FftImpl::~FftImpl() {
  free();
}

std::size_t FftImpl::required_alignment(DType dtype) const noexcept {
  // cuFFT reads and writes real data of R2C/C2R in pairs: device memory it touches directly must be aligned to the
  // complex type (e.g. 16 bytes for f64). Host memory staged to the GPU and FFTW need the element alignment only.
  const bool cufft_touches_it = target_.cuda && !target_.host_operands;
  return cufft_touches_it ? dtype.complex().size() : dtype.alignment();
}

void FftImpl::check_inplace_room(const TensorRef& operand, const char* method) const {
  if (!inplace_ || decision_.type == FFTType::c2c || !operand.owning()) return;
  const TensorView& x = operand.view();
  const TensorView result(x.data(), decision_.out_dtype, decision_.out_shape, decision_.out_strides, x.device(),
                          x.memory_space());
  const Storage& owner = *Access::storage(operand);
  const auto offset = static_cast<std::size_t>(static_cast<const char*>(x.data()) - static_cast<char*>(owner.data()));
  if (offset + result.span_bytes() > owner.bytes())
    throw InvalidArgument(fmt::format(
        "{}: inplace: the {} result (shape {}, strides {}) needs {} bytes from the operand's start, but the "
        "operand's memory holds {}; pad the real rows along axis {} to {} values",
        method, decision_.out_dtype.name(), str(decision_.out_shape), str(decision_.out_strides), result.span_bytes(),
        owner.bytes() - offset, decision_.axes.back(),
        2 * (decision_.type == FFTType::r2c ? decision_.out_shape : decision_.in_shape)[decision_.axes.back()]));
}

const char* FftImpl::nvtx_name(NvtxPhase phase, const char* range) noexcept {
  // The layout decision is fixed at construction, so the label never changes: "FFT c2c c64 [64, 256] axes [0, 1]".
  return nvtx_.get(phase, range, [this] {
    return fmt::format("FFT {} {} {} axes [{}]", to_string(decision_.type), decision_.in_dtype.name(),
                       str(decision_.in_shape), fmt::join(decision_.axes, ", "));
  });
}

void FftImpl::plan(std::optional<StreamRef> stream) try {
  NvtxRange range(nvtx_name(nvtx_plan, "cuplan::FFT::plan"));
  state_.require_alive("plan");
  if (!target_.cuda) {
    if (!fftw_) fftw_ = std::make_unique<FftwPlan>(decision_, target_.cpu_threads, planning_);
    const std::int64_t in_numel = checked_numel(decision_.in_shape, "operand");
    const std::int64_t out_numel = checked_numel(decision_.out_shape, "result");
    if (decision_.input_copy && host_in_stage_.data() == nullptr)
      host_in_stage_ = Tensor::empty({in_numel}, decision_.in_dtype);
    if (decision_.output_copy && host_out_stage_.data() == nullptr)
      host_out_stage_ = Tensor::empty({out_numel}, decision_.out_dtype);
    state_.set_planned(true);
    log(LogLevel::info, "FFT: planned {}", describe());
    return;
  }
  Phase phase(order_, streams_, target_, stream, pending_after_, "plan");
  pending_after_ = EventList{};
  {
    // cuplan's own kernels that execute may launch are loaded here: under lazy module loading a first launch loads
    // the module, which can wait for work already running on the device and so block a planned execute.
    const TargetDeviceScope device_scope(target_);
    if (normalization_ != Normalization::none) CUPLAN_CUDA_CHECK(load_scale_kernels());
    if (decision_.input_copy || decision_.output_copy || decision_.layout.rank == 0)
      CUPLAN_CUDA_CHECK(load_strided_copy_kernels());
  }
  if (target_.host_operands) {
    // Chunk by chunk within the device memory limit: no buffer holds the whole operand on the device.
    if (!staged_)
      staged_ = std::make_unique<StagedFft>(
          StagedFftRequest{&decision_, planned_strides_, parity_, target_.device, device_memory_limit_});
    staged_->order_setup_before(phase.stream().native());
  } else {
    if (!cufft_ && decision_.layout.rank > 0) {
      cufft_ = std::make_unique<CufftPlan>(decision_, target_.device, callbacks_.get(), phase.stream());
      replay_.invalidate();  // graphs of an earlier plan (none today: the plan is made once) are stale
    }
    // Every later phase runs after this one, so after the setup cuFFT left queued when planning.
    if (cufft_) cufft_->order_setup_before(phase.stream().native());
    buffers_ready_ = false;
    ensure_buffers(phase.stream());
  }
  phase.close();
  state_.set_planned(true);
  log(LogLevel::info, "FFT: planned {}", describe());
} catch (const LibraryError& error) {
  rethrow_with_context(error, "FFT.plan", [this] { return error_context(); });
}

void FftImpl::ensure_buffers(StreamRef s) {
  const std::size_t in_bytes = static_cast<std::size_t>(checked_numel(decision_.in_shape)) * decision_.in_dtype.size();
  const std::size_t out_bytes =
      static_cast<std::size_t>(checked_numel(decision_.out_shape)) * decision_.out_dtype.size();
  workspace_ptr_ = cufft_ ? workspace_.ensure(cufft_->workspace_size(), target_.device, s) : nullptr;
  if (decision_.input_copy) in_stage_ptr_ = in_stage_.ensure(in_bytes, target_.device, s);
  if (decision_.output_copy) out_stage_ptr_ = out_stage_.ensure(out_bytes, target_.device, s);
  buffers_stream_ = s.native();
  buffers_ready_ = true;
}

void FftImpl::reset_operand(TensorRef operand, std::optional<StreamRef> stream) try {
  NvtxRange range(nvtx_name(nvtx_reset, "cuplan::FFT::reset_operand"));
  state_.require_alive("reset_operand");
  operand_signature_.require_match(operand.view(), "FFT", "reset_operand", "operand");
  if (inplace_) check_writable(operand.view(), "operand", "FFT.reset_operand (inplace)");
  check_inplace_room(operand, "FFT.reset_operand");
  if (target_.cuda && !target_.host_operands) {
    // The stream (by the object's rule) now runs after the object's last phase.
    Phase phase(order_, streams_, target_, stream, EventList{}, "reset_operand");
    phase.close();
  }
  operand_ = std::move(operand);
  state_.set_operand(true);
} catch (const LibraryError& error) {
  rethrow_with_context(error, "FFT.reset_operand", [this] { return error_context(); });
}

void FftImpl::adopt_operand(TensorRef&& operand) {
  // The plan key fixed the view; the owner's size is not in it, so in-place R2C/C2R still checks the room.
  check_inplace_room(operand, "FFT");
  operand_ = std::move(operand);
  state_.set_operand(true);
}

void FftImpl::release_operand() {
  state_.require_alive("release_operand");
  NvtxRange range(nvtx_name(nvtx_release, "cuplan::FFT::release_operand"));
  operand_ = TensorRef{};
  state_.set_operand(false);
}

void FftImpl::set_callback_data(const std::optional<void*>& prolog, const std::optional<void*>& epilog,
                                const char* method) {
  if (!prolog && !epilog) return;
  if (!callbacks_)
    throw StateError(fmt::format("{}: {}: the FFT was planned without callbacks; set FFTOptions::prolog or epilog",
                                 method, prolog ? "prolog_data" : "epilog_data"));
  callbacks_->set_user_data(prolog, epilog, method);
}

void FftImpl::free() noexcept {
  if (state_.freed()) return;
  NvtxRange range(nvtx_name(nvtx_free, "cuplan::FFT::free"));
  // A cuFFT plan's tables are read by every transform enqueued with it (and by graphs replaying them), and cuFFT
  // does not document that destroying the plan waits for them. Function-form plans are destroyed by cache eviction
  // on whichever thread returns a lease, with their last transform possibly still queued on another stream: the
  // object's last phase must be done before its plans go.
  if (cufft_ || staged_) {  // graph replays exist only with a cuFFT plan
    try {
      order_.synchronize();
    } catch (const std::exception& e) {
      log(LogLevel::warning, "FFT::free: waiting for the last phase failed: {}", e.what());
    }
  }
  replay_.reset();
  staged_.reset();
  cufft_.reset();
  fftw_.reset();
  workspace_.release();
  in_stage_.release();
  out_stage_.release();
  host_in_stage_ = Tensor{};
  host_out_stage_ = Tensor{};
  operand_ = TensorRef{};
  workspace_ptr_ = in_stage_ptr_ = out_stage_ptr_ = nullptr;
  buffers_ready_ = false;
  state_.set_freed();
}

std::size_t FftImpl::workspace_size() const noexcept {
  return cufft_ ? cufft_->workspace_size() : 0;
}

std::string FftImpl::describe() const {
  const LayoutDecision& d = decision_;
  const AdvancedLayout& l = d.layout;
  std::string copies;
  if (d.input_copy) copies += fmt::format(", input copy ({})", d.input_copy_reason);
  if (d.output_copy) copies += fmt::format(", output copy ({})", d.output_copy_reason);
  return fmt::format(
             "FFT {} {} -> {} axes [{}] shape {} -> {}, lengths [{}], {} batch dim(s) ({} call(s) per execute){}{}, "
             "normalization {}, {} execution{}{}, workspace {} bytes",
             to_string(d.type), d.in_dtype.name(), d.out_dtype.name(), fmt::join(d.axes, ", "), str(d.in_shape),
             str(d.out_shape), fmt::join(std::span(l.n, static_cast<std::size_t>(l.rank)), ", "), l.batch_dims.size(),
             target_.cuda ? l.loop_in_offsets.size() : 1, d.inplace_compute ? ", in place" : "", copies,
             to_string(normalization_), target_.cuda ? "cuFFT" : "FFTW",
             target_.cuda ? fmt::format(" on cuda:{}", target_.device) : std::string(),
             target_.cuda ? std::string() : fmt::format(" ({} planning)", to_string(planning_)), workspace_size()) +
         callbacks_description();
}

std::string FftImpl::callbacks_description() const {
  if (!callbacks_) return {};
  std::string text;
  for (CallbackRole role : {CallbackRole::prolog, CallbackRole::epilog})
    if (callbacks_->has(role)) text += ", " + callback_name(role, callbacks_->callback(role));
  return text;
}

std::string FftImpl::error_context() const {
  const LayoutDecision& d = decision_;
  return fmt::format("{} {} -> {}, shape {} -> {}, axes [{}], on {} ({})", to_string(d.type), d.in_dtype.name(),
                     d.out_dtype.name(), str(d.in_shape), str(d.out_shape), fmt::join(d.axes, ", "),
                     target_.cuda ? fmt::format("cuda:{}", target_.device) : std::string("cpu"),
                     target_.cuda ? "cuFFT" : "FFTW");
}

}  // namespace cuplan::detail
