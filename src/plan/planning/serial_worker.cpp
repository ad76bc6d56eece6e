// SPDX-License-Identifier: Apache-2.0
// SerialWorker (see serial_worker.hpp).

#include "plan/planning/serial_worker.hpp"

#include <exception>
#include <utility>
#include <vector>

#include "base/log.hpp"

namespace cuplan::detail {

SerialWorker::~SerialWorker() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  if (thread_.joinable()) thread_.join();  // the thread runs the queue dry before it ends
  watched_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

void SerialWorker::submit(std::function<void()> job, std::function<void()> overdue) {
  {
    const std::lock_guard lock(mutex_);
    jobs_.push_back({std::move(job), std::move(overdue)});
    if (!thread_.joinable()) thread_ = std::thread([this] { work(); });
    if (jobs_.back().overdue && !watchdog_.joinable()) watchdog_ = std::thread([this] { watch(); });
  }
  queued_.notify_one();
}

void SerialWorker::run_guarded(const std::function<void()>& task, const char* what) const noexcept {
  try {
    task();
  } catch (const std::exception& e) {
    log(LogLevel::warning, "{}: {} failed outside its own error handling: {}", name_, what, e.what());
  } catch (...) {
    log(LogLevel::warning, "{}: {} failed outside its own error handling", name_, what);
  }
}

void SerialWorker::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> job = std::move(jobs_.front().job);
    running_overdue_ = std::move(jobs_.front().overdue);
    jobs_.pop_front();
    ++running_;
    ++job_number_;
    started_ = std::chrono::steady_clock::now();
    watched_.notify_all();
    lock.unlock();
    run_guarded(job, "a job");
    job = nullptr;  // what the job held goes before it counts as finished
    lock.lock();
    --running_;
    running_overdue_ = nullptr;
    finished_.notify_all();
  }
}

void SerialWorker::watch() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stopping_ && jobs_.empty() && running_ == 0) return;
    if (running_ == 0 || !running_overdue_) {
      watched_.wait(lock);  // woken when a job starts, and when the worker stops
      continue;
    }
    const std::uint64_t number = job_number_;
    const auto deadline = started_ + overdue_limit_;
    if (std::chrono::steady_clock::now() < deadline) {
      watched_.wait_until(lock, deadline);
      continue;
    }
    if (number != job_number_ || !running_overdue_) continue;
    // The jobs queued behind it wait for it, and may be what it waits for (a gate each): overdue with it.
    std::vector<std::function<void()>> overdue{std::exchange(running_overdue_, nullptr)};
    for (Queued& queued : jobs_)
      if (queued.overdue) overdue.push_back(std::exchange(queued.overdue, nullptr));
    lock.unlock();
    for (const std::function<void()>& handle : overdue) run_guarded(handle, "the overdue handling of a job");
    lock.lock();
  }
}

void SerialWorker::drain() {
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [this] { return jobs_.empty() && running_ == 0; });
}

std::size_t SerialWorker::pending() const {
  const std::lock_guard lock(mutex_);
  return jobs_.size() + running_;
}

std::chrono::milliseconds SerialWorker::overdue_limit() const {
  const std::lock_guard lock(mutex_);
  return overdue_limit_;
}

void SerialWorker::set_overdue_limit(std::chrono::milliseconds limit) {
  const std::lock_guard lock(mutex_);
  overdue_limit_ = limit;
}

}  // namespace cuplan::detail
