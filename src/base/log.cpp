// The logger hook. The logger is read under a shared lock so it can be replaced while other threads log.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "base/log.hpp"

namespace cuplan {
namespace detail {
namespace {

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::debug:
      return "debug";
    case LogLevel::info:
      return "info";
    case LogLevel::warning:
      return "warning";
  }
  return "?";
}

// The default logger: stderr when CUPLAN_LOG is set (1/info, or debug for everything).
Logger environment_logger() {
  const char* value = std::getenv("CUPLAN_LOG");
  if (value == nullptr || *value == '\0' || std::strcmp(value, "0") == 0) return {};
  const bool debug = std::strcmp(value, "debug") == 0;
  return [debug](LogLevel level, std::string_view message) {
    if (level == LogLevel::debug && !debug) return;
    std::fprintf(stderr, "[cuplan %s] %.*s\n", level_name(level), static_cast<int>(message.size()), message.data());
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

void emit_log(LogLevel level, std::string_view message) {
  auto& s = slot();
  std::shared_lock lock(s.mutex);
  if (s.logger) s.logger(level, message);
}

}  // namespace detail

void set_logger(Logger logger) {
  auto& s = detail::slot();
  std::unique_lock lock(s.mutex);
  s.logger = std::move(logger);
  detail::g_log_enabled.store(static_cast<bool>(s.logger), std::memory_order_relaxed);
}

}  // namespace cuplan
