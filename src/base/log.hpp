// SPDX-License-Identifier: Apache-2.0
#pragma once
// Internal logging: formatting happens only when a logger is installed.

#include <atomic>
#include <string_view>

#include <fmt/format.h>

#include "cuplan/execution.hpp"

namespace cuplan::detail {

extern std::atomic<bool> g_log_enabled;
extern std::atomic<LogLevel> g_log_level;
/// Passes the line to the installed logger; an exception the logger throws is dropped (said once on stderr).
void emit_log(LogLevel level, std::string_view message) noexcept;

template <class... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (!g_log_enabled.load(std::memory_order_relaxed)) return;
  if (level < g_log_level.load(std::memory_order_relaxed)) return;
  emit_log(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cuplan::detail
