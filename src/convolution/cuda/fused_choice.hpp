// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fused kernels a convolution can run on a device: the row kernel (1D), the column kernel (2D and 3D) and the
// whole-transform kernel (2D and 3D tiles), looked up in this build's tables and checked against the device, or the
// reason there is none. choose_device_convolution (convolution_runner.hpp), defined beside them, picks the route.

#include <string>

#include "convolution/cuda/fused_launch.hpp"
#include "convolution/planner.hpp"

namespace cuplan::detail {

/// The row kernel for a 1D `g`, or nullptr and the reason in `why_not` (none in this build, or not on `device`).
const fused::FusedLauncher* fused_launcher(const ConvolutionGeometry& g, int device, std::string& why_not);
/// The column kernel for the first axis of a 2D or 3D `g` (complex, or real through its half spectrum), or nullptr
/// and the reason.
const fused::FusedColumnLauncher* fused_column_launcher(const ConvolutionGeometry& g, int device, std::string& why_not);
/// The whole-transform kernel for a 2D or 3D `g` planned with every FFT length a power of two, or nullptr and the
/// reason (the geometry, the build or the device).
const fused::FusedBlockLauncher* fused_block_launcher(const ConvolutionGeometry& g, int device, std::string& why_not);

}  // namespace cuplan::detail
