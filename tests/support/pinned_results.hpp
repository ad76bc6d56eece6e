// SPDX-License-Identifier: Apache-2.0
#pragma once
// The check shared by the FFT and Matmul staging tests: a new host result lands in pinned memory, and later calls
// of the same shape reuse the pinned block instead of allocating.

#include <gtest/gtest.h>

#include "cuplan/tensor.hpp"
#include "runtime/pinned_cache.hpp"

namespace cuplan::testing {

/// Calls `execute()` once (it may allocate: pinned slots and the first result block), then three more times: each
/// result must be in pinned memory and pass `check(result, call)`, and those three calls must reuse pinned blocks
/// without allocating new ones.
template <class Execute, class Check>
void expect_pinned_results_reused(const Execute& execute, const Check& check) {
  (void)execute();
  const detail::PinnedCacheStats before = detail::pinned_cache().stats();
  for (int call = 0; call < 3; ++call) {
    const Tensor result = execute();
    EXPECT_EQ(result.memory_space(), MemorySpace::host_pinned);
    check(result, call);
  }
  const detail::PinnedCacheStats after = detail::pinned_cache().stats();
  EXPECT_EQ(after.allocations, before.allocations) << "a call of the same shape allocated new pinned memory";
  EXPECT_GE(after.reuses, before.reuses + 3);
}

}  // namespace cuplan::testing
