// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the Redistribute and DistributedMatmul tests of a non-blocking execute: the execute enqueued on a stream
// that a kernel keeps busy, and the check that it returned before that kernel ended.
#include <gtest/gtest.h>

#include "cuplan/cuplan.hpp"
#include "distributed/rank_harness.hpp"
#include "runtime/spin_kernel.cuh"

namespace cuplan::testing {

/// Plans `object` on its own stream `planning` and waits for that; then enqueues a kernel that keeps `running` busy
/// for 300 ms, executes `object` on `running` and expects `running` still busy when execute returns (a blocking
/// execute would have waited for the kernel). Returns execute's result.
template <class Distributed>
auto plan_and_execute_behind_busy_kernel(Distributed& object, const Stream& planning, const Stream& running) {
  object.plan();
  planning.synchronize();
  spin_kernel<<<1, 1, 0, running.native()>>>(cycles_for_ms(300.0, running.device().index()));
  CUPLAN_HARNESS_CUDA(cudaGetLastError());
  auto result = object.execute({.stream = running.ref()});
  EXPECT_FALSE(running.done()) << "execute returned after the busy kernel ended: it blocked";
  return result;
}

}  // namespace cuplan::testing
