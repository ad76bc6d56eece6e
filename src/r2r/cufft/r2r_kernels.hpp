// SPDX-License-Identifier: Apache-2.0
#pragma once
// Launchers of the pre-pass and post-pass kernels of one axis (r2r_kernels.cu). Plain data in, a CUDA status out.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "r2r/algorithms.hpp"
#include "r2r/cufft/r2r_rows.hpp"

namespace cuplan::detail {

struct R2RPassArgs {
  AxisAlgorithm algorithm;
  R2RRows rows;
  bool double_precision = false;
  const void* src = nullptr;  ///< pre-pass: the axis's input
  std::int64_t src_axis_stride = 0;
  void* dst = nullptr;  ///< post-pass: the axis's output
  std::int64_t dst_axis_stride = 0;
  void* fft_in = nullptr;          ///< the FFT's input rows (a_scalars each), written by the pre-pass
  const void* fft_out = nullptr;   ///< the FFT's output rows (b_scalars each), read by the post-pass
  double first = 1.0, last = 1.0;  ///< orthogonalize's factors on element 0 and n-1 (input or output side)
  double scale = 1.0;              ///< post-pass: the norm's factor (on the last axis), else 1
  /// The FFT's rows interleaved (row index fastest) instead of one after another: for an axis that is not the
  /// innermost, so that threads next to each other touch neighbouring rows (R2RRowView).
  bool interleaved = false;
};

/// A post-pass that writes the next axis's FFT input instead of the axis's output, where the next axis's pre-pass is
/// the type-II reordering, a permutation (r2r_type2_scatter), so that pass does not run and the intermediate result is
/// neither written nor read again; compiled for a type-II axis before the next one (r2r_kernels.cu). The
/// pass's `rows` and `dst_axis_stride` then come from r2r_bridge_layout(): a row's source offset is its index along the
/// next axis, its destination offset its place in the next axis's buffer (`dst`, the FFT input of the next axis).
struct R2RBridge {
  std::int64_t next_n = 0;  ///< the next axis's length
  bool next_sine = false;   ///< DST-II: odd elements negated
  double next_first = 1.0;  ///< orthogonalize's input factors of the next axis (its elements 0 and n-1)
  double next_last = 1.0;
  std::int64_t column_stride = 0;  ///< buffer offset of one FFT input index of the next axis
};

cudaError_t launch_r2r_pre_pass(const R2RPassArgs& args, cudaStream_t stream) noexcept;
cudaError_t launch_r2r_post_pass(const R2RPassArgs& args, cudaStream_t stream) noexcept;
/// The post-pass of `args` bridged into the next axis's FFT input (R2RBridge).
cudaError_t launch_r2r_post_bridge_pass(const R2RPassArgs& args, const R2RBridge& bridge, cudaStream_t stream) noexcept;

}  // namespace cuplan::detail
