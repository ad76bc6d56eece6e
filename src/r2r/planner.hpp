// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pure part of a real-to-real transform (no GPU, no FFTW): which axes, which kind on each, whether each length
// suits its kind, the scaling scipy.fft defines for each norm and orthogonalize, and the kinds an inverse runs.
// Every backend reads its decision; tests check it without a device.

#include <cstdint>
#include <optional>
#include <vector>

#include "cuplan/fft.hpp"
#include "cuplan/r2r.hpp"

namespace cuplan::detail {

/// The kind whose transform inverts `kind` up to a scale: DCT-II and DCT-III swap, the others invert themselves.
R2RKind inverse_kind(R2RKind kind) noexcept;
/// N' of one axis of length n: 2(n-1) for DCT-I, 2(n+1) for DST-I, 2n otherwise.
std::int64_t logical_length(R2RKind kind, std::int64_t n) noexcept;
/// The FFTW name of a kind ("REDFT10"), for messages and describe().
const char* fftw_kind_name(R2RKind kind) noexcept;
/// The shortest length `kind` is defined for (2 for DCT-I, 1 otherwise).
std::int64_t minimum_length(R2RKind kind) noexcept;

/// orthogonalize's factors for one axis running `kind` (the kind actually computed, after the inverse swap): the
/// operand's first and last element along the axis are multiplied by pre_first / pre_last before the transform, the
/// result's by post_first / post_last after it (1 where the kind scales nothing). scipy.fft's definitions.
struct EdgeScaling {
  double pre_first = 1.0;
  double pre_last = 1.0;
  double post_first = 1.0;
  double post_last = 1.0;
  bool scales_input() const noexcept { return pre_first != 1.0 || pre_last != 1.0; }
  bool scales_output() const noexcept { return post_first != 1.0 || post_last != 1.0; }
};
EdgeScaling orthogonal_edges(R2RKind kind) noexcept;

/// What a RealTransform was asked for.
struct R2RRequest {
  DType dtype;
  Shape shape;
  Strides strides;
  std::vector<int> axes;
  std::vector<R2RKind> kinds;
  R2RNorm norm = R2RNorm::backward;
  std::optional<bool> orthogonalize;
  bool inplace = false;
  /// `axes` empty: every axis (the function forms dctn ...) instead of the last min(ndim, 3).
  bool all_axes_by_default = false;
  /// The option that named the axes, for messages: `axis` for the one-axis forms (dct ...), else `axes`.
  const char* axes_option = "axes";
};

/// One transformed axis.
struct R2RAxis {
  int axis = 0;                  ///< index into the shape
  std::int64_t n = 0;            ///< length
  R2RKind kind = R2RKind::dct2;  ///< forward kind
  std::int64_t logical_n = 0;    ///< N' of the forward kind (the inverse kind has the same)
};

/// The decision: validated operand layout, axes and scaling, and the result layout.
struct R2RDecision {
  DType dtype;
  Shape shape;
  Strides in_strides;
  Strides out_strides;  ///< row-major, or the operand's in place
  std::vector<int> axes;
  std::vector<R2RKind> kinds;
  std::vector<R2RAxis> transformed;  ///< in the order of `axes`
  R2RNorm norm = R2RNorm::backward;
  bool orthogonalize = false;
  bool inplace = false;
  double logical_size = 1.0;  ///< product of the axes' N'

  /// The kind axis `i` (index into `transformed`) runs in `direction`.
  R2RKind kind_for(std::size_t i, Direction direction) const noexcept {
    return direction == Direction::forward ? transformed[i].kind : inverse_kind(transformed[i].kind);
  }
  /// The overall factor of a call in `direction` (scipy.fft's norm): 1, 1/N' or 1/sqrt(N').
  double scale(Direction direction) const noexcept;
  /// The edge factors of axis `i` in `direction` (all 1 without orthogonalize).
  EdgeScaling edges(std::size_t i, Direction direction) const noexcept;
};

/// Validates the request and decides. InvalidArgument naming the option or operand, the expected and the actual
/// value (dtype other than f32/f64, axes out of range or repeated, more than 3 axes, a kinds list whose length is
/// neither 1 nor the number of axes, a length too short for its kind); `who` prefixes messages.
R2RDecision plan_r2r(const R2RRequest& request, const char* who);

/// Range checks of the options' enums, the same on every path (class form, function form hit or miss).
void validate_r2r_options(const RealTransformOptions& options, const char* who);
/// The kind of `type` (1 to 4) for a cosine or sine transform; InvalidArgument naming `type` otherwise.
R2RKind kind_of_type(int type, bool sine, const char* who);

}  // namespace cuplan::detail
