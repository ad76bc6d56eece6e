// SPDX-License-Identifier: Apache-2.0
#pragma once
// Range checks for the enum options and the execution choice, shared by every operation and every path (class
// form, function form on a plan-cache hit or miss). A value cast from an out-of-range integer is an InvalidArgument
// before it can reach a plan key, where it could pack into the same bits as a valid value.

#include <type_traits>

#include "cuplan/execution.hpp"

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

/// The thread rule of Execution::cpu(threads): negative counts are an InvalidArgument; 0 means every hardware
/// thread; a count above the hardware concurrency is clamped to it (more threads than cores only add contention, and
/// a huge count would start that many threads).
int cpu_threads(int threads, const char* op);

/// Execution kind in range and the thread rule (the device index is checked where a device is chosen).
void check_execution(Execution execution, const char* op);
void check_blocking(Blocking blocking, const char* op);
void check_planning_mode(PlanningMode mode, const char* op);

}  // namespace cuplan::detail
