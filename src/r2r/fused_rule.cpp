// SPDX-License-Identifier: Apache-2.0
// The fused route's rule for real-to-real axes (fused_rule.hpp).

#include "r2r/fused_rule.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "r2r/algorithms.hpp"

namespace cuplan::detail {

std::string fused_axis_refusal(const R2RDecision& d, std::size_t i, Direction direction,
                               const Strides& first_source_strides, const FusedR2RAvailability& available) {
  if (!available.mathdx) return "no MathDx in this build (the fused kernels are built on cuFFTDx)";
  const R2RAxis& axis = d.transformed[i];
  const R2RKind kind = d.kind_for(i, direction);
  const std::int64_t source_stride = (i == 0 ? first_source_strides : d.out_strides)[axis.axis];
  const std::int64_t result_stride = d.out_strides[axis.axis];
  if (source_stride != 1)
    return fmt::format("stride {} in the {}; the fused kernel needs a contiguous axis", source_stride,
                       i == 0 ? "operand" : "result");
  if (result_stride != 1)
    return fmt::format("stride {} in the result; the fused kernel needs a contiguous axis", result_stride);
  const AxisAlgorithm algorithm = choose_algorithm(kind, axis.n);
  if (algorithm.algorithm == R2RAlgorithm::type4_odd_permuted)
    return fmt::format(
        "{} of odd length {} runs a permuted R2C of length {}; the fused kernel runs type 4 of even lengths", kind,
        axis.n, algorithm.fft_length);
  if (std::find(available.lengths.begin(), available.lengths.end(), algorithm.fft_length) == available.lengths.end())
    return fmt::format(
        "{} of length {} runs {} {}, not among the fused kernels' FFT lengths [{}] "
        "(CUPLAN_FUSED_FFT_LENGTHS)",
        kind, axis.n, r2r_fft_type_name(algorithm.fft), algorithm.fft_length, fmt::join(available.lengths, ", "));
  std::int64_t numel = 1;
  for (int a = 0; a < d.shape.size(); ++a) numel *= d.shape[a];
  if (numel / axis.n > std::numeric_limits<std::int32_t>::max())
    return fmt::format("{} rows, more than one launch of the fused kernel takes ({})", numel / axis.n,
                       std::numeric_limits<std::int32_t>::max());
  return {};
}

FusedAxes fused_axes(const R2RDecision& d, Direction direction, FFTRoute route, const Strides& first_source_strides,
                     const FusedR2RAvailability& available, const char* who) {
  FusedAxes axes{std::vector<bool>(d.transformed.size(), false), std::vector<std::string>(d.transformed.size())};
  if (route == FFTRoute::cufft) return axes;
  std::string refusals;
  for (std::size_t i = 0; i < d.transformed.size(); ++i) {
    std::string why = fused_axis_refusal(d, i, direction, first_source_strides, available);
    axes.fused[i] = why.empty();
    if (!why.empty())
      refusals += fmt::format("{}axis {}: {}", refusals.empty() ? "" : "; ", d.transformed[i].axis, why);
    axes.not_fused[i] = std::move(why);
  }
  // automatic keeps the passes where no axis qualifies; only an explicit `fused` is refused.
  if (route == FFTRoute::fused && std::find(axes.fused.begin(), axes.fused.end(), true) == axes.fused.end()) {
    if (!available.mathdx)
      throw NotSupported(
          fmt::format("{}: route fused: no MathDx in this build (the fused kernels are built on cuFFTDx; "
                      "scripts/setup.sh fetches it, or set CUPLAN_MATHDX_ROOT when configuring)",
                      who));
    throw NotSupported(fmt::format("{}: route fused: no axis can run on the fused kernel: {}", who, refusals));
  }
  return axes;
}

}  // namespace cuplan::detail
