// SPDX-License-Identifier: Apache-2.0
// BackgroundPlanner (see background_planner.hpp).

#include "plan/planning/background_planner.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "base/log.hpp"

namespace cuplan::detail {

BackgroundPlanner& BackgroundPlanner::instance() {
  // Made at the first background call, after the CUDA runtime and the plan cache are in use, so it is destroyed
  // before them: its last jobs still plan, enqueue and return their plans to the cache.
  static BackgroundPlanner planner;
  return planner;
}

BackgroundPlanner::~BackgroundPlanner() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  if (thread_.joinable()) thread_.join();  // the thread runs the queue dry before it ends
}

void BackgroundPlanner::submit(std::function<void()> job) {
  {
    const std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
    if (!thread_.joinable()) thread_ = std::thread([this] { work(); });
  }
  queued_.notify_one();
}

void BackgroundPlanner::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    ++running_;
    lock.unlock();
    try {
      job();
    } catch (const std::exception& e) {
      log(LogLevel::warning, "background planning: a job failed outside its own error handling: {}", e.what());
    } catch (...) {
      log(LogLevel::warning, "background planning: a job failed outside its own error handling");
    }
    job = nullptr;  // what the job held goes before it counts as finished
    lock.lock();
    --running_;
    finished_.notify_all();
  }
}

void BackgroundPlanner::drain() {
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [this] { return jobs_.empty() && running_ == 0; });
}

std::size_t BackgroundPlanner::pending() const {
  const std::lock_guard lock(mutex_);
  return jobs_.size() + running_;
}

StreamRef BackgroundPlanner::stream(int device) {
  const std::lock_guard lock(mutex_);
  std::unique_ptr<Stream>& stream = streams_[device];
  if (!stream) stream = std::make_unique<Stream>(Device::cuda(device));
  return *stream;
}

void BackgroundPlanner::start_planning(const PlanKey& key) {
  const std::lock_guard lock(mutex_);
  planning_.push_back(key);
}

void BackgroundPlanner::finish_planning(const PlanKey& key) {
  {
    const std::lock_guard lock(mutex_);
    const auto it = std::find(planning_.begin(), planning_.end(), key);
    if (it != planning_.end()) planning_.erase(it);
  }
  finished_.notify_all();
}

bool BackgroundPlanner::planning(const PlanKey& key) {
  const std::lock_guard lock(mutex_);
  return std::find(planning_.begin(), planning_.end(), key) != planning_.end();
}

void BackgroundPlanner::wait_for_plan(const PlanKey& key) {
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [&] { return std::find(planning_.begin(), planning_.end(), key) == planning_.end(); });
}

}  // namespace cuplan::detail
