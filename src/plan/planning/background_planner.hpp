// SPDX-License-Identifier: Apache-2.0
#pragma once
// The planner thread of the function forms (docs/streams.md, "Planning off the caller's thread"): one thread that
// makes plans and enqueues their first work on an internal stream per device, in the order the calls submitted
// them. It also knows which plan keys are being made, so that a second call of a key waits for that plan instead of
// making it twice. The thread starts with the first job and is joined when the process ends, after it has run
// every job submitted (each job opens its caller's gate, so no stream is left waiting).

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/non_copyable.hpp"
#include "cuplan/stream.hpp"
#include "plan/cache/plan_cache.hpp"

namespace cuplan::detail {

class BackgroundPlanner : NonCopyable {
 public:
  /// The process-wide planner.
  static BackgroundPlanner& instance();

  BackgroundPlanner() = default;
  /// Runs every job still queued, then joins the thread.
  ~BackgroundPlanner();

  /// Queues `job` for the planner thread (started on first use). A job must not throw: one that does is logged.
  void submit(std::function<void()> job);
  /// Blocks until every job submitted so far has run.
  void drain();

  /// The planner's stream on `device` (made on first use; non-blocking, lives as long as the planner).
  StreamRef stream(int device);

  /// Marks `key` as being planned by a queued job (until finish_planning).
  void start_planning(const PlanKey& key);
  void finish_planning(const PlanKey& key);
  /// True while a job is making the plan of `key`.
  bool planning(const PlanKey& key);
  /// Blocks while a job is making the plan of `key`; returns at once when none is.
  void wait_for_plan(const PlanKey& key);

  /// Jobs queued or running (tests).
  std::size_t pending() const;

 private:
  void work();

  mutable std::mutex mutex_;
  std::condition_variable queued_;    // a job came, or the planner stops
  std::condition_variable finished_;  // a job ended, or a key's plan was made
  std::deque<std::function<void()>> jobs_;
  std::size_t running_ = 0;
  bool stopping_ = false;
  std::thread thread_;
  std::vector<PlanKey> planning_;  // keys whose plan a queued job makes (few at a time)
  std::map<int, std::unique_ptr<Stream>> streams_;
};

}  // namespace cuplan::detail
