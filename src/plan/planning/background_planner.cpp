// SPDX-License-Identifier: Apache-2.0
// BackgroundPlanner (see background_planner.hpp).

#include "plan/planning/background_planner.hpp"

#include <algorithm>
#include <atomic>

namespace cuplan::detail {
namespace {

std::atomic<std::size_t> g_keys_being_planned{0};  // over every planner

}  // namespace

bool BackgroundPlanner::any_planning() noexcept {
  return g_keys_being_planned.load(std::memory_order_relaxed) != 0;
}

BackgroundPlanner& BackgroundPlanner::instance() {
  // Made at the first background call, after the CUDA runtime and the plan cache are in use, so it is destroyed
  // before them: its last jobs still plan, enqueue and return their plans to the cache.
  static BackgroundPlanner planner;
  return planner;
}

StreamRef BackgroundPlanner::stream(int device) {
  const std::lock_guard lock(mutex_);
  std::unique_ptr<Stream>& stream = streams_[device];
  if (!stream) stream = std::make_unique<Stream>(Device::cuda(device));
  return *stream;
}

void BackgroundPlanner::start_planning(const PlanKey& key) {
  const std::lock_guard lock(mutex_);
  planning_keys_.push_back(key);
  g_keys_being_planned.fetch_add(1, std::memory_order_relaxed);
}

void BackgroundPlanner::finish_planning(const PlanKey& key) {
  {
    const std::lock_guard lock(mutex_);
    const auto it = std::find(planning_keys_.begin(), planning_keys_.end(), key);
    if (it != planning_keys_.end()) {
      planning_keys_.erase(it);
      g_keys_being_planned.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  finished_.notify_all();
}

bool BackgroundPlanner::planning(const PlanKey& key) {
  const std::lock_guard lock(mutex_);
  return std::find(planning_keys_.begin(), planning_keys_.end(), key) != planning_keys_.end();
}

void BackgroundPlanner::wait_for_plan(const PlanKey& key) {
  std::unique_lock lock(mutex_);
  finished_.wait(lock,
                 [&] { return std::find(planning_keys_.begin(), planning_keys_.end(), key) == planning_keys_.end(); });
}

}  // namespace cuplan::detail
