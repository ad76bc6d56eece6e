// SPDX-License-Identifier: Apache-2.0
#pragma once
// The planner of the function forms (docs/streams.md, "Planning off the caller's thread"): one thread that makes
// plans and enqueues their first work on an internal stream per device, in the order the calls submitted them, and
// a second one that returns the made plans to the plan cache. The second thread exists because returning a plan may
// evict another, and destroying that one waits on the host for its last work, which may stand behind the gate of a
// call still queued for the first thread. The planner also knows which plan keys are being made, so that a second
// call of a key waits for that plan instead of making it twice. Both threads start with the first job and are joined
// when the process ends, after they have run every job submitted (each job opens its caller's gate, so no stream is
// left waiting).

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "base/non_copyable.hpp"
#include "cuplan/stream.hpp"
#include "plan/cache/plan_cache.hpp"
#include "plan/planning/serial_worker.hpp"

namespace cuplan::detail {

class BackgroundPlanner : NonCopyable {
 public:
  /// The process-wide planner.
  static BackgroundPlanner& instance();

  BackgroundPlanner() = default;
  /// Runs every job still queued, then joins the threads.
  ~BackgroundPlanner() = default;

  /// Queues a planning job. `overdue` (optional) is called once, from a watchdog thread, if the job runs longer
  /// than overdue_limit(): planning that waits for the device, which waits for the job's own gate, ends no other way.
  void submit(std::function<void()> job, std::function<void()> overdue = {}) {
    planning_.submit(std::move(job), std::move(overdue));
  }
  /// Queues work that may wait on the host for the device (returning a plan to the cache) on the second thread.
  void submit_return(std::function<void()> job) { returning_.submit(std::move(job)); }
  /// The mutex that makes "order the caller's stream, close its gate, submit" one step for every caller: jobs then
  /// run in the order their gates were closed, on every stream, so a job never waits for a later job's gate.
  std::mutex& submission_mutex() noexcept { return submission_; }
  /// Blocks until every job submitted so far (and the returns they queued) has run.
  void drain() {
    planning_.drain();
    returning_.drain();
  }
  std::chrono::milliseconds overdue_limit() const { return planning_.overdue_limit(); }
  void set_overdue_limit(std::chrono::milliseconds limit) { planning_.set_overdue_limit(limit); }

  /// The planner's stream on `device` (made on first use; non-blocking, lives as long as the planner).
  StreamRef stream(int device);

  /// Marks `key` as being planned by a queued job (until finish_planning).
  void start_planning(const PlanKey& key);
  void finish_planning(const PlanKey& key);
  /// False when no planner is making any plan (one relaxed atomic load).
  static bool any_planning() noexcept;
  /// True while a job is making the plan of `key`.
  bool planning(const PlanKey& key);
  /// Blocks while a job is making the plan of `key`; returns at once when none is.
  void wait_for_plan(const PlanKey& key);

 private:
  std::mutex mutex_;
  std::condition_variable finished_;    // a key's plan was made
  std::vector<PlanKey> planning_keys_;  // keys whose plan a queued job makes (few at a time)
  std::map<int, std::unique_ptr<Stream>> streams_;
  std::mutex submission_;
  // Destroyed in reverse: the planning thread drains first (its jobs queue returns), then the returning one.
  SerialWorker returning_{"background planning (returning plans)"};
  SerialWorker planning_{"background planning"};
};

}  // namespace cuplan::detail
