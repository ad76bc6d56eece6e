// SPDX-License-Identifier: Apache-2.0
#pragma once
// The function forms' cached-plan protocol, written once for every operation (fft*, matmul*).

#include <utility>

#include "cuplan/errors.hpp"
#include "plan/cache/plan_cache.hpp"

namespace cuplan::detail {

/// Checks out the plan for `key` (made by `make()` on a miss, from this call's operands), gives a hit this call's
/// operands through `adopt(impl)` (the key fixed their layout, so nothing is checked again), runs `run(impl)` and
/// drops the operands again (`impl.release_operand()`), so the cache keeps plans and never the caller's memory. An
/// exception discards the plan, whose state is then unknown; the lease returns it to the cache otherwise. The one
/// exception with a known state is the ordering checker's OrderingError, raised before the call enqueues anything:
/// that plan is kept (destroying a cuFFT or cuBLASLt plan may wait for the device, and so for the very work the
/// error is about).
/// The second half of run_cached, for a lease already taken (a hit, or a plan made by the caller).
template <class Impl, class Adopt, class Run>
auto run_leased(PlanLease& lease, Adopt&& adopt, Run&& run) {
  Impl& impl = *static_cast<Impl*>(lease.get());
  try {
    if (lease.hit()) adopt(impl);
    auto result = run(impl);
    impl.release_operand();
    return result;
  } catch (const OrderingError&) {
    impl.release_operand();
    throw;
  } catch (...) {
    lease.discard();
    throw;
  }
}

template <class Impl, class Make, class Adopt, class Run>
auto run_cached(const PlanKey& key, Make&& make, Adopt&& adopt, Run&& run) {
  PlanLease lease = acquire_plan(key, std::forward<Make>(make));
  return run_leased<Impl>(lease, std::forward<Adopt>(adopt), std::forward<Run>(run));
}

}  // namespace cuplan::detail
