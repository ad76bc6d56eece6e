// SPDX-License-Identifier: Apache-2.0
// The logger threshold: set_log_level filters before the logger is called, and CUPLAN_LOG names the initial level.

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/execution.hpp"
#include "cuplan/r2r.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan {
namespace {

TEST(Log, ThresholdFiltersBeforeTheLogger) {
  std::vector<std::pair<LogLevel, std::string>> seen;
  set_logger([&](LogLevel level, std::string_view message) { seen.emplace_back(level, std::string(message)); });
  const LogLevel before = log_level();
  auto emit_all = [] {
    detail::log(LogLevel::debug, "debug {}", 1);
    detail::log(LogLevel::info, "info {}", 2);
    detail::log(LogLevel::warning, "warning {}", 3);
  };

  set_log_level(LogLevel::debug);
  emit_all();
  ASSERT_EQ(seen.size(), 3U);
  EXPECT_EQ(seen[0], (std::pair{LogLevel::debug, std::string("debug 1")}));

  seen.clear();
  set_log_level(LogLevel::info);
  EXPECT_EQ(log_level(), LogLevel::info);
  emit_all();
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[0].second, "info 2");
  EXPECT_EQ(seen[1].second, "warning 3");

  seen.clear();
  set_log_level(LogLevel::warning);
  emit_all();
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0], (std::pair{LogLevel::warning, std::string("warning 3")}));

  set_logger({});
  set_log_level(before);
}

// The public entry that components log through: the installed logger at the threshold, nothing without a logger,
// and InvalidArgument naming the level for a value outside LogLevel (logger installed or not).
TEST(Log, LogMessageGoesThroughTheLoggerAndChecksItsLevel) {
  const LogLevel before = log_level();
  set_log_level(LogLevel::info);
  EXPECT_NO_THROW(log_message(LogLevel::info, "before any logger"));
  std::vector<std::pair<LogLevel, std::string>> seen;
  set_logger([&](LogLevel level, std::string_view message) { seen.emplace_back(level, std::string(message)); });
  log_message(LogLevel::debug, "below the threshold");
  log_message(LogLevel::warning, "from a component");
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0], (std::pair{LogLevel::warning, std::string("from a component")}));
  for (bool with_logger : {true, false}) {
    if (!with_logger) set_logger({});
    try {
      log_message(static_cast<LogLevel>(7), "bad level");
      ADD_FAILURE() << "a level of 7 was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(
          std::string(e.what()).find("log_message: level: expected a LogLevel from 0 (debug) to 2 (warning), got 7"),
          std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(seen.size(), 1U);
  set_log_level(before);
}

// A logger that throws does not change what a call does: the library drops its exception (it used to escape a
// dct as std::runtime_error, and would have ended the process from a noexcept path).
TEST(Log, AThrowingLoggerDoesNotChangeWhatACallDoes) {
  const LogLevel before = log_level();
  int calls = 0;
  set_logger([&](LogLevel, std::string_view) {
    ++calls;
    throw std::runtime_error("a logger that throws");
  });
  set_log_level(LogLevel::debug);
  EXPECT_NO_THROW(log_message(LogLevel::warning, "a line"));
  EXPECT_NO_THROW(detail::log(LogLevel::info, "a line {}", 2));
  std::vector<double> x = {1.0, 2.0, 3.0, 4.0};
  plan_cache::clear();  // a miss: the transform plans, and logs
  Tensor y;
  EXPECT_NO_THROW(y = dct(TensorView(x.data(), {4}), {.norm = R2RNorm::ortho, .execution = Execution::cpu()}));
  set_logger({});
  set_log_level(before);
  EXPECT_GE(calls, 3);  // the two lines above and the transform's plan
  // scipy.fft.dct([1, 2, 3, 4], norm="ortho")[0] is 10 / 2.
  ASSERT_TRUE(y.defined());
  EXPECT_NEAR(y.data<double>()[0], 5.0, 1e-12);
}

// The environment is read once per process: each case runs in a fresh child process that inherits it.
TEST(Log, EnvironmentNamesTheLevel) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::pair<const char*, LogLevel> cases[] = {
      {"debug", LogLevel::debug}, {"info", LogLevel::info}, {"1", LogLevel::info}, {"warning", LogLevel::warning}};
  for (const auto& [value, expected] : cases) {
    setenv("CUPLAN_LOG", value, 1);
    EXPECT_EXIT(std::exit(log_level() == expected ? 0 : 1), ::testing::ExitedWithCode(0), "") << value;
  }
  unsetenv("CUPLAN_LOG");
  EXPECT_EXIT(std::exit(log_level() == LogLevel::debug ? 0 : 1), ::testing::ExitedWithCode(0), "");
}

TEST(Log, LevelOutsideLogLevelIsRejectedAndLeavesTheLevel) {
  const LogLevel before = log_level();
  set_log_level(LogLevel::info);
  try {
    set_log_level(static_cast<LogLevel>(7));  // was accepted, after which nothing was logged
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    for (const char* f : {"set_log_level", "level", "LogLevel", "0 (debug) to 2 (warning)", "got 7"})
      EXPECT_NE(what.find(f), std::string::npos) << f << " in: " << what;
  }
  EXPECT_EQ(log_level(), LogLevel::info);
  set_log_level(before);
}

}  // namespace
}  // namespace cuplan
