// SPDX-License-Identifier: Apache-2.0
// The CUDA runners of a convolution. Separate passes: pad into the canonical work buffer, cuFFT forward (the FFT's
// CufftPlan), product with the kernel's spectrum, cuFFT inverse, crop into the result. Fused, 1D: one cuFFTDx kernel
// per row (convolution/cuda), reading the operand and writing the result once. Fused, 2D and 3D: one cuFFTDx kernel
// per batch entry where the whole transform fits a block (fused_block.cuh), else cuFFT on the inner axes, one cuFFTDx
// kernel along the first axis (forward, product, inverse), cuFFT's inverse on the inner axes. All keep the kernel's
// spectrum, scaled by 1/N, computed by cuFFT at plan and reset_kernel.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "base/cuda_check.hpp"
#include "base/log.hpp"
#include "convolution/canonical_walk.hpp"
#include "convolution/convolution_runner.hpp"
#include "convolution/cuda/convolution_kernels.hpp"
#include "convolution/cuda/fused_choice.hpp"
#include "convolution/cuda/fused_launch.hpp"
#include "cuplan/config.hpp"
#include "cuplan/errors.hpp"
#include "fft/cufft/cufft_backend.hpp"
#include "fft/cufft/scale.hpp"
#include "plan/ordering/tensor_accesses.hpp"
#include "plan/work_area.hpp"
#include "runtime/access.hpp"

namespace cuplan::detail {
namespace {

std::size_t bytes_of(std::int64_t count, std::size_t element) {
  return static_cast<std::size_t>(count) * element;
}

/// True when the tensor `walk` describes is laid out as the dense work buffer `dims` (the same extents, row-major,
/// batch entries `entry` apart in canonical order): cuFFT can then read or write it in place of the work buffer,
/// and the pad or crop pass is not needed (circular mode on dense operands).
bool is_work_layout(const CanonicalWalk& walk, const WorkDims& dims) {
  std::int64_t dense = 1;
  for (int i = 2; i >= 0; --i) {
    if (walk.extent[i] != dims.length[i] || dims.offset[i] != 0) return false;
    if (walk.extent[i] != 1 && walk.stride[i] != dense) return false;
    dense *= dims.length[i];
  }
  for (int i = walk.batch_rank - 1; i >= 0; --i) {
    if (walk.batch_extent[i] != 1 && walk.batch_stride[i] != dense) return false;
    dense *= walk.batch_extent[i];
  }
  return true;
}

class DeviceConvolutionRunner final : public ConvolutionRunner {
 public:
  DeviceConvolutionRunner(const ConvolutionRunnerContext& context, const ConvolutionOptions& options,
                          const DeviceConvolutionChoice& choice, const TensorView& operand)
      : ConvolutionRunner(context),
        fused_(choice.fused),
        block_(choice.block),
        operand_device_(operand.device()),
        work_area_(resolve_work_area(options.work_area, options.work_area_buffer, "Convolution"), "Convolution") {}

  void plan(const std::optional<StreamRef>& stream, EventList& pending_after, const TensorRef* kernel) override {
    if (kernel != nullptr) work_area_.check_apart(kernel->view(), "kernel");  // read while the area is written
    Phase phase(context_.order, context_.streams, context_.target, stream, pending_after, "plan");
    pending_after = EventList{};
    const StreamRef s = phase.stream();
    if (!planned_) make_plans(s);
    if (kernel != nullptr) compute_spectrum(*kernel, s);
    phase.close();
  }

  void set_kernel(const std::optional<StreamRef>& stream, const EventList& after, const TensorRef& kernel) override {
    work_area_.check_apart(kernel.view(), "kernel");
    Phase phase(context_.order, context_.streams, context_.target, stream, after, "reset_kernel");
    compute_spectrum(kernel, phase.stream());
    phase.close();
  }

