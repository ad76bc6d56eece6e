// SPDX-License-Identifier: Apache-2.0
// Host side of the per-axis algorithms (algorithms.hpp).

#include "r2r/algorithms.hpp"

#include <cmath>
#include <numbers>

namespace cuplan::detail {

R2RTwiddle r2r_twiddle(double x) {
  // Reduce to [-1, 1) first, as sincospi does, so that long axes keep full precision.
  const double r = x - 2.0 * std::floor(x * 0.5 + 0.5);
  return {std::cos(std::numbers::pi * r), std::sin(std::numbers::pi * r)};
}

const char* algorithm_summary(R2RAlgorithm algorithm) noexcept {
  switch (algorithm) {
    case R2RAlgorithm::dct1_even_extension:
      return "even extension + R2C(2(n-1))";
    case R2RAlgorithm::dst1_odd_extension:
      return "odd extension + R2C(2(n+1))";
    case R2RAlgorithm::type2_reorder:
      return "even/odd reorder + R2C(n) + twiddle";
    case R2RAlgorithm::type3_reorder:
      return "twiddle + C2R(n) + unreorder";
    case R2RAlgorithm::type4_half_complex:
      return "pre-twiddle + C2C(n/2) + post-twiddle";
    case R2RAlgorithm::type4_padded_complex:
      return "pre-twiddle + C2C(2n, zero padded) + post-twiddle";
  }
  return "?";
}

}  // namespace cuplan::detail
