// SPDX-License-Identifier: Apache-2.0
// The logger hook. The logger is read under a shared lock so it can be replaced while other threads log.

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"

namespace cuplan {
namespace detail {
namespace {

bool environment_logs() {
  const char* value = std::getenv("CUPLAN_LOG");
  return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

// CUPLAN_LOG=debug|info|warning names the threshold; any other non-zero value (1) means info.
LogLevel environment_level() {
  if (!environment_logs()) return LogLevel::debug;
  const char* value = std::getenv("CUPLAN_LOG");
  if (std::strcmp(value, "debug") == 0) return LogLevel::debug;
  if (std::strcmp(value, "warning") == 0) return LogLevel::warning;
  return LogLevel::info;
}

// The default logger: stderr when CUPLAN_LOG is set; the threshold filters before it is called.
Logger environment_logger() {
  if (!environment_logs()) return {};
  return [](LogLevel level, std::string_view message) {
    const std::string_view name = to_string(level);
    std::fprintf(stderr, "[cuplan %.*s] %.*s\n", static_cast<int>(name.size()), name.data(),
                 static_cast<int>(message.size()), message.data());
  };
}

struct LoggerSlot {
  std::shared_mutex mutex;
  Logger logger = environment_logger();
};

LoggerSlot& slot() {
  static LoggerSlot instance;
  return instance;
}

bool initial_enabled() {
  return static_cast<bool>(slot().logger);
}

}  // namespace

std::atomic<bool> g_log_enabled{initial_enabled()};
std::atomic<LogLevel> g_log_level{environment_level()};

void emit_log(LogLevel level, std::string_view message) noexcept {
  if (level < g_log_level.load(std::memory_order_relaxed)) return;
  auto& s = slot();
  std::shared_lock lock(s.mutex);
  if (!s.logger) return;
  // A log line must not change what a call does (nor end the process from a noexcept path): what the logger throws
  // is dropped, and said once on stderr.
  try {
    s.logger(level, message);
  } catch (...) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true, std::memory_order_relaxed))
      std::fputs("[cuplan warning] the installed logger threw; its exceptions are dropped (a logger must not throw)\n",
                 stderr);
  }
}

}  // namespace detail

inline namespace CUPLAN_ABI_NAMESPACE {

void set_logger(Logger logger) {
  auto& s = detail::slot();
  std::unique_lock lock(s.mutex);
  s.logger = std::move(logger);
  detail::g_log_enabled.store(static_cast<bool>(s.logger), std::memory_order_relaxed);
}

void set_log_level(LogLevel level) {
  // A level past `warning` would silence every message without saying so.
  const auto raw = static_cast<unsigned>(level);
  if (raw > static_cast<unsigned>(LogLevel::warning)) [[unlikely]]
    throw InvalidArgument(
        fmt::format("set_log_level: level: expected a LogLevel from 0 (debug) to 2 (warning), got {}", raw));
  detail::g_log_level.store(level, std::memory_order_relaxed);
}

LogLevel log_level() noexcept {
  return detail::g_log_level.load(std::memory_order_relaxed);
}

void log_message(LogLevel level, std::string_view message) {
  const auto raw = static_cast<unsigned>(level);
  if (raw > static_cast<unsigned>(LogLevel::warning)) [[unlikely]]
    throw InvalidArgument(
        fmt::format("log_message: level: expected a LogLevel from 0 (debug) to 2 (warning), got {}", raw));
  if (!detail::g_log_enabled.load(std::memory_order_relaxed)) return;
  detail::emit_log(level, message);
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