  Tensor execute(const ConvolutionCall& call) override {
    const ConvolutionGeometry& g = context_.geometry;
    const ExecutionTarget& target = context_.target;
    // An external area the call's operands lie in would be overwritten mid-call: refused before any work.
    work_area_.check_apart(call.operand.view(), "operand");
    if (call.out != nullptr) work_area_.check_apart(call.out->view(), "out");
    Phase phase(context_.order, context_.streams, target, call.stream, call.after, "execute");
    const StreamRef s = phase.stream();
    const TensorView& given = call.operand.view();
    const bool host = given.on_host();
    Tensor result = host ? make_result(call, Device::cpu(), std::nullopt)
                         : make_result(call, operand_device_, std::optional<StreamRef>(s));
    // Host operands: the whole operand goes to the device and the result back (the call blocks).
    const Tensor device_in = host ? Tensor::wrap(given).to(Device::cuda(target.device), s) : Tensor::wrap(given);
    const Tensor device_out =
        host ? Tensor::empty_strided(g.out_shape, g.out_strides, g.out_dtype, Device::cuda(target.device), s) : result;
    ensure_work(s);
    // cuplan Tensors are ordered after their pending producers first.
    if (!host)
      phase.operands({{"operand", &given, false, false, Access::storage(call.operand).get()},
                      {"out", &result.view(), true, call.out == nullptr, Access::storage(result).get()},
                      {"work area", area_.view(), true}});
    if (block_)
      run_fused_block(device_in.view(), device_out.view(), s);
    else if (fused_ && context_.geometry.rank > 1)
      run_fused_columns(device_in.view(), device_out.view(), s);
    else if (fused_)
      run_fused(device_in.view(), device_out.view(), s);
    else
      run_separate(device_in.view(), device_out.view(), s);
    if (host) cuplan::copy(device_out.view(), result.view(), s);
    if (call.operand.owning()) call.operand.record_stream(s);
    area_ = WorkAreaHold{};  // the work is enqueued: a shared area may be replaced now
    phase.close();
    if (call.release_workspace) release_work();
    if (target.blocking) finish_call(target, s);
    return result;
  }

  void order_new_operand(const std::optional<StreamRef>& stream) override { context_.order_after_last_phase(stream); }

  void free() noexcept override {
    // cuFFT's plans and the spectrum are read by the work already enqueued: the last phase first.
    try {
      context_.order.synchronize();
    } catch (const std::exception& e) {
      log(LogLevel::warning, "Convolution::free: waiting for the last phase failed: {}", e.what());
    }
    forward_.reset();
    inverse_.reset();
    kernel_forward_.reset();
    release_work();
    spectrum_.release();
    planned_ = false;
  }

  std::size_t workspace_size() const noexcept override {
    return spectrum_.size() + work_area_.held_bytes() + work_.size() + work_spectrum_.size();
  }
  std::size_t work_area_size() const noexcept override { return planned_ ? workspace_bytes_ : 0; }
  std::size_t estimate_work_area_size() const override {
    if (planned_) return workspace_bytes_;
    // The plans' layouts sized by cuFFT with auto-allocation off (nothing allocated, nothing enqueued): the very
    // calls make_plans makes, so the same bytes.
    std::size_t bytes = 0;
    for (const LayoutDecision& layout : plan_layouts())
      bytes = std::max(bytes, cufft_workspace_size(layout, context_.target.device));
    return bytes;
  }
  std::size_t held_bytes() const noexcept override { return workspace_size(); }
  void release_idle_memory() noexcept override {
    // The kernel's spectrum stays: it is the plan (the kernel may be gone). The rest is allocated again at need.
    release_work();
  }
  cuplan::ConvolutionRoute kind() const noexcept override {
    return fused_ ? cuplan::ConvolutionRoute::fused : cuplan::ConvolutionRoute::separate;
  }
  std::string execution() const override {
    const ConvolutionGeometry& g = context_.geometry;
    if (block_) {
      std::string tile = std::to_string(g.fft_length[0]);
      for (int i = 1; i < g.rank; ++i) tile += fmt::format(" x {}", g.fft_length[i]);
      return fmt::format(
          "one fused cuFFTDx kernel for the whole {}D transform, a block {} (tile {}; MathDx {}) on cuda:{}", g.rank,
          g.real && g.kernel_batch == 1 ? "for two real batch entries at once" : "for each batch entry", tile,
          fused::mathdx_version(), context_.target.device);
    }
    if (fused_ && context_.geometry.rank > 1) {
      const int axis = context_.geometry.conv_axes[0];
      const std::int64_t length = context_.geometry.fft_length[0];
      std::string column_route;
      if (column_launcher_ == nullptr)
        column_route =
            fmt::format("the fused cuFFTDx column route along axis {} (its kernels are chosen at plan", axis);
      else if (column_launcher_->split > 1)
        column_route = fmt::format(
            "three fused cuFFTDx passes along axis {} ({}-point FFTs at a stride of {} rows, {}-point FFTs with the "
            "product, the {}-point inverse; {} columns a block",
            axis, column_launcher_->split, length / column_launcher_->split, length / column_launcher_->split,
            column_launcher_->split, column_launcher_->columns_per_block);
      else
        column_route = fmt::format("one fused cuFFTDx kernel along axis {} ({} columns a block", axis,
                                   column_launcher_->columns_per_block);
      return fmt::format("cuFFT forward on the inner axes, {}; MathDx {}), cuFFT inverse on the inner axes on cuda:{}",
                         column_route, fused::mathdx_version(), context_.target.device);
    }
    if (fused_ && context_.geometry.segments > 1)
      return fmt::format(
          "one fused cuFFTDx kernel (MathDx {}), overlap-save: {} segments of {} a row, each keeping {} results, on "
          "cuda:{}",
          fused::mathdx_version(), context_.geometry.segments, context_.geometry.fft_length[0],
          context_.geometry.segment_hop, context_.target.device);
    if (fused_)
      return fmt::format("one fused cuFFTDx kernel (MathDx {}) on cuda:{}", fused::mathdx_version(),
                         context_.target.device);
    return fmt::format("cuFFT forward + product kernel + cuFFT inverse on cuda:{}", context_.target.device);
  }
  std::string location() const override {
    return fmt::format("cuda:{} ({})", context_.target.device, fused_ ? "cuFFTDx" : "cuFFT");
  }

