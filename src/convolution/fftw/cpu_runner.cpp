// SPDX-License-Identifier: Apache-2.0
// The CPU runner of a convolution: FFTW (the FFT's FftwPlan over the planner's canonical work buffers) with the
// product inside its loop. The batch is cut into chunks of a few hundred KiB; each chunk is padded, transformed,
// multiplied by the kernel's spectrum, transformed back and cropped into the result while it is in cache, chunks
// shared among the worker threads. The kernel's spectrum (scaled by 1/N) is computed once, at plan or reset_kernel.

#include <fmt/format.h>

#include <algorithm>
#include <complex>
#include <functional>
#include <memory>
#include <vector>

#include "base/host_array.hpp"
#include "convolution/canonical_walk.hpp"
#include "convolution/convolution_runner.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/names.hpp"
#include "fft/fftw/chunk_workers.hpp"
#include "fft/fftw/fftw_backend.hpp"
#include "plan/option_checks.hpp"
#include "runtime/current_stream.hpp"

namespace cuplan::detail {
namespace {

constexpr std::size_t kChunkBytes = std::size_t{512} << 10;  // per worker: the work buffers stay in L2

/// Buffers of 64-byte alignment, so that every worker's arrays share FFTW's alignment class (plans made once).
struct AlignedBuffer {
  HostArray<unsigned char> storage;
  void* data = nullptr;
  void resize(std::size_t bytes) {
    storage = HostArray<unsigned char>(std::max<std::size_t>(bytes, 1), "Convolution: FFTW work buffer");
    data = storage.data();
  }
};

template <class T>
struct IsComplex : std::false_type {};
template <class T>
struct IsComplex<std::complex<T>> : std::true_type {};

/// Pads entries [b0, b0 + count) of `src` (its walk) into the dense work buffer `dst` (zeros beyond the extents),
/// in one pass over `dst`.
template <class Src, class Dst>
void pad(const Src* src, const CanonicalWalk& w, std::int64_t b0, std::int64_t count, const WorkDims& d, Dst* dst) {
  for (std::int64_t b = 0; b < count; ++b) {
    const Src* s = src + w.batch_offset(b0 + b);
    Dst* t = dst + b * d.entry;
    for (std::int64_t i0 = 0; i0 < d.length[0]; ++i0)
      for (std::int64_t i1 = 0; i1 < d.length[1]; ++i1) {
        Dst* out = t + (i0 * d.length[1] + i1) * d.length[2];
        std::int64_t filled = 0;
        if (i0 < w.extent[0] && i1 < w.extent[1]) {
          const Src* row = s + i0 * w.stride[0] + i1 * w.stride[1];
          filled = w.extent[2];
          if (w.stride[2] == 1)
            for (std::int64_t i2 = 0; i2 < filled; ++i2) out[i2] = Dst(row[i2]);
          else
            for (std::int64_t i2 = 0; i2 < filled; ++i2) out[i2] = Dst(row[i2 * w.stride[2]]);
        }
        std::fill(out + filled, out + d.length[2], Dst{});
      }
  }
}

/// Crops entries [b0, b0 + count) of the work buffer `src` into the result `dst` (its walk).
template <class T>
void crop(const T* src, const WorkDims& d, std::int64_t b0, std::int64_t count, const CanonicalWalk& w, T* dst) {
  for (std::int64_t b = 0; b < count; ++b) {
    const T* s = src + b * d.entry;
    T* t = dst + w.batch_offset(b0 + b);
    for (std::int64_t i0 = 0; i0 < w.extent[0]; ++i0)
      for (std::int64_t i1 = 0; i1 < w.extent[1]; ++i1) {
        const T* row = s + ((i0 + d.offset[0]) * d.length[1] + i1 + d.offset[1]) * d.length[2] + d.offset[2];
        T* out = t + i0 * w.stride[0] + i1 * w.stride[1];
        if (w.stride[2] == 1)
          std::copy_n(row, w.extent[2], out);
        else
          for (std::int64_t i2 = 0; i2 < w.extent[2]; ++i2) out[i2 * w.stride[2]] = row[i2];
      }
  }
}

/// The runner for one precision R.
template <class R>
class CpuConvolutionRunner final : public ConvolutionRunner {
  using C = std::complex<R>;

