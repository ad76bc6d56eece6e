#include "fft/fftw/fftw_backend.hpp"

#include <fftw3.h>
#include <fmt/format.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "base/log.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {
namespace {

// FFTW's planner (plan creation and destruction, fftw_plan_with_nthreads) is not thread-safe.
std::mutex& planner_mutex() {
  static std::mutex mutex;
  return mutex;
}

void init_threads_locked() {
  static bool done = false;
  if (done) return;
  fftw_init_threads();
  fftwf_init_threads();
  done = true;
}

// FFTW_ESTIMATE never reads or writes the arrays while planning; only their alignment (address mod 16) matters,
// so plans are made on addresses inside this block with the alignment of the real arrays.
alignas(64) unsigned char g_alignment_probe[256];

void* probe(int alignment, bool second) {
  return g_alignment_probe + (second ? 128 : 0) + alignment;
}

template <class Real>
void scale_walk(Real* data, const OutputWalk& walk, Real scale, int components) {
  std::int64_t index[OutputWalk::max_rank] = {};
  const std::int64_t total = walk.count();
  std::int64_t offset = 0;
  for (std::int64_t i = 0; i < total; ++i) {
    for (int c = 0; c < components; ++c) data[offset * components + c] *= scale;
    for (int d = walk.rank - 1; d >= 0; --d) {  // odometer over the walk's dimensions
      offset += walk.stride[d];
      if (++index[d] < walk.extent[d]) break;
      offset -= walk.stride[d] * walk.extent[d];
      index[d] = 0;
    }
  }
}

// Library default: one thread per 64 Ki elements, at most one per hardware thread (threads cost more than they
// give on small transforms).
int default_threads(const LayoutDecision& decision) {
  const std::int64_t elements = checked_numel(decision.in_shape);
  const std::int64_t hardware = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(std::clamp<std::int64_t>(elements / 65536, 1, hardware));
}

}  // namespace

void scale_host(void* data, DType dtype, const OutputWalk& walk, double scale) {
  const int components = dtype.is_complex() ? 2 : 1;
  if (dtype.real() == f32)
    scale_walk(static_cast<float*>(data), walk, static_cast<float>(scale), components);
  else if (dtype.real() == f64)
    scale_walk(static_cast<double*>(data), walk, scale, components);
  else
    throw NotSupported(fmt::format("FFT: scaling {} results on the CPU is not supported", dtype.name()));
}

FftwPlan::FftwPlan(const LayoutDecision& decision, int threads)
    : decision_(decision),
      double_precision_(decision.in_dtype.real() == f64),
      threads_(threads > 0 ? threads : default_threads(decision)) {
  const DType precision = decision.in_dtype.real();
  if (precision != f32 && precision != f64)
    throw NotSupported(fmt::format(
        "FFT: CPU execution supports f32/f64 (c64/c128) operands, got {}; use Execution::cuda() for half precision",
        decision.in_dtype.name()));
}

FftwPlan::~FftwPlan() {
  for (Slot& slot : slots_) destroy(slot.plan);
}

void FftwPlan::destroy(void* plan) const noexcept {
  if (plan == nullptr) return;
  std::lock_guard lock(planner_mutex());
  if (double_precision_)
    fftw_destroy_plan(static_cast<fftw_plan>(plan));
  else
    fftwf_destroy_plan(static_cast<fftwf_plan>(plan));
}