 private:
  /// The dtype of the padded work buffers (the kernel's, and the operand's on the separate and column routes): the
  /// whole-transform kernel transforms complex values only, real operands too.
  DType work_dtype() const {
    const ConvolutionGeometry& g = context_.geometry;
    return g.real && !block_ ? g.out_dtype : g.out_dtype.real().complex();
  }
  DType complex_dtype() const { return context_.geometry.out_dtype.real().complex(); }
  /// A work buffer of `entries` batch entries as one batch axis and the FFT lengths (the spectrum's, R2C halved).
  Shape flat(std::int64_t entries, bool spectrum) const {
    const ConvolutionGeometry& g = context_.geometry;
    Shape shape{entries};
    for (int i = 0; i < g.rank; ++i)
      shape.push_back(spectrum && g.real && i == g.rank - 1 ? g.fft_length[i] / 2 + 1 : g.fft_length[i]);
    return shape;
  }

  /// The layouts of the cuFFT plans, in the order make_plans makes them: the kernel's forward transform, then the
  /// operand's forward transform (fused 2D and 3D: the inner axes, both directions, run in place or out of place),
  /// then the inverse (separate route, real operands). One batch axis per buffer (the batch axes are dense): each
  /// transform is one cuFFT call.
  std::vector<LayoutDecision> plan_layouts() const {
    const ConvolutionGeometry& g = context_.geometry;
    const DType precision = g.out_dtype.real();
    const FFTType forward_type = g.real && !block_ ? FFTType::r2c : FFTType::c2c;
    std::vector<LayoutDecision> layouts;
    layouts.push_back(plan_layout(transform_request(flat(g.kernel_batch, false), g.rank, work_dtype(), forward_type)));
    if (block_) return layouts;  // the kernel's full spectrum only: the kernel transforms the operand itself
    if (fused_) {
      if (g.rank > 1) {
        // The first convolved axis is the column kernel's. Real: R2C forward, C2R inverse on the inner axes.
        LayoutRequest inner = transform_request(flat(g.batch, false), g.rank, work_dtype(), forward_type);
        inner.axes.erase(inner.axes.begin());
        layouts.push_back(plan_layout(inner));
        if (g.real) {
          LayoutRequest back = transform_request(flat(g.batch, true), g.rank, precision.complex(), FFTType::c2r,
                                                 g.fft_length[g.rank - 1]);
          back.axes.erase(back.axes.begin());
          layouts.push_back(plan_layout(back));
        }
      }
    } else {
      layouts.push_back(plan_layout(transform_request(flat(g.batch, false), g.rank, work_dtype(), forward_type)));
      if (g.real)
        layouts.push_back(plan_layout(transform_request(flat(g.batch, true), g.rank, precision.complex(), FFTType::c2r,
                                                        g.fft_length[g.rank - 1])));
    }
    return layouts;
  }

