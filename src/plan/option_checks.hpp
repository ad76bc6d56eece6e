// SPDX-License-Identifier: Apache-2.0
#pragma once
// Range checks for the enum options and the execution choice, shared by every operation and every path (class
// form, function form on a plan-cache hit or miss). A value cast from an out-of-range integer is an InvalidArgument
// before it can reach a plan key, where it could pack into the same bits as a valid value.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cuplan/execution.hpp"
#include "plan/work_area.hpp"

namespace cuplan::detail {

[[noreturn]] void throw_enum_range(const char* op, const char* option, const char* type, long long value,
                                   long long last);

/// InvalidArgument "<op>: <option>: expected a <type> from 0 to <last>, got <value>" unless 0 <= value <= last.
template <class E>
requires std::is_enum_v<E>
inline void check_enum_range(E value, E last, const char* op, const char* option, const char* type) {
  using U = std::underlying_type_t<E>;
  const auto raw = static_cast<long long>(static_cast<U>(value));
  if (raw < 0 || raw > static_cast<long long>(static_cast<U>(last))) [[unlikely]]
    throw_enum_range(op, option, type, raw, static_cast<long long>(static_cast<U>(last)));
}

/// The thread rule of Execution::cpu(threads): negative counts are an InvalidArgument; 0 stays 0, the library's
/// default (default_cpu_threads for FFTW); a count above the hardware concurrency is clamped to it (more threads than
/// cores only add contention, and a huge count would start that many threads).
int cpu_threads(int threads, const char* op);

/// The library default for a CPU transform of `elements` elements (Execution::cpu(0)): one thread per 64 Ki
/// elements, at least one and at most one per hardware thread (threads cost more than they give on small
/// transforms). FFT's and the real-to-real transforms' FFTW plans share it.
int default_cpu_threads(std::int64_t elements);

/// Execution kind in range and the thread rule (the device index is checked where a device is chosen).
void check_execution(Execution execution, const char* op);
void check_blocking(Blocking blocking, const char* op);
void check_planning_mode(PlanningMode mode, const char* op);
/// InvalidArgument "<op>: axes: expected 1 to 3 axes to <verb>, got <count> axes" for more than 3 (checked before
/// the plan key is built: a longer list would otherwise fail there, with a message about the key).
void check_axis_count(std::size_t count, const char* op, const char* verb);

/// What the options of FFT, RealTransform and Convolution check alike: FFTW's planning effort, blocking,
/// planning_mode, execution, the work-area policy and its buffer, and at most 3 axes (`verb`: what is done along
/// them).
template <class Options>
void check_operation_options(const Options& o, const char* op, const char* verb) {
  using FftwPlanning = decltype(o.planning);  // cuplan::Planning (cuplan/fft.hpp)
  check_enum_range(o.planning, FftwPlanning::patient, op, "planning", "Planning");
  check_blocking(o.blocking, op);
  check_planning_mode(o.planning_mode, op);
  check_execution(o.execution, op);
  (void)resolve_work_area(o.work_area, o.work_area_buffer, op);
  check_axis_count(o.axes.size(), op, verb);
}

}  // namespace cuplan::detail