 public:
  CpuConvolutionRunner(const ConvolutionRunnerContext& context, const ConvolutionOptions& options,
                       const TensorView& operand)
      : ConvolutionRunner(context), planning_(options.planning), operand_device_(operand.device()) {}

  void plan(const std::optional<StreamRef>& /*stream*/, EventList& pending_after, const TensorRef* kernel) override {
    wait_on_host(pending_after);  // the host reads the operands: their producers first
    pending_after = EventList{};
    const ConvolutionGeometry& g = context_.geometry;
    // Done once, on success only: a plan() that failed (an allocation, say) is made whole by the next one.
    if (!planned_) {
      const std::size_t work_bytes = static_cast<std::size_t>(entry_bytes());
      chunk_ = std::clamp<std::int64_t>(static_cast<std::int64_t>(kChunkBytes / std::max<std::size_t>(work_bytes, 1)),
                                        1, g.batch);
      chunks_ = (g.batch + chunk_ - 1) / chunk_;
      // Execution::cpu(0): the library default, one thread per 64 Ki elements of the work buffers.
      const int threads = context_.target.cpu_threads > 0 ? context_.target.cpu_threads
                                                          : default_cpu_threads(checked_numel(g.work_shape));
      workers_count_ = static_cast<int>(std::clamp<std::int64_t>(threads, 1, chunks_));
      kernel_entries_ = kernel_entries(g);
      make_plans(chunk_, forward_, inverse_);
      if (g.batch % chunk_ != 0) make_plans(g.batch % chunk_, tail_forward_, tail_inverse_);
      ensure_scratch();
      // One run of each plan on the workers' alignment class, here on one thread: the threads only read the plans.
      warm(*forward_, *inverse_);
      if (tail_forward_) warm(*tail_forward_, *tail_inverse_);
      planned_ = true;
    }
    if (kernel != nullptr) compute_spectrum(*kernel, std::nullopt);
  }

  void set_kernel(const std::optional<StreamRef>& stream, const EventList& after, const TensorRef& kernel) override {
    const HostPhase phase(context_.streams, kernel.view(), stream, after);
    compute_spectrum(kernel, phase.stream());
  }

  Tensor execute(const ConvolutionCall& call) override {
    const ConvolutionGeometry& g = context_.geometry;
    const TensorView& x = call.operand.view();
    const HostPhase phase(context_.streams, x, call.stream, call.after);
    const std::optional<StreamRef>& s = phase.stream();
    Tensor result = make_result(call, x.on_host() ? Device::cpu() : operand_device_, s);
    // Device operands on CPU execution: the loop reads and writes host copies.
    // Sharing the operand's owner: a cuplan Tensor is read after its pending producer.
    Tensor host_in = x.on_host() ? Tensor::wrap(x) : call.operand.as_tensor().to(Device::cpu(), s);
    Tensor host_out = result.view().on_host()
                          ? result
                          : Tensor::empty_strided(g.out_shape, g.out_strides, g.out_dtype, Device::cpu());
    ensure_scratch();
    const CanonicalWalk in_walk = canonical_walk(g, host_in.shape(), host_in.strides());
    const CanonicalWalk out_walk = canonical_walk(g, host_out.shape(), host_out.strides());
    const std::function<void(int)> job = [&](int worker) {
      for (std::int64_t c = worker; c < chunks_; c += workers_count_)
        run_chunk(c, host_in.view(), in_walk, host_out.data(), out_walk, scratch_[static_cast<std::size_t>(worker)]);
    };
    workers_.run(workers_count_, job);
    if (!result.view().on_host()) cuplan::copy(host_out.view(), result.view(), s);
    if (s) result.record_stream(*s);
    if (call.release_workspace) release_scratch();
    return result;
  }

  void free() noexcept override {
    planned_ = false;
    forward_.reset();
    inverse_.reset();
    tail_forward_.reset();
    tail_inverse_.reset();
    kernel_forward_.reset();
    scratch_.clear();
    spectrum_ = AlignedBuffer{};
    spectrum_bytes_ = 0;
  }

  std::size_t workspace_size() const noexcept override {
    std::size_t bytes = spectrum_bytes_;
    for (const Scratch& s : scratch_) bytes += s.work.bytes + s.spectrum.bytes;
    return bytes;
  }
  cuplan::ConvolutionRoute kind() const noexcept override { return cuplan::ConvolutionRoute::separate; }
  std::string execution() const override {
    return fmt::format("FFTW with the product in its loop ({} planning, {} worker(s), {} batch entr{} a chunk)",
                       to_string(planning_), workers_count_, chunk_, chunk_ == 1 ? "y" : "ies");
  }
  std::string location() const override { return "cpu (FFTW)"; }