  void make_plans(StreamRef s) {
    const ConvolutionGeometry& g = context_.geometry;
    const int device = context_.target.device;
    std::vector<LayoutDecision> layouts = plan_layouts();
    kernel_decision_ = layouts[0];
    const auto make = [&](const LayoutDecision& layout) {
      auto plan = std::make_unique<CufftPlan>(layout, device, nullptr, s);
      plan->order_setup_before(s.native());
      return plan;
    };
    kernel_forward_ = make(kernel_decision_);
    if (fused_) {
      std::string why_not;
      const RowBlockKernel* block = nullptr;
      if (block_) {
        block_launcher_ = fused_block_launcher(g, device, why_not);
        if (block_launcher_ != nullptr) block = &block_launcher_->block;
      } else if (g.rank == 1) {
        launcher_ = fused_launcher(g, device, why_not);
        if (launcher_ != nullptr) block = &launcher_->block;
      } else {
        column_launcher_ = fused_column_launcher(g, device, why_not);
        if (column_launcher_ != nullptr) block = &column_launcher_->block;
      }
      if (block == nullptr) throw NotSupported(fmt::format("Convolution: route: fused: {}", why_not));
      CUPLAN_CUDA_CHECK(block->prepare());
    }
    if (layouts.size() > 1) forward_ = make(layouts[1]);
    if (layouts.size() > 2) inverse_ = make(layouts[2]);
    // One area serves every plan (they run one after another on the phase's stream): the largest need.
    std::size_t workspace = 0;
    for (const CufftPlan* plan : {kernel_forward_.get(), forward_.get(), inverse_.get()})
      if (plan != nullptr) workspace = std::max(workspace, plan->workspace_size());
    workspace_bytes_ = workspace;
    work_area_.check(workspace_bytes_, device);  // an external buffer: big enough, on this device
    spectrum_.ensure(spectrum_bytes(), device, s);
    kernel_entries_ = kernel_entries(g);
    planned_ = true;
  }

  void ensure_work(StreamRef s) {
    const ConvolutionGeometry& g = context_.geometry;
    const int device = context_.target.device;
    area_ = work_area_.acquire(workspace_bytes_, device, s);
    workspace_ptr_ = area_.data();
    if (block_ || (fused_ && g.rank == 1)) return;  // reads the operand and writes the result directly
    work_.ensure(bytes_of(g.batch * g.fft_size, work_dtype().size()), device, s);
    if (fused_ && !g.real) return;  // 2D, 3D complex: transformed in place
    work_spectrum_.ensure(bytes_of(g.batch * g.spectrum_size, complex_dtype().size()), device, s);
  }

  /// The kernel's spectrum as the route reads it: natural, or tiled for the column kernel (whole column groups).
  std::size_t spectrum_bytes() const {
    const ConvolutionGeometry& g = context_.geometry;
    std::int64_t values = g.kernel_batch * (block_ ? g.fft_size : g.spectrum_size);
    if (column_launcher_ != nullptr) {
      const std::int64_t length = g.fft_length[0], columns = g.spectrum_size / length,
                         width = column_launcher_->columns_per_block;
      values = g.kernel_batch * ((columns + width - 1) / width) * width * length;
    }
    return bytes_of(values, complex_dtype().size());
  }

  void release_work() noexcept {
    work_area_.release();
    work_.release();
    work_spectrum_.release();
    workspace_ptr_ = nullptr;
  }

  void compute_spectrum(const TensorRef& kernel, StreamRef s) {
    const ConvolutionGeometry& g = context_.geometry;
    const int device = context_.target.device;
    const TensorView& k = kernel.view();
    const Tensor device_kernel = k.on_host() ? Tensor::wrap(k).to(Device::cuda(device), s) : Tensor::wrap(k);
    // A device kernel that is a cuplan Tensor is read after its pending producer.
    TensorAccesses kernel_access;
    if (!k.on_host()) kernel_access.begin(s, {{"kernel", &k, false, false, Access::storage(kernel).get()}});
    const CanonicalWalk walk = kernel_walk(g, device_kernel.strides());
    DeviceBuffer padded;
    void* padded_ptr = padded.ensure(bytes_of(g.kernel_batch * g.fft_size, work_dtype().size()), device, s);
    const WorkAreaHold area = work_area_.acquire(workspace_bytes_, device, s);
    void* workspace = area.data();
    CUPLAN_CUDA_CHECK(pad_device(device_kernel.data(), k.dtype(), walk, g.kernel_batch, work_dims(g, false), padded_ptr,
                                 work_dtype(), s.native()));
    kernel_forward_->bind(s.native(), workspace);
    // The column kernel reads the spectrum tiled: computed beside it first (complex: in the padded kernel's buffer).
    DeviceBuffer real_natural;
    void* natural = spectrum_.data();
    if (column_launcher_ != nullptr)
      natural = g.real
                    ? real_natural.ensure(bytes_of(g.kernel_batch * g.spectrum_size, complex_dtype().size()), device, s)
                    : padded_ptr;
    kernel_forward_->execute(Direction::forward, padded_ptr, natural);
    scale_device(natural, complex_dtype(), output_walk(kernel_decision_.layout, kernel_decision_.type),
                 1.0 / static_cast<double>(g.fft_size), s.native());
    if (column_launcher_ != nullptr) {
      const std::int64_t length = g.fft_length[0];
      CUPLAN_CUDA_CHECK(tile_column_spectrum_device(natural, spectrum_.data(), complex_dtype(), g.kernel_batch, length,
                                                    g.spectrum_size / length, column_launcher_->columns_per_block,
                                                    column_launcher_->split, s.native()));
    }
    padded.release();  // stream-ordered after the transform
    real_natural.release();
    kernel_access.end();
    if (kernel.owning()) kernel.record_stream(s);
  }

