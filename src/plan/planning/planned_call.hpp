// SPDX-License-Identifier: Apache-2.0
#pragma once
// The function forms' call protocol on a plan-cache miss, written once for every operation: the plan is made on the
// caller's thread, at the call, in either PlanningMode (docs/streams.md, "Planning happens at the call"). Planning
// off the caller's thread would need a gate on the caller's stream while a planner thread makes the plan, and every
// backend's plan creation loads library modules (cuFFT's plan creation, cuBLASLt's heuristic query: both end in
// cuLibraryLoadData), which waits for the whole device, gate included: the plan would wait for the gate, and the gate
// for the plan.

#include <memory>
#include <utility>

#include "plan/cache/cached_call.hpp"

namespace cuplan::detail {

/// The fault point of plan creation (fault::Site::plan): a LibraryError naming `who`.
void plan_creation_fault_point(const char* who);

/// run_cached for the function forms (`who`: the function's name, "fft"): a miss constructs the object (`construct()`,
/// which validates the call), plans it at the call (`plan(impl)`, behind the plan-creation fault point) and adds it to
/// the cache; then `adopt` and `run` as in run_cached.
template <class Impl, class Construct, class Plan, class Adopt, class Run>
auto run_cached_on_callers_thread(const PlanKey& key, const char* who, Construct&& construct, Plan&& plan,
                                  Adopt&& adopt, Run&& run) {
  return run_cached<Impl>(
      key,
      [&] {
        std::unique_ptr<Impl> impl = construct();
        plan_creation_fault_point(who);
        plan(*impl);
        return impl;
      },
      std::forward<Adopt>(adopt), std::forward<Run>(run));
}

}  // namespace cuplan::detail
