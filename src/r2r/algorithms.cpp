// SPDX-License-Identifier: Apache-2.0
// Host side of the per-axis algorithms (algorithms.hpp).

#include "r2r/algorithms.hpp"

#include <cmath>
#include <iterator>
#include <numbers>

#include "cuplan/enum_name.hpp"

namespace cuplan::detail {

R2RTwiddle r2r_twiddle(double x) {
  // Reduce to [-1, 1) first, as sincospi does, so that long axes keep full precision.
  const double r = x - 2.0 * std::floor(x * 0.5 + 0.5);
  return {std::cos(std::numbers::pi * r), std::sin(std::numbers::pi * r)};
}

const char* r2r_fft_type_name(R2RFftType fft) noexcept {
  static constexpr const char* names[] = {"R2C", "C2R", "C2C"};
  static_assert(std::size(names) == static_cast<std::size_t>(R2RFftType::c2c) + 1);
  return enum_name(fft, names);
}

const char* algorithm_summary(R2RAlgorithm algorithm) noexcept {
  static constexpr const char* summaries[] = {
      "even extension + R2C(2(n-1))", "odd extension + R2C(2(n+1))",           "even/odd reorder + R2C(n) + twiddle",
      "twiddle + C2R(n) + unreorder", "pre-twiddle + C2C(n/2) + post-twiddle", "CRT permutation + R2C(n) + signs"};
  static_assert(std::size(summaries) == static_cast<std::size_t>(R2RAlgorithm::type4_odd_permuted) + 1);
  return enum_name(algorithm, summaries);
}

}  // namespace cuplan::detail