  /// Where cuFFT may read the operand and write the result directly instead of the work buffer (no pad, no crop).
  struct DirectAccess {
    bool read_operand = false;
    bool write_result = false;
  };
  /// An operand already laid out as the work buffer is transformed where it is: cuFFT's out-of-place C2C and R2C
  /// leave their input intact (only C2R overwrites its input, and C2R reads the work spectrum here, never the
  /// operand); the FFT class relies on the same for its out-of-place R2C, and both numerics tests check the operand
  /// unchanged afterwards. A result laid out as the work buffer receives the inverse directly. Both routes' rule.
  DirectAccess direct_access(const TensorView& in, const CanonicalWalk& in_walk, const TensorView& out,
                             const CanonicalWalk& out_walk, const WorkDims& dims) const {
    const auto aligned = [&](const void* p) {  // cuFFT's pointers: aligned like the complex type
      return reinterpret_cast<std::uintptr_t>(p) % complex_dtype().size() == 0;
    };
    return {.read_operand = in.dtype() == work_dtype() && aligned(in.data()) && is_work_layout(in_walk, dims),
            .write_result = out.dtype() == work_dtype() && aligned(out.data()) && is_work_layout(out_walk, dims)};
  }

  /// The frame of the separate and column routes: cuFFT's forward transform of the operand (read where it is laid
  /// out as the work buffer, else padded into it) into `spectrum`, `between` on it, cuFFT's inverse (`inverse`) into
  /// the result (written where it is laid out as the work buffer, else into the work buffer and cropped).
  template <class Between>
  void run_transformed(const TensorView& in, const TensorView& out, StreamRef s, void* spectrum, CufftPlan& inverse,
                       Between&& between) {
    const ConvolutionGeometry& g = context_.geometry;
    const cudaStream_t stream = s.native();
    const CanonicalWalk in_walk = canonical_walk(g, in.shape(), in.strides());
    const CanonicalWalk out_walk = canonical_walk(g, out.shape(), out.strides());
    const WorkDims dims = work_dims(g, false);
    const auto [read_operand, write_result] = direct_access(in, in_walk, out, out_walk, dims);
    if (!read_operand)
      CUPLAN_CUDA_CHECK(pad_device(in.data(), in.dtype(), in_walk, g.batch, dims, work_.data(), work_dtype(), stream));
    forward_->bind(stream, workspace_ptr_);
    forward_->execute(Direction::forward, read_operand ? in.data() : work_.data(), spectrum);
    between(stream);
    inverse.bind(stream, workspace_ptr_);
    inverse.execute(Direction::inverse, spectrum, write_result ? out.data() : work_.data());
    if (!write_result)
      CUPLAN_CUDA_CHECK(crop_device(work_.data(), g.out_dtype, dims, g.batch, out_walk, out.data(), stream));
  }

  /// cuFFT forward on the convolved axes, the product with the kernel's spectrum, cuFFT inverse.
  void run_separate(const TensorView& in, const TensorView& out, StreamRef s) {
    const ConvolutionGeometry& g = context_.geometry;
    run_transformed(in, out, s, work_spectrum_.data(), g.real ? *inverse_ : *forward_, [&](cudaStream_t stream) {
      CUPLAN_CUDA_CHECK(multiply_device(work_spectrum_.data(), spectrum_.data(), complex_dtype(), g.batch,
                                        g.spectrum_size, kernel_entries_, stream));
    });
  }