 private:
  struct Buffer {
    AlignedBuffer storage;
    std::size_t bytes = 0;
    void resize(std::size_t n) {
      storage.resize(n);
      bytes = n;
    }
    void* data() const { return storage.data; }
  };
  struct Scratch {
    Buffer work, spectrum;
  };

  std::int64_t entry_bytes() const {
    const ConvolutionGeometry& g = context_.geometry;
    return work_dims(g, false).entry * static_cast<std::int64_t>(g.real ? sizeof(R) : sizeof(C)) +
           work_dims(g, true).entry * static_cast<std::int64_t>(sizeof(C));
  }

  /// The forward and inverse plans of `count` batch entries (one thread each: the workers share the chunks).
  void make_plans(std::int64_t count, std::unique_ptr<FftwPlan>& forward, std::unique_ptr<FftwPlan>& inverse) {
    const ConvolutionGeometry& g = context_.geometry;
    Shape work{count}, spectrum{count};
    for (int i = 0; i < g.rank; ++i) {
      work.push_back(g.fft_length[i]);
      spectrum.push_back(g.real && i == g.rank - 1 ? g.fft_length[i] / 2 + 1 : g.fft_length[i]);
    }
    const DType precision = g.out_dtype.real();
    if (g.real) {
      forward = std::make_unique<FftwPlan>(plan_layout(transform_request(work, g.rank, precision, FFTType::r2c)), 1,
                                           planning_);
      inverse = std::make_unique<FftwPlan>(
          plan_layout(transform_request(spectrum, g.rank, precision.complex(), FFTType::c2r, g.fft_length[g.rank - 1])),
          1, planning_);
    } else {
      const LayoutDecision decision = plan_layout(transform_request(work, g.rank, precision.complex(), FFTType::c2c));
      forward = std::make_unique<FftwPlan>(decision, 1, planning_);
      inverse = std::make_unique<FftwPlan>(decision, 1, planning_);
    }
  }

  void warm(FftwPlan& forward, FftwPlan& inverse) {
    Scratch& s = scratch_.front();
    forward.execute(Direction::forward, s.work.data(), s.spectrum.data(), 1.0);
    inverse.execute(Direction::inverse, s.spectrum.data(), s.work.data(), 1.0);
  }

  void compute_spectrum(const TensorRef& kernel_ref, const std::optional<StreamRef>& stream) {
    const ConvolutionGeometry& g = context_.geometry;
    const TensorView& kernel = kernel_ref.view();
    const Tensor host = kernel.on_host() ? Tensor::wrap(kernel) : kernel_ref.as_tensor().to(Device::cpu(), stream);
    const WorkDims work = work_dims(g, false), spec = work_dims(g, true);
    if (!kernel_forward_) {
      Shape shape{g.kernel_batch};
      for (int i = 0; i < g.rank; ++i) shape.push_back(g.fft_length[i]);
      const DType precision = g.out_dtype.real();
      // The spectrum first: a failed allocation leaves no plan without its spectrum.
      const std::size_t spectrum_bytes = static_cast<std::size_t>(g.kernel_batch * spec.entry) * sizeof(C);
      spectrum_.resize(spectrum_bytes);
      spectrum_bytes_ = spectrum_bytes;
      kernel_forward_ = std::make_unique<FftwPlan>(
          plan_layout(transform_request(shape, g.rank, g.real ? precision : precision.complex(),
                                        g.real ? FFTType::r2c : FFTType::c2c)),
          context_.target.cpu_threads, planning_);
    }
    const CanonicalWalk walk = kernel_walk(g, host.strides());
    Buffer padded;
    padded.resize(static_cast<std::size_t>(g.kernel_batch * work.entry) * (g.real ? sizeof(R) : sizeof(C)));
    if (g.real)
      pad(static_cast<const R*>(host.data()), walk, 0, g.kernel_batch, work, static_cast<R*>(padded.data()));
    else if (host.dtype().is_complex())
      pad(static_cast<const C*>(host.data()), walk, 0, g.kernel_batch, work, static_cast<C*>(padded.data()));
    else
      pad(static_cast<const R*>(host.data()), walk, 0, g.kernel_batch, work, static_cast<C*>(padded.data()));
    kernel_forward_->execute(Direction::forward, padded.data(), spectrum_.data, 1.0 / static_cast<double>(g.fft_size));
  }

