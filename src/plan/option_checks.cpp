// SPDX-License-Identifier: Apache-2.0
// Enum range and thread-count rules (option_checks.hpp).

#include "plan/option_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "cuplan/errors.hpp"

namespace cuplan::detail {

void throw_enum_range(const char* op, const char* option, const char* type, long long value, long long last) {
  throw InvalidArgument(fmt::format("{}: {}: expected a {} value from 0 to {} (one of its enumerators), got {}", op,
                                    option, type, last, value));
}

int cpu_threads(int threads, const char* op) {
  if (threads < 0) [[unlikely]]
    throw InvalidArgument(fmt::format(
        "{}: execution: Execution::cpu threads: expected 0 (the library default) or a positive count, got {}", op,
        threads));
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return threads == 0 ? 0 : std::min(threads, hardware);
}

int default_cpu_threads(std::int64_t elements) {
  const std::int64_t hardware = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(std::clamp<std::int64_t>(elements / 65536, 1, hardware));
}

void check_execution(Execution execution, const char* op) {
  check_enum_range(execution.kind(), Execution::Kind::cpu, op, "execution", "Execution::Kind");
  if (execution.kind() == Execution::Kind::cpu) (void)cpu_threads(execution.threads(), op);
  // -1 is the operands' device; below it names no device (the count is checked where the device is chosen).
  if (execution.kind() == Execution::Kind::cuda && execution.device() < -1) [[unlikely]]
    throw InvalidArgument(
        fmt::format("{}: execution: Execution::cuda device: expected -1 (the operands' device) or "
                    "an index of 0 or more, got {}",
                    op, execution.device()));
}

void check_blocking(Blocking blocking, const char* op) {
  check_enum_range(blocking, Blocking::always, op, "blocking", "Blocking");
}

void check_planning_mode(PlanningMode mode, const char* op) {
  check_enum_range(mode, PlanningMode::blocking, op, "planning_mode", "PlanningMode");
}

void check_axis_count(std::size_t count, const char* op, const char* verb) {
  if (count > 3) [[unlikely]]
    throw InvalidArgument(fmt::format("{}: axes: expected 1 to 3 axes to {}, got {} axes", op, verb, count));
}

}  // namespace cuplan::detail
