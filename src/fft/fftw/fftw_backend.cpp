// SPDX-License-Identifier: Apache-2.0
#include "fft/fftw/fftw_backend.hpp"

#include "fft/fftw/chunk_workers.hpp"

#include <fftw3.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "base/error_context.hpp"
#include "base/host_array.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "plan/cache/tuning_file.hpp"
#include "plan/fftw_planner_lock.hpp"
#include "plan/option_checks.hpp"

namespace cuplan::detail {
namespace {

// Run by the first FFTW planner lock of the process (plan/fftw_planner_lock.hpp), which every call into FFTW's
// planner holds.
void init_fftw_threads() {
  fftw_init_threads();
  fftwf_init_threads();
}

std::atomic<long> g_measured_plans{0};
std::atomic<long> g_plans_from_wisdom{0};

// FFTW_ESTIMATE never reads or writes the arrays while planning; only their alignment (address mod 16) matters,
// so plans are made on addresses inside this block with the alignment of the real arrays.
alignas(64) unsigned char g_alignment_probe[256];

void* probe(int alignment, bool second) {
  return g_alignment_probe + (second ? 128 : 0) + alignment;
}

struct ScratchArrays {
  void* in;
  void* out;
};

// Arrays for FFTW_MEASURE / FFTW_PATIENT, which run transforms while planning: as large as the real ones and
// offset to their alignment, so that the plan (and the wisdom it leaves) fits the real arrays. `storage` owns them.
ScratchArrays scratch_arrays(HostArray<unsigned char>& storage, const std::vector<fftw_iodim64>& dims,
                             const std::vector<fftw_iodim64>& howmany, const LayoutDecision& decision,
                             std::size_t real_bytes, int in_alignment, int out_alignment) {
  const auto span_bytes = [&](bool input) {
    // Elements reached along each axis: the halved axis of the complex side of R2C / C2R holds n/2+1.
    const bool complex_side = input ? decision.type != FFTType::r2c : decision.type != FFTType::c2r;
    std::int64_t last = 0;
    for (std::size_t k = 0; k < dims.size(); ++k) {
      std::int64_t n = dims[k].n;
      if (k + 1 == dims.size() && decision.type != FFTType::c2c && complex_side) n = n / 2 + 1;
      last += (n - 1) * std::abs(input ? dims[k].is : dims[k].os);
    }
    for (const fftw_iodim64& b : howmany) last += (b.n - 1) * std::abs(input ? b.is : b.os);
    return static_cast<std::size_t>(last + 1) * real_bytes * (complex_side ? 2 : 1);
  };
  const std::size_t in_bytes = span_bytes(true), out_bytes = span_bytes(false);
  const bool inplace = decision.inplace_compute;
  const std::size_t in_room = inplace ? std::max(in_bytes, out_bytes) : in_bytes;
  storage = HostArray<unsigned char>(64 + in_room + 64 + (inplace ? 0 : out_bytes), "FFT: FFTW planning arrays");
  const auto aligned = [](unsigned char* p, int alignment) {
    std::uintptr_t address = reinterpret_cast<std::uintptr_t>(p);
    address = (address + 63) / 64 * 64 + static_cast<std::uintptr_t>(alignment);
    return reinterpret_cast<void*>(address);
  };
  void* in = aligned(storage.data(), in_alignment);
  return {in, inplace ? in : aligned(storage.data() + 64 + in_room, out_alignment)};
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
      threads_(threads > 0 ? threads : default_cpu_threads(checked_numel(decision.in_shape))),
      planning_(planning) {
  const DType precision = decision.in_dtype.real();
  if (precision != f32 && precision != f64)
    throw NotSupported(fmt::format(
        "FFT: CPU execution supports f32/f64 (c64/c128) operands, got {}; use Execution::cuda() for half precision",
        decision.in_dtype.name()));
}

FftwPlan::~FftwPlan() {
  for (Slot& slot : slots_) destroy(slot.plan);
  for (ChunkSlot& slot : chunk_slots_) destroy(slot.plan);
}

void FftwPlan::destroy(void* plan) const noexcept {
  if (plan == nullptr) return;
  const FftwPlannerLock lock(init_fftw_threads);
  if (double_precision_)
    fftw_destroy_plan(static_cast<fftw_plan>(plan));
  else
    fftwf_destroy_plan(static_cast<fftwf_plan>(plan));
}

void* FftwPlan::make_plan(const LayoutDecision& decision, Direction direction, int in_alignment, int out_alignment,
                          int threads) const {
  const AdvancedLayout& l = decision.layout;
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
  const unsigned flags = effort | (decision.type == FFTType::c2r ? FFTW_DESTROY_INPUT : 0u);
  const int rank = l.rank, hm = static_cast<int>(howmany.size());
  // fftw_plan_with_nthreads is process-wide: set for this plan under the planner lock, the program's own count put
  // back after it (a program that plans with FFTW itself keeps its setting).
  struct PlannerThreads {
    bool double_precision;
    int previous;
    PlannerThreads(bool dp, int threads)
        : double_precision(dp), previous(dp ? fftw_planner_nthreads() : fftwf_planner_nthreads()) {
      dp ? fftw_plan_with_nthreads(threads) : fftwf_plan_with_nthreads(threads);
    }
    ~PlannerThreads() { double_precision ? fftw_plan_with_nthreads(previous) : fftwf_plan_with_nthreads(previous); }
    PlannerThreads(const PlannerThreads&) = delete;
    PlannerThreads& operator=(const PlannerThreads&) = delete;
  };
  const auto plan_on = [&](void* in, void* out, unsigned plan_flags) -> void* {
    const PlannerThreads planner_threads(double_precision_, threads);
    if (double_precision_) {
      auto* d = reinterpret_cast<fftw_iodim64*>(dims.data());
      if (decision.type == FFTType::c2c)
        return fftw_plan_guru64_dft(rank, d, hm, howmany.data(), static_cast<fftw_complex*>(in),
                                    static_cast<fftw_complex*>(out), sign, plan_flags);
      if (decision.type == FFTType::r2c)
        return fftw_plan_guru64_dft_r2c(rank, d, hm, howmany.data(), static_cast<double*>(in),
                                        static_cast<fftw_complex*>(out), plan_flags);
      return fftw_plan_guru64_dft_c2r(rank, d, hm, howmany.data(), static_cast<fftw_complex*>(in),
                                      static_cast<double*>(out), plan_flags);
    }
    auto* d = reinterpret_cast<fftwf_iodim64*>(dims.data());
    auto* h = reinterpret_cast<fftwf_iodim64*>(howmany.data());
    if (decision.type == FFTType::c2c)
      return fftwf_plan_guru64_dft(rank, d, hm, h, static_cast<fftwf_complex*>(in), static_cast<fftwf_complex*>(out),
                                   sign, plan_flags);
    if (decision.type == FFTType::r2c)
      return fftwf_plan_guru64_dft_r2c(rank, d, hm, h, static_cast<float*>(in), static_cast<fftwf_complex*>(out),
                                       plan_flags);
    return fftwf_plan_guru64_dft_c2r(rank, d, hm, h, static_cast<fftwf_complex*>(in), static_cast<float*>(out),
                                     plan_flags);
  };

  // FFTW keys wisdom by the problem: sizes, strides, in-place or not, the arrays' alignment, the thread count and
  // the planning flags. The probe block has the real arrays' alignment and placement, so a plan from wisdom (which
  // never touches the arrays) is made on it; only a problem the wisdom lacks is measured, on scratch arrays.
  void* const probe_in = probe(in_alignment, false);
  void* const probe_out = decision.inplace_compute ? probe_in : probe(out_alignment, true);
  CUPLAN_LIBRARY_FAULT_POINT("FFTW", "fftw_plan_guru64_dft");
  const FftwPlannerLock lock(init_fftw_threads);
  void* plan = nullptr;
  const char* source = "estimated";
  double measured_ms = -1.0;  // how long measuring took, when it ran
  if (planning_ == Planning::estimate) {
    plan = plan_on(probe_in, probe_out, flags);
  } else if ((plan = plan_on(probe_in, probe_out, flags | FFTW_WISDOM_ONLY)) != nullptr) {
    source = "from wisdom";
    g_plans_from_wisdom.fetch_add(1, std::memory_order_relaxed);
  } else {
    // Measuring runs transforms to choose among FFTW's algorithms: seconds for a large problem (more with patient).
    log(LogLevel::info,
        "FFT: FFTW {} planning of {} {} rank {} ({} batch dims, {} threads) started: it times transforms to choose",
        to_string(planning_), decision.in_dtype.name(), to_string(decision.type), rank, hm, threads);
    const auto started = std::chrono::steady_clock::now();
    HostArray<unsigned char> scratch;
    const ScratchArrays arrays =
        scratch_arrays(scratch, dims, howmany, decision, double_precision_ ? sizeof(double) : sizeof(float),
                       in_alignment, out_alignment);
    plan = plan_on(arrays.in, arrays.out, flags);
    measured_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    source = "measured";
    if (plan != nullptr) g_measured_plans.fetch_add(1, std::memory_order_relaxed);
  }
  if (plan == nullptr)
    throw NotSupported(fmt::format("FFT: FFTW could not plan a rank-{} {} transform with {} batch dimensions", rank,
                                   to_string(decision.type), hm));
  log(LogLevel::info, "FFT: FFTW planned {} {} rank {} ({} batch dims, {} threads, alignment in {} out {}, {} {}{})",
      decision.in_dtype.name(), to_string(decision.type), rank, hm, threads, in_alignment, out_alignment,
      to_string(planning_), source, measured_ms >= 0 ? fmt::format(" in {:.1f} ms", measured_ms) : std::string());
  return plan;
}

void FftwPlan::execute(Direction direction, void* in, void* out, double scale) {
  static_assert(sizeof(fftw_iodim64) == sizeof(fftwf_iodim64));
  Slot& slot = slots_[direction == Direction::forward ? 0 : 1];
  const int in_alignment = alignment_of(in);
  const int out_alignment = alignment_of(out);
  if (slot.plan == nullptr || slot.in_alignment != in_alignment || slot.out_alignment != out_alignment) {
    void* plan = make_plan(decision_, direction, in_alignment, out_alignment, threads_);
    destroy(slot.plan);
    slot = {plan, in_alignment, out_alignment};
  }
  run(slot.plan, in, out);
  if (scale != 1.0) scale_host(out, decision_.out_dtype, output_walk(decision_.layout, decision_.type), scale);
}

namespace {
// One transform through FFTW's new-array execute functions of one precision.
template <class Plan, class Real, class Complex>
void execute_fftw(FFTType type, void* plan, void* in, void* out, void (*dft)(Plan, Complex*, Complex*),
                  void (*r2c)(Plan, Real*, Complex*), void (*c2r)(Plan, Complex*, Real*)) {
  auto* p = static_cast<Plan>(plan);
  if (type == FFTType::c2c)
    dft(p, static_cast<Complex*>(in), static_cast<Complex*>(out));
  else if (type == FFTType::r2c)
    r2c(p, static_cast<Real*>(in), static_cast<Complex*>(out));
  else
    c2r(p, static_cast<Complex*>(in), static_cast<Real*>(out));
}
}  // namespace

void FftwPlan::run(void* plan, void* in, void* out) const {
  if (double_precision_)
    execute_fftw<fftw_plan, double, fftw_complex>(decision_.type, plan, in, out, fftw_execute_dft, fftw_execute_dft_r2c,
                                                  fftw_execute_dft_c2r);
  else
    execute_fftw<fftwf_plan, float, fftwf_complex>(decision_.type, plan, in, out, fftwf_execute_dft,
                                                   fftwf_execute_dft_r2c, fftwf_execute_dft_c2r);
}

int FftwPlan::alignment_of(void* p) const {
  return double_precision_ ? fftw_alignment_of(static_cast<double*>(p)) : fftwf_alignment_of(static_cast<float*>(p));
}

FftwPlanCounts fftw_plan_counts() noexcept {
  return {g_measured_plans.load(std::memory_order_relaxed), g_plans_from_wisdom.load(std::memory_order_relaxed)};
}

FftwWisdom export_fftw_wisdom() {
  const FftwPlannerLock lock(init_fftw_threads);
  FftwWisdom wisdom;
  if (char* text = fftw_export_wisdom_to_string()) {
    wisdom.double_precision = text;
    fftw_free(text);
  }
  if (char* text = fftwf_export_wisdom_to_string()) {
    wisdom.single_precision = text;
    fftwf_free(text);
  }
  return wisdom;
}

const char* import_fftw_wisdom(const FftwWisdom& wisdom) {
  const FftwPlannerLock lock(init_fftw_threads);
  // FFTW imports one precision all or nothing; the double precision wisdom is put back as it was when the single
  // precision one is rejected, so that a failed load changes nothing.
  std::string previous_double;
  if (char* text = fftw_export_wisdom_to_string()) {
    previous_double = text;
    fftw_free(text);
  }
  if (!wisdom.double_precision.empty() && fftw_import_wisdom_from_string(wisdom.double_precision.c_str()) == 0)
    return "double precision";
  if (!wisdom.single_precision.empty() && fftwf_import_wisdom_from_string(wisdom.single_precision.c_str()) == 0) {
    fftw_forget_wisdom();
    if (!previous_double.empty()) fftw_import_wisdom_from_string(previous_double.c_str());
    return "single precision";
  }
  return nullptr;
}

namespace {

// FFTW's wisdom as two sections of the tuning file (plan/cache/tuning_file.hpp), double then single precision,
// loaded both or neither.
const TuningSectionRegistrar fftw_wisdom_sections({
    .names = {"fftw-double", "fftw-single"},
    .save =
        [] {
          FftwWisdom wisdom = export_fftw_wisdom();
          return std::vector<std::string>{std::move(wisdom.double_precision), std::move(wisdom.single_precision)};
        },
    .load =
        [](const std::vector<std::string>& texts) {
          const char* rejected = import_fftw_wisdom({texts.at(0), texts.at(1)});
          if (rejected == nullptr) return std::string();
          return fmt::format(
              "FFTW rejected the saved {} wisdom (written by another FFTW version or build, or by a program that used "
              "FFTW before setting up its threads)",
              rejected);
        },
});

}  // namespace
}  // namespace cuplan::detail
