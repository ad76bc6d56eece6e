// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pure selection rule of Matmul::autotune, apart from the timing so that it is tested on any host.

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

namespace cuplan::detail::mm {

/// Fraction by which a candidate must beat the heuristic's first choice to replace it: differences below this are
/// run-to-run noise, and the heuristic's choice is the better bet when measurements cannot separate them.
inline constexpr float autotune_margin = 0.01f;

/// The order of the candidates after timing: `times_ms[i]` is the measured time of heuristic candidate i, negative
/// when it did not run (dropped). Candidate 0 stays first unless another is faster than it by more than `margin`
/// (relative); the rest follow fastest first, ties in heuristic order. Empty when no candidate ran.
inline std::vector<std::size_t> autotune_order(std::span<const float> times_ms, float margin = autotune_margin) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < times_ms.size(); ++i)
    if (times_ms[i] >= 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return times_ms[x] < times_ms[y]; });
  if (order.empty() || times_ms.empty() || times_ms[0] < 0 || order.front() == 0) return order;
  const bool clearly_faster = times_ms[order.front()] < times_ms[0] * (1.0f - margin);
  if (!clearly_faster) {
    order.erase(std::find(order.begin(), order.end(), std::size_t{0}));
    order.insert(order.begin(), 0);
  }
  return order;
}

}  // namespace cuplan::detail::mm