  /// 2D and 3D tiles that fit a block: one kernel, one block a batch entry (two real ones, `paired`), reading the
  /// operand and writing the result directly.
  void run_fused_block(const TensorView& in, const TensorView& out, StreamRef s) {
    const ConvolutionGeometry& g = context_.geometry;
    fused::FusedBlock b;
    b.in = in.data();
    b.out = out.data();
    b.spectrum = spectrum_.data();
    b.in_walk = canonical_walk(g, in.shape(), in.strides());
    b.out_walk = canonical_walk(g, out.shape(), out.strides());
    b.kernel_entries = kernel_entries_;
    b.entries = g.batch;
    for (int i = 0; i < g.rank; ++i) b.out_offset[3 - g.rank + i] = static_cast<int>(g.out_offset[i]);
    b.real_in = !in.dtype().is_complex();
    b.real_out = !out.dtype().is_complex();
    b.paired = g.real && g.kernel_batch == 1;
    CUPLAN_CUDA_CHECK(block_launcher_->launch(b, s.native()));
  }

  void run_fused(const TensorView& in, const TensorView& out, StreamRef s) {
    const ConvolutionGeometry& g = context_.geometry;
    const int axis = g.conv_axes[0];
    fused::FusedRows rows;
    rows.in = in.data();
    rows.out = out.data();
    rows.spectrum = spectrum_.data();
    rows.rows = g.batch * g.segments;
    rows.in_row_stride = uniform_row_stride(in.shape(), in.strides()).value_or(g.in_shape[axis]);
    rows.out_row_stride = g.out_shape[axis];  // dense result
    rows.spectrum_per_row = g.kernel_batch != 1;
    rows.spectrum_length = g.spectrum_size;
    rows.in_length = static_cast<int>(g.in_shape[axis]);
    rows.out_length = static_cast<int>(g.out_shape[axis]);
    rows.out_offset = static_cast<int>(g.out_offset[0]);
    rows.segments = g.segments;
    rows.hop = static_cast<int>(g.segment_hop);
    rows.in_shift = static_cast<int>(g.segment_in_shift);
    CUPLAN_CUDA_CHECK(launcher_->launch(rows, s.native()));
  }

  /// 2D and 3D: cuFFT forward on the inner axes, the column kernel along the first axis in place (forward FFT,
  /// product with the kernel's spectrum, inverse FFT), cuFFT inverse on the inner axes. The transforms along
  /// different axes commute, so this is the full transform's product. In circular mode on dense operands that is
  /// three passes over the data, against the separate route's full forward and inverse transforms and the product
  /// between them. Real operands: R2C on the inner axes into the half spectrum, the column kernel on it, C2R back.
  void run_fused_columns(const TensorView& in, const TensorView& out, StreamRef s) {
    const ConvolutionGeometry& g = context_.geometry;
    void* spectrum = g.real ? work_spectrum_.data() : work_.data();
    run_transformed(in, out, s, spectrum, g.real ? *inverse_ : *forward_, [&](cudaStream_t stream) {
      fused::FusedColumns columns;
      columns.data = spectrum;
      columns.spectrum = spectrum_.data();
      columns.entries = g.batch;
      columns.columns = g.spectrum_size / g.fft_length[0];
      columns.spectrum_per_entry = g.kernel_batch != 1;
      CUPLAN_CUDA_CHECK(column_launcher_->launch(columns, stream));
    });
  }

  bool fused_;
  bool block_;
  bool planned_ = false;
  Device operand_device_;
  const fused::FusedLauncher* launcher_ = nullptr;               // 1D
  const fused::FusedColumnLauncher* column_launcher_ = nullptr;  // 2D and 3D
  const fused::FusedBlockLauncher* block_launcher_ = nullptr;    // 2D and 3D tiles that fit a block
  LayoutDecision kernel_decision_;
  std::unique_ptr<CufftPlan> forward_, inverse_, kernel_forward_;
  CanonicalWalk kernel_entries_;
  std::size_t workspace_bytes_ = 0;
  WorkArea work_area_;  // cuFFT's: owned, the stream's shared area, or the caller's (ConvolutionOptions::work_area)
  WorkAreaHold area_;   // the area of the execute being enqueued
  DeviceBuffer spectrum_, work_, work_spectrum_;
  void* workspace_ptr_ = nullptr;
};

}  // namespace

std::unique_ptr<ConvolutionRunner> make_device_convolution_runner(const ConvolutionRunnerContext& context,
                                                                  const ConvolutionOptions& options,
                                                                  const DeviceConvolutionChoice& choice,
                                                                  const TensorView& operand) {
  return std::make_unique<DeviceConvolutionRunner>(context, options, choice, operand);
}

}  // namespace cuplan::detail
