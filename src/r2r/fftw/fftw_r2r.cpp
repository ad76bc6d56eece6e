// SPDX-License-Identifier: Apache-2.0
// FFTW r2r plans of a RealTransform (fftw_r2r.hpp).

#include "r2r/fftw/fftw_r2r.hpp"

#include <fftw3.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "base/error_context.hpp"
#include "base/geometry.hpp"
#include "base/host_array.hpp"
#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "plan/fftw_planner_lock.hpp"
#include "plan/option_checks.hpp"

namespace cuplan::detail {
namespace {

// Run by the first FFTW planner lock of the process, which every call into FFTW's planner holds.
void init_fftw_threads() {
  fftw_init_threads();
  fftwf_init_threads();
}

fftw_r2r_kind fftw_kind(R2RKind kind) {
  static constexpr fftw_r2r_kind kinds[] = {FFTW_REDFT00, FFTW_REDFT10, FFTW_REDFT01, FFTW_REDFT11,
                                            FFTW_RODFT00, FFTW_RODFT10, FFTW_RODFT01, FFTW_RODFT11};
  return kinds[static_cast<int>(kind)];
}

// Scratch arrays for a measuring planner (it overwrites them): the layout's reach, offset for negative strides, at
// the given alignment.
struct Scratch {
  HostArray<unsigned char> storage;
  void* place(const Shape& shape, const Strides& strides, std::size_t elem, int alignment, std::size_t at) {
    const OffsetRange r = offset_range(shape, strides, "operand");
    unsigned char* base = storage.data() + at;
    auto address = reinterpret_cast<std::uintptr_t>(base);
    address = (address + 63) / 64 * 64 + static_cast<std::uintptr_t>(alignment);
    return reinterpret_cast<unsigned char*>(address) + static_cast<std::size_t>(-r.lowest) * elem;
  }
};

std::size_t reach_bytes(const Shape& shape, const Strides& strides, std::size_t elem) {
  const OffsetRange r = offset_range(shape, strides, "operand");
  return static_cast<std::size_t>(r.highest - r.lowest + 1) * elem + 128;
}

// FFTW's planner allocates tables and buffers of its own for each axis, even with FFTW_ESTIMATE, and ends the
// process when an allocation fails (its allocator asserts). What it held while planning one axis of n elements
// (peak resident memory, n = 2^26 and 2^27) was at least n elements, 2n for DCT-I: an axis whose share is more than
// the host's memory and swap (a stride-0 view of any length) is cuplan's OutOfMemory before FFTW is asked.
void require_fftw_tables_fit(const R2RDecision& d) {
  const std::uint64_t capacity = host_memory_capacity();
  if (capacity == 0) return;
  for (const R2RAxis& axis : d.transformed) {
    const std::uint64_t bytes =
        static_cast<std::uint64_t>(axis.n) * d.dtype.size() * (axis.kind == R2RKind::dct1 ? 2u : 1u);
    if (bytes > capacity)
      throw OutOfMemory(fmt::format(
          "RealTransform: FFTW plan tables of axis {} ({} of length {}): cannot allocate at least {} bytes of host "
          "memory: more than this host's {} bytes of memory and swap",
          axis.axis, to_string(axis.kind), axis.n, bytes, capacity));
  }
}

}  // namespace

FftwR2RPlan::FftwR2RPlan(const R2RDecision& decision, int threads, Planning planning)
    : decision_(decision),
      double_precision_(decision.dtype == f64),
      threads_(threads > 0 ? threads : default_cpu_threads(checked_numel(decision.shape))),
      planning_(planning) {}

FftwR2RPlan::~FftwR2RPlan() {
  if (slots_.empty()) return;
  const FftwPlannerLock lock(init_fftw_threads);
  for (const Slot& slot : slots_) {
    if (slot.plan == nullptr) continue;
    if (double_precision_)
      fftw_destroy_plan(static_cast<fftw_plan>(slot.plan));
    else
      fftwf_destroy_plan(static_cast<fftwf_plan>(slot.plan));
  }
}

void* FftwR2RPlan::make_plan(Direction direction, bool in_place, void* in, void* out) const {
  const R2RDecision& d = decision_;
  const Strides& in_strides = in_place ? d.out_strides : d.in_strides;
  std::vector<fftw_iodim64> dims, howmany;
  std::vector<fftw_r2r_kind> kinds;
  for (std::size_t i = 0; i < d.transformed.size(); ++i) {
    const int axis = d.transformed[i].axis;
    dims.push_back({d.shape[axis], in_strides[axis], d.out_strides[axis]});
    kinds.push_back(fftw_kind(d.kind_for(i, direction)));
  }
  for (int axis = 0; axis < d.shape.size(); ++axis) {
    if (std::find(d.axes.begin(), d.axes.end(), axis) != d.axes.end() || d.shape[axis] == 1) continue;
    howmany.push_back({d.shape[axis], in_strides[axis], d.out_strides[axis]});
  }
  const unsigned effort = planning_ == Planning::patient   ? FFTW_PATIENT
                          : planning_ == Planning::measure ? FFTW_MEASURE
                                                           : FFTW_ESTIMATE;
  const unsigned flags = effort | (in_place ? 0u : FFTW_PRESERVE_INPUT);
  const int rank = static_cast<int>(dims.size()), hm = static_cast<int>(howmany.size());
  const auto plan_on = [&](void* pin, void* pout, unsigned plan_flags) -> void* {
    if (double_precision_) {
      const int previous = fftw_planner_nthreads();
      fftw_plan_with_nthreads(threads_);
      void* p = fftw_plan_guru64_r2r(rank, dims.data(), hm, howmany.data(), static_cast<double*>(pin),
                                     static_cast<double*>(pout), kinds.data(), plan_flags);
      fftw_plan_with_nthreads(previous);
      return p;
    }
    const int previous = fftwf_planner_nthreads();
    fftwf_plan_with_nthreads(threads_);
    void* p = fftwf_plan_guru64_r2r(rank, reinterpret_cast<const fftwf_iodim64*>(dims.data()), hm,
                                    reinterpret_cast<const fftwf_iodim64*>(howmany.data()), static_cast<float*>(pin),
                                    static_cast<float*>(pout), kinds.data(), plan_flags);
    fftwf_plan_with_nthreads(previous);
    return p;
  };
  require_fftw_tables_fit(d);
  CUPLAN_LIBRARY_FAULT_POINT("FFTW", "fftw_plan_guru64_r2r");
  const FftwPlannerLock lock(init_fftw_threads);
  // FFTW_ESTIMATE never touches the arrays; a measuring planner (without wisdom for the problem) overwrites them,
  // so it plans on scratch arrays of the same layout and alignment.
  if (planning_ == Planning::estimate) return plan_on(in, out, flags);
  if (void* p = plan_on(in, out, flags | FFTW_WISDOM_ONLY)) return p;
  const std::size_t elem = d.dtype.size();
  Scratch scratch;
  const std::size_t in_bytes = reach_bytes(d.shape, in_strides, elem);
  scratch.storage = HostArray<unsigned char>(in_bytes + reach_bytes(d.shape, d.out_strides, elem) + 128,
                                             "RealTransform: FFTW planning arrays");
  const auto alignment = [&](void* p) { return static_cast<int>(reinterpret_cast<std::uintptr_t>(p) % 64); };
  void* sin = scratch.place(d.shape, in_strides, elem, alignment(in), 0);
  void* sout = in_place ? sin : scratch.place(d.shape, d.out_strides, elem, alignment(out), in_bytes + 64);
  return plan_on(sin, sout, flags);
}

void* FftwR2RPlan::plan_for(Direction direction, bool in_place, void* in, void* out) {
  const int in_alignment =
      double_precision_ ? fftw_alignment_of(static_cast<double*>(in)) : fftwf_alignment_of(static_cast<float*>(in));
  const int out_alignment =
      double_precision_ ? fftw_alignment_of(static_cast<double*>(out)) : fftwf_alignment_of(static_cast<float*>(out));
  for (const Slot& slot : slots_)
    if (slot.direction == direction && slot.in_place == in_place && slot.in_alignment == in_alignment &&
        slot.out_alignment == out_alignment)
      return slot.plan;
  void* plan = make_plan(direction, in_place, in, out);
  // No in-place plan is an error, raised again by every call (never a null plan kept for the next one to run); no
  // out-of-place plan is kept: the caller copies the input and runs in place.
  if (plan == nullptr && in_place)
    throw NotSupported(fmt::format("RealTransform: FFTW could not plan a rank-{} {} r2r transform",
                                   decision_.transformed.size(), decision_.dtype.name()));
  slots_.push_back({direction, in_place, in_alignment, out_alignment, plan});
  log(LogLevel::info, "RealTransform: FFTW planned {} r2r rank {} ({}, {} threads){}", decision_.dtype.name(),
      decision_.transformed.size(), in_place ? "in place" : "out of place", threads_,
      plan == nullptr ? ": no plan keeps the input, it is copied first" : "");
  return plan;
}

void FftwR2RPlan::prepare(Direction direction, bool in_place) {
  // FFTW_ESTIMATE never touches the arrays and a measuring planner plans on scratch arrays (make_plan): the probe
  // only lends its alignment, that of every cuplan allocation.
  alignas(64) static unsigned char probe[128];
  void* in = probe;
  void* out = in_place ? in : static_cast<void*>(probe + 64);
  if (plan_for(direction, in_place, in, out) == nullptr && !in_place) (void)plan_for(direction, true, in, in);
}

void FftwR2RPlan::execute_in_place(Direction direction, void* data) {
  void* plan = plan_for(direction, true, data, data);
  if (double_precision_)
    fftw_execute_r2r(static_cast<fftw_plan>(plan), static_cast<double*>(data), static_cast<double*>(data));
  else
    fftwf_execute_r2r(static_cast<fftwf_plan>(plan), static_cast<float*>(data), static_cast<float*>(data));
}

bool FftwR2RPlan::execute_out_of_place(Direction direction, const void* in, void* out) {
  void* mutable_in = const_cast<void*>(in);  // FFTW_PRESERVE_INPUT: read only
  void* plan = plan_for(direction, false, mutable_in, out);
  if (plan == nullptr) return false;
  if (double_precision_)
    fftw_execute_r2r(static_cast<fftw_plan>(plan), static_cast<double*>(mutable_in), static_cast<double*>(out));
  else
    fftwf_execute_r2r(static_cast<fftwf_plan>(plan), static_cast<float*>(mutable_in), static_cast<float*>(out));
  return true;
}

}  // namespace cuplan::detail