void* FftwPlan::make_plan(Direction direction, int in_alignment, int out_alignment) const {
  const AdvancedLayout& l = decision_.layout;
  std::vector<fftw_iodim64> dims(static_cast<std::size_t>(l.rank));
  for (int k = 0; k < l.rank; ++k) {
    std::int64_t is = l.istride, os = l.ostride;
    for (int j = k + 1; j < l.rank; ++j) {
      is *= l.inembed[j];
      os *= l.onembed[j];
    }
    dims[static_cast<std::size_t>(k)] = {l.n[k], is, os};
  }
  std::vector<fftw_iodim64> howmany;
  for (const BatchDim& b : l.batch_dims) howmany.push_back({b.count, b.in_stride, b.out_stride});

  void* in = probe(in_alignment, false);
  void* out = decision_.inplace_compute ? in : probe(out_alignment, true);
  const int sign = direction == Direction::forward ? FFTW_FORWARD : FFTW_BACKWARD;
  // C2R may destroy its input: the planning layer hands it a copy (or the in-place buffer) only.
  const unsigned flags = FFTW_ESTIMATE | (decision_.type == FFTType::c2r ? FFTW_DESTROY_INPUT : 0u);
  const int rank = l.rank, hm = static_cast<int>(howmany.size());

  std::lock_guard lock(planner_mutex());
  init_threads_locked();
  void* plan = nullptr;
  if (double_precision_) {
    fftw_plan_with_nthreads(threads_);
    auto* d = reinterpret_cast<fftw_iodim64*>(dims.data());
    if (decision_.type == FFTType::c2c)
      plan = fftw_plan_guru64_dft(rank, d, hm, howmany.data(), static_cast<fftw_complex*>(in),
                                  static_cast<fftw_complex*>(out), sign, flags);
    else if (decision_.type == FFTType::r2c)
      plan = fftw_plan_guru64_dft_r2c(rank, d, hm, howmany.data(), static_cast<double*>(in),
                                      static_cast<fftw_complex*>(out), flags);
    else
      plan = fftw_plan_guru64_dft_c2r(rank, d, hm, howmany.data(), static_cast<fftw_complex*>(in),
                                      static_cast<double*>(out), flags);
  } else {
    fftwf_plan_with_nthreads(threads_);
    auto* d = reinterpret_cast<fftwf_iodim64*>(dims.data());
    auto* h = reinterpret_cast<fftwf_iodim64*>(howmany.data());
    if (decision_.type == FFTType::c2c)
      plan = fftwf_plan_guru64_dft(rank, d, hm, h, static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out),
                                   sign, flags);
    else if (decision_.type == FFTType::r2c)
      plan =
          fftwf_plan_guru64_dft_r2c(rank, d, hm, h, static_cast<float*>(in), static_cast<fftwf_complex*>(out), flags);
    else
      plan =
          fftwf_plan_guru64_dft_c2r(rank, d, hm, h, static_cast<fftwf_complex*>(in), static_cast<float*>(out), flags);
  }
  if (plan == nullptr)
    throw NotSupported(fmt::format("FFT: FFTW could not plan a rank-{} {} transform with {} batch dimensions", rank,
                                   to_string(decision_.type), hm));
  log(LogLevel::info, "FFT: FFTW planned {} {} rank {} ({} batch dims, {} threads, alignment in {} out {})",
      decision_.in_dtype.name(), to_string(decision_.type), rank, hm, threads_, in_alignment, out_alignment);
  return plan;
}

void FftwPlan::execute(Direction direction, void* in, void* out, double scale) {
  static_assert(sizeof(fftw_iodim64) == sizeof(fftwf_iodim64));
  Slot& slot = slots_[direction == Direction::forward ? 0 : 1];
  const int in_alignment =
      double_precision_ ? fftw_alignment_of(static_cast<double*>(in)) : fftwf_alignment_of(static_cast<float*>(in));
  const int out_alignment =
      double_precision_ ? fftw_alignment_of(static_cast<double*>(out)) : fftwf_alignment_of(static_cast<float*>(out));
  if (slot.plan == nullptr || slot.in_alignment != in_alignment || slot.out_alignment != out_alignment) {
    void* plan = make_plan(direction, in_alignment, out_alignment);
    destroy(slot.plan);
    slot = {plan, in_alignment, out_alignment};
  }
  if (double_precision_) {
    auto* p = static_cast<fftw_plan>(slot.plan);
    if (decision_.type == FFTType::c2c)
      fftw_execute_dft(p, static_cast<fftw_complex*>(in), static_cast<fftw_complex*>(out));
    else if (decision_.type == FFTType::r2c)
      fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<fftw_complex*>(out));
    else
      fftw_execute_dft_c2r(p, static_cast<fftw_complex*>(in), static_cast<double*>(out));
  } else {
    auto* p = static_cast<fftwf_plan>(slot.plan);
    if (decision_.type == FFTType::c2c)
      fftwf_execute_dft(p, static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out));
    else if (decision_.type == FFTType::r2c)
      fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<fftwf_complex*>(out));
    else
      fftwf_execute_dft_c2r(p, static_cast<fftwf_complex*>(in), static_cast<float*>(out));
  }
  if (scale != 1.0) scale_host(out, decision_.out_dtype, output_walk(decision_.layout, decision_.type), scale);
}

}  // namespace cuplan::detail
