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

FftwPlan::FftwPlan(const LayoutDecision& decision, int threads, Planning planning)
    : decision_(decision),
      double_precision_(decision.in_dtype.real() == f64),
      threads_(threads > 0 ? threads : default_threads(decision)),
      planning_(planning) {
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

  const int sign = direction == Direction::forward ? FFTW_FORWARD : FFTW_BACKWARD;
  // C2R may destroy its input: the planning layer hands it a copy (or the in-place buffer) only.
  const unsigned effort = planning_ == Planning::patient   ? FFTW_PATIENT
                          : planning_ == Planning::measure ? FFTW_MEASURE
                                                           : FFTW_ESTIMATE;
  const unsigned flags = effort | (decision_.type == FFTType::c2r ? FFTW_DESTROY_INPUT : 0u);
  const int rank = l.rank, hm = static_cast<int>(howmany.size());
  // MEASURE and PATIENT run transforms while planning: they get scratch arrays as large as the real ones, offset
  // to the same alignment, so the plan stays valid for the real arrays.
  std::vector<unsigned char> scratch;
  void* in = probe(in_alignment, false);
  void* out = decision_.inplace_compute ? in : probe(out_alignment, true);
  if (planning_ != Planning::estimate) {
    const std::size_t real_bytes = double_precision_ ? sizeof(double) : sizeof(float);
    const auto span = [&](bool input) {
      // Elements reached along each axis: the halved axis of the complex side of R2C/C2R holds n/2+1.
      const bool complex_side = input ? decision_.type != FFTType::r2c : decision_.type != FFTType::c2r;
      std::int64_t last = 0;
      for (int k = 0; k < rank; ++k) {
        std::int64_t n = dims[static_cast<std::size_t>(k)].n;
        if (k == rank - 1 && decision_.type != FFTType::c2c && complex_side) n = n / 2 + 1;
        const std::int64_t stride = input ? dims[static_cast<std::size_t>(k)].is : dims[static_cast<std::size_t>(k)].os;
        last += (n - 1) * (stride < 0 ? -stride : stride);
      }
      for (const fftw_iodim64& b : howmany) {
        const std::int64_t stride = input ? b.is : b.os;
        last += (b.n - 1) * (stride < 0 ? -stride : stride);
      }
      return static_cast<std::size_t>(last + 1) * real_bytes * (complex_side ? 2 : 1);
    };
    const std::size_t in_bytes = span(true), out_bytes = span(false);
    const std::size_t in_room = decision_.inplace_compute ? std::max(in_bytes, out_bytes) : in_bytes;
    scratch.assign(64 + in_room + 64 + (decision_.inplace_compute ? 0 : out_bytes), 0);
    const auto aligned = [](unsigned char* p, int alignment) {
      auto address = reinterpret_cast<std::uintptr_t>(p);
      address = (address + 63) / 64 * 64 + static_cast<std::uintptr_t>(alignment);
      return reinterpret_cast<void*>(address);
    };
    in = aligned(scratch.data(), in_alignment);
    out = decision_.inplace_compute ? in : aligned(scratch.data() + 64 + in_room, out_alignment);
  }

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
  log(LogLevel::info, "FFT: FFTW planned {} {} rank {} ({} batch dims, {} threads, alignment in {} out {}, {})",
      decision_.in_dtype.name(), to_string(decision_.type), rank, hm, threads_, in_alignment, out_alignment,
      planning_ == Planning::patient   ? "patient"
      : planning_ == Planning::measure ? "measure"
                                       : "estimate");
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

FftwWisdom export_fftw_wisdom() {
  std::lock_guard lock(planner_mutex());
  FftwWisdom wisdom;
  if (char* text = fftw_export_wisdom_to_string()) {
    wisdom.double_precision = text;
    fftw_free(text);
  }
  if (char* text = fftwf_export_wisdom_to_string()) {
    wisdom.single_precision = text;
    fftw_free(text);
  }
  return wisdom;
}

bool import_fftw_wisdom(const FftwWisdom& wisdom) {
  std::lock_guard lock(planner_mutex());
  init_threads_locked();  // wisdom of threaded plans names the threads solvers, unknown before this
  // The wisdom header hashes the planner's solver set, which the first plan_with_nthreads call installs.
  fftw_plan_with_nthreads(1);
  fftwf_plan_with_nthreads(1);
  bool ok = true;
  if (!wisdom.double_precision.empty()) ok = fftw_import_wisdom_from_string(wisdom.double_precision.c_str()) != 0;
  if (!wisdom.single_precision.empty())
    ok = fftwf_import_wisdom_from_string(wisdom.single_precision.c_str()) != 0 && ok;
  return ok;
}

}  // namespace cuplan::detail
