// SPDX-License-Identifier: Apache-2.0
#pragma once
// The progress report of a tuning run (AutotuneOptions::progress), shared by every operation that tunes: counts the
// timed runs, keeps the clock, and finds the fastest candidate so far from the times measured.

#include <chrono>
#include <vector>

#include "cuplan/execution.hpp"

namespace cuplan::detail {

class AutotuneReporter {
 public:
  /// `candidates` candidates of which `running` are timed, each `iterations` times; `callback` may be empty.
  AutotuneReporter(AutotuneProgressCallback callback, int candidates, int running, int iterations);
  bool active() const noexcept { return static_cast<bool>(callback_); }
  /// After a round: `times[i]` holds every time measured so far for candidate i (empty: none). Calls the callback
  /// (an exception it throws goes on to the caller). Returns what was reported.
  AutotuneProgress round_done(const std::vector<std::vector<float>>& times);

 private:
  AutotuneProgressCallback callback_;
  AutotuneProgress progress_;
  int running_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace cuplan::detail
