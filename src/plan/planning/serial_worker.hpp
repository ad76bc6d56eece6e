// SPDX-License-Identifier: Apache-2.0
#pragma once
// One thread that runs jobs in the order they were queued, with an optional watchdog: a job queued with an
// `overdue` callback that runs longer than the worker's limit has that callback called once, from the watchdog
// thread, while it still runs, and so has every job queued behind it at that moment (they wait for it, and it may
// wait for them). The destructor runs every queued job, then joins both threads.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "base/non_copyable.hpp"

namespace cuplan::detail {

class SerialWorker : NonCopyable {
 public:
  explicit SerialWorker(const char* name, std::chrono::milliseconds overdue_limit = std::chrono::milliseconds(10000))
      : name_(name), overdue_limit_(overdue_limit) {}
  ~SerialWorker();

  /// Queues `job` (the thread starts on first use). A job that throws is logged; the next one runs.
  void submit(std::function<void()> job, std::function<void()> overdue = {});
  /// Blocks until every job queued so far has run.
  void drain();
  /// Jobs queued or running.
  std::size_t pending() const;
  std::chrono::milliseconds overdue_limit() const;
  void set_overdue_limit(std::chrono::milliseconds limit);

 private:
  struct Queued {
    std::function<void()> job;
    std::function<void()> overdue;
  };
  void work();
  void watch();
  void run_guarded(const std::function<void()>& task, const char* what) const noexcept;

  const char* name_;
  mutable std::mutex mutex_;
  std::condition_variable queued_;    // a job came, or the worker stops
  std::condition_variable finished_;  // a job ended
  std::condition_variable watched_;   // a job started, or the worker stops
  std::deque<Queued> jobs_;
  std::size_t running_ = 0;
  bool stopping_ = false;
  std::chrono::milliseconds overdue_limit_;
  std::chrono::steady_clock::time_point started_{};  // the running job's start
  std::function<void()> running_overdue_;            // its overdue callback (empty: none, or called already)
  std::uint64_t job_number_ = 0;                     // jobs started so far
  std::thread thread_;
  std::thread watchdog_;
};

}  // namespace cuplan::detail