  void run_chunk(std::int64_t c, const TensorView& in, const CanonicalWalk& in_walk, void* out,
                 const CanonicalWalk& out_walk, Scratch& s) const {
    const ConvolutionGeometry& g = context_.geometry;
    const std::int64_t b0 = c * chunk_;
    const std::int64_t count = std::min(chunk_, g.batch - b0);
    FftwPlan& forward = count == chunk_ ? *forward_ : *tail_forward_;
    FftwPlan& inverse = count == chunk_ ? *inverse_ : *tail_inverse_;
    const WorkDims work = work_dims(g, false), spec = work_dims(g, true);
    if (g.real)
      pad(static_cast<const R*>(in.data()), in_walk, b0, count, work, static_cast<R*>(s.work.data()));
    else if (in.dtype().is_complex())
      pad(static_cast<const C*>(in.data()), in_walk, b0, count, work, static_cast<C*>(s.work.data()));
    else
      pad(static_cast<const R*>(in.data()), in_walk, b0, count, work, static_cast<C*>(s.work.data()));
    forward.execute(Direction::forward, s.work.data(), s.spectrum.data(), 1.0);
    multiply(static_cast<C*>(s.spectrum.data()), b0, count, spec.entry);
    inverse.execute(Direction::inverse, s.spectrum.data(), s.work.data(), 1.0);
    if (g.real)
      crop(static_cast<const R*>(s.work.data()), work, b0, count, out_walk, static_cast<R*>(out));
    else
      crop(static_cast<const C*>(s.work.data()), work, b0, count, out_walk, static_cast<C*>(out));
  }

  /// Spectrum entries [b0, b0 + count) times the kernel entry each uses.
  void multiply(C* spectrum, std::int64_t b0, std::int64_t count, std::int64_t entry) const {
    const C* kernel = static_cast<const C*>(spectrum_.data);
    for (std::int64_t b = 0; b < count; ++b) {
      const C* h = kernel + kernel_entries_.batch_offset(b0 + b) * entry;
      C* x = spectrum + b * entry;
      for (std::int64_t i = 0; i < entry; ++i) x[i] *= h[i];
    }
  }

  /// The workers' chunk buffers (64-byte aligned like the ones the plans were warmed on).
  void ensure_scratch() {
    if (!scratch_.empty()) return;
    const ConvolutionGeometry& g = context_.geometry;
    // Kept only whole: a failed allocation leaves none, and the next call allocates them again.
    std::vector<Scratch> scratch(static_cast<std::size_t>(workers_count_));
    for (Scratch& s : scratch) {
      s.work.resize(static_cast<std::size_t>(chunk_ * work_dims(g, false).entry) * (g.real ? sizeof(R) : sizeof(C)));
      s.spectrum.resize(static_cast<std::size_t>(chunk_ * work_dims(g, true).entry) * sizeof(C));
    }
    scratch_ = std::move(scratch);
  }
  /// The chunk buffers go; the plans and the spectrum stay.
  void release_scratch() { scratch_.clear(); }

  Planning planning_;
  Device operand_device_;
  std::int64_t chunk_ = 1;
  std::int64_t chunks_ = 1;
  int workers_count_ = 1;
  bool planned_ = false;  // the plans, scratch and warm-up of plan() are complete
  std::unique_ptr<FftwPlan> forward_, inverse_, tail_forward_, tail_inverse_, kernel_forward_;
  std::vector<Scratch> scratch_;
  CanonicalWalk kernel_entries_;  // operand entry -> kernel entry
  AlignedBuffer spectrum_;
  std::size_t spectrum_bytes_ = 0;
  ChunkWorkers workers_;
};

}  // namespace

std::unique_ptr<ConvolutionRunner> make_cpu_convolution_runner(const ConvolutionRunnerContext& context,
                                                               const ConvolutionOptions& options,
                                                               const TensorView& operand) {
  if (context.geometry.out_dtype.real() == f64)
    return std::make_unique<CpuConvolutionRunner<double>>(context, options, operand);
  return std::make_unique<CpuConvolutionRunner<float>>(context, options, operand);
}

}  // namespace cuplan::detail
