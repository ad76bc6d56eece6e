// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which axes of a real-to-real transform run on the fused kernel (docs/r2r.md, "Route choice"): one pass per axis
// that loads the row with the kind's reordering, runs the FFT of related length in cuFFTDx and stores with the
// twiddle, instead of pre-pass + cuFFT + post-pass. Pure: the build's kernels come in as data, so tests check the
// rule and its messages without a GPU.

#include <cstdint>
#include <string>
#include <vector>

#include "cuplan/fft.hpp"
#include "r2r/planner.hpp"

namespace cuplan::detail {

/// What the build offers the fused route.
struct FusedR2RAvailability {
  bool mathdx = false;                ///< the fused kernels were built (MathDx found when configuring)
  std::vector<std::int64_t> lengths;  ///< FFT lengths compiled, each as R2C, C2R and C2C, in f32 and f64
};

/// Empty when axis `i` (index into decision.transformed) can run on the fused kernel in `direction`, else why not,
/// as one clause ("stride 4096 in the operand; the fused kernel needs a contiguous axis"). The axis reads the
/// operand laid out by `first_source_strides` when it is the first one transformed, the result otherwise.
std::string fused_axis_refusal(const R2RDecision& decision, std::size_t i, Direction direction,
                               const Strides& first_source_strides, const FusedR2RAvailability& available);

/// Each transformed axis's route in one direction: the fused kernel or the passes, and, on an axis left to the
/// passes by route `automatic` or `fused`, why it does not fuse (fused_axis_refusal()'s clause; empty on a fused axis
/// and on every axis of route `cufft`, which asks for the passes).
struct FusedAxes {
  std::vector<bool> fused;
  std::vector<std::string> not_fused;
};

/// The rule of RealTransformOptions::route (docs/r2r.md, "Route choice"), from the geometry and the build alone:
/// `automatic` and `fused` fuse every axis that qualifies and keep the passes on the others; `automatic` never
/// refuses, `fused` raises NotSupported naming each axis and why when none qualifies (`who` prefixes the message);
/// `cufft` keeps the passes everywhere.
FusedAxes fused_axes(const R2RDecision& decision, Direction direction, FFTRoute route,
                     const Strides& first_source_strides, const FusedR2RAvailability& available, const char* who);

}  // namespace cuplan::detail
