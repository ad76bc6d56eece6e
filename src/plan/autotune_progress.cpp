// SPDX-License-Identifier: Apache-2.0
// The progress report of a tuning run (see autotune_progress.hpp).

#include "plan/autotune_progress.hpp"

#include <algorithm>
#include <utility>

namespace cuplan::detail {

AutotuneReporter::AutotuneReporter(AutotuneProgressCallback callback, int candidates, int running, int iterations)
    : callback_(std::move(callback)), running_(running), started_(std::chrono::steady_clock::now()) {
  progress_.candidates = candidates;
  progress_.runs_total = running * iterations;
}

AutotuneProgress AutotuneReporter::round_done(const std::vector<std::vector<float>>& times) {
  progress_.runs_done = std::min(progress_.runs_done + running_, progress_.runs_total);
  progress_.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_).count();
  progress_.best_candidate = -1;
  progress_.best_ms = 0;
  std::vector<float> sorted;
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (times[i].empty()) continue;
    sorted = times[i];
    const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
    std::nth_element(sorted.begin(), middle, sorted.end());
    if (progress_.best_candidate < 0 || *middle < progress_.best_ms) {
      progress_.best_candidate = static_cast<int>(i);
      progress_.best_ms = *middle;
    }
  }
  if (callback_) callback_(progress_);
  return progress_;
}

}  // namespace cuplan::detail
