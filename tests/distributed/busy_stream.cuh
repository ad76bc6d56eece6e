// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the Redistribute and DistributedMatmul tests of a non-blocking execute: the execute enqueued on a stream
// that a kernel keeps busy, and the check that it returned before that kernel ended.
#include <gtest/gtest.h>

#include "cuplan/cuplan.hpp"
#include "distributed/rank_harness.hpp"
#include "runtime/spin_kernel.cuh"

namespace cuplan::testing {

/// Plans `object` on its own stream `planning` and waits for that; then holds `running` with a kernel that waits for
/// the host (HostGate: not a timed spin, which a host slowed by compute-sanitizer can outlast), executes `object` on
/// `running` and expects `running` still held when execute returns (a blocking execute would have waited for the
/// kernel, until the gate's own time limit); then opens the gate. Returns execute's result.
template <class Distributed>
auto plan_and_execute_behind_busy_kernel(Distributed& object, const Stream& planning, const Stream& running) {
  object.plan();
  planning.synchronize();
  const DeviceScope on_device(running.device());
  HostGate gate;
  gate.hold(running.native());
  auto result = object.execute({.stream = running.ref()});
  EXPECT_FALSE(running.done()) << "execute returned after the held stream's kernel ended: it blocked";
  gate.open();
  EXPECT_FALSE(gate.timed_out()) << "execute blocked until the held kernel gave up";
  return result;
}

}  // namespace cuplan::testing
