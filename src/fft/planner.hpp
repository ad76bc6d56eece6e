// SPDX-License-Identifier: Apache-2.0
#pragma once
// The FFT planning layer: pure functions from an operand description and the options to the batched advanced
// layout both cuFFT (cufftXtMakePlanMany) and FFTW (guru64) accept, plus the internal copies needed when the
// operand or the result cannot be described that way. No CUDA, no FFTW, no allocation of operand memory here.
//
// The advanced layout: element (b, i0, .., i_{r-1}) of one side is at
//   b * dist + ((i0 * embed[1] + i1) * embed[2] + i2) * stride
// with n[] in "cuFFT order" (the last entry is the innermost, and for R2C/C2R the halved axis).
// Batches over the non-transformed axes are kept as a list of (count, in stride, out stride) dimensions: FFTW takes
// them all at once (guru howmany dims); cuFFT takes the largest as its batch and loops over the rest.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuplan/fft.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan::detail {

/// One batch dimension: `count` transforms, `in_stride` / `out_stride` elements apart.
struct BatchDim {
  std::int64_t count = 1;
  std::int64_t in_stride = 0;
  std::int64_t out_stride = 0;
  friend bool operator==(const BatchDim&, const BatchDim&) = default;
};

/// The advanced layout of one transform over the compute buffers (input and output in their own element units).
struct AdvancedLayout {
  int rank = 0;                   ///< 0 (identity: a copy) to 3
  std::int64_t n[3] = {1, 1, 1};  ///< logical lengths (C2R: the real output length of the last)
  std::int64_t inembed[3] = {1, 1, 1};
  std::int64_t onembed[3] = {1, 1, 1};
  std::int64_t istride = 1;
  std::int64_t ostride = 1;
  std::vector<BatchDim> batch_dims;  ///< outermost first, merged where possible
  /// cuFFT view: one batch dimension plus a loop over the others.
  std::int64_t batch = 1;
  std::int64_t idist = 1;
  std::int64_t odist = 1;
  std::vector<std::int64_t> loop_in_offsets{0};  ///< element offsets of each cuFFT call (at least one)
  std::vector<std::int64_t> loop_out_offsets{0};
  std::int64_t transform_size = 1;  ///< product of the logical lengths (N of the normalisation)
};

/// What the planner needs to know about an operand and the options.
struct LayoutRequest {
  DType dtype = c64;
  Shape shape;
  Strides strides;
  std::vector<int> axes;
  std::optional<FFTType> type;
  Parity parity = Parity::even;
  bool inplace = false;
  ResultLayout result_layout = ResultLayout::natural;
  /// A user output: checked against the result's shape and dtype; its strides become the result layout.
  std::optional<Shape> out_shape;
  std::optional<DType> out_dtype;
  std::optional<Strides> out_strides;
  /// The operand lives in another memory space than the execution: always copy it into a staging buffer.
  bool stage_input = false;
  /// The result goes to another memory space than the execution: always compute into a buffer and copy out.
  bool stage_output = false;
  /// Batches that need a loop cost one library call each (cuFFT); past a limit a dense copy is preferred.
  bool loop_is_costly = false;
  /// Every library call's real pointer (R2C input, C2R output) must be aligned like the complex type (cuFFT:
  /// 8 bytes for f32, 16 for f64), i.e. the loop's offsets on the real side must be even. Where they are not, the
  /// real side (or, failing that, both sides) is computed through a dense batch-outer internal copy.
  bool aligned_real_calls = false;
  /// The transform must be one library call (cuFFT callbacks: their offsets count from each call's pointers, so a
  /// loop of calls would make them ambiguous): batches that do not merge are copied batch-outer dense instead.
  bool single_call = false;
};

/// The planner's answer.
struct LayoutDecision {
  FFTType type = FFTType::c2c;
  std::vector<int> axes;  ///< normalised, in the order given
  DType in_dtype, out_dtype;
  Shape in_shape, out_shape;
  Strides out_strides;  ///< the result the user sees (natural, or the user output / operand in place)
  bool input_copy = false;
  Strides compute_in_strides;  ///< staging layout (dense) when input_copy, else the operand's strides
  bool output_copy = false;
  Strides compute_out_strides;   ///< internal layout (dense) when output_copy, else out_strides
  bool inplace_compute = false;  ///< the library call writes over its input buffer
  std::string input_copy_reason;
  std::string output_copy_reason;
  AdvancedLayout layout;
};

/// Normalises `axes` for a tensor of rank `ndim` (empty: the last min(ndim, 3)); InvalidArgument for rank 0,
/// more than 3 axes, an axis out of range or a repeated axis, its message starting with `who`.
std::vector<int> normalize_axes(const std::vector<int>& axes, int ndim, const char* who = "FFT");

/// The FFT type of an operand dtype with an optional request; InvalidArgument for integer, fp8, bf16 or a dtype
/// that does not fit the requested type.
FFTType resolve_fft_type(DType dtype, std::optional<FFTType> requested);

/// Decides the layout. InvalidArgument for bad shapes (zero extent, C2R length 0), layouts that cannot work in
/// place, user outputs of the wrong shape.
LayoutDecision plan_layout(const LayoutRequest& request);

/// Dense strides for `shape` with axes ordered outermost first by `perm`.
Strides dense_strides(const Shape& shape, const std::vector<int>& perm);
/// Axes sorted by decreasing |stride| (ties: lower axis index first): the memory order of a layout.
std::vector<int> memory_order(const Shape& shape, const Strides& strides);

}  // namespace cuplan::detail

namespace cuplan::detail {

/// Every element of the compute output as up to 11 (extent, stride) pairs: batch dimensions then transform
/// dimensions (used to scale the result in one pass).
struct OutputWalk {
  static constexpr int max_rank = 11;
  int rank = 0;
  std::int64_t extent[max_rank] = {};
  std::int64_t stride[max_rank] = {};
  std::int64_t count() const {
    std::int64_t c = 1;
    for (int i = 0; i < rank; ++i) c *= extent[i];
    return c;
  }
};
OutputWalk output_walk(const AdvancedLayout& layout, FFTType type);

}  // namespace cuplan::detail
