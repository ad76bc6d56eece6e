// SPDX-License-Identifier: Apache-2.0
// The pure real-to-real planner (planner.hpp).

#include "r2r/planner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <string>

#include "base/geometry.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "plan/option_checks.hpp"

namespace cuplan::detail {

R2RKind inverse_kind(R2RKind kind) noexcept {
  switch (kind) {
    case R2RKind::dct2:
      return R2RKind::dct3;
    case R2RKind::dct3:
      return R2RKind::dct2;
    case R2RKind::dst2:
      return R2RKind::dst3;
    case R2RKind::dst3:
      return R2RKind::dst2;
    default:
      return kind;
  }
}

std::int64_t logical_length(R2RKind kind, std::int64_t n) noexcept {
  if (kind == R2RKind::dct1) return 2 * (n - 1);
  if (kind == R2RKind::dst1) return 2 * (n + 1);
  return 2 * n;
}

const char* fftw_kind_name(R2RKind kind) noexcept {
  static constexpr const char* names[] = {"REDFT00", "REDFT10", "REDFT01", "REDFT11",
                                          "RODFT00", "RODFT10", "RODFT01", "RODFT11"};
  const auto i = static_cast<unsigned>(kind);
  return i < 8 ? names[i] : "?";
}

std::int64_t minimum_length(R2RKind kind) noexcept {
  // DCT-I of one point has N' = 0: scipy refuses it and FFTW leaves REDFT00 of n = 1 undefined.
  return kind == R2RKind::dct1 ? 2 : 1;
}

EdgeScaling orthogonal_edges(R2RKind kind) noexcept {
  const double r2 = std::sqrt(2.0);
  EdgeScaling e;
  switch (kind) {
    case R2RKind::dct1:  // x[0], x[n-1] times sqrt(2); y[0], y[n-1] divided by it
      e.pre_first = e.pre_last = r2;
      e.post_first = e.post_last = 1.0 / r2;
      break;
    case R2RKind::dct2:  // y[0] divided by sqrt(2)
      e.post_first = 1.0 / r2;
      break;
    case R2RKind::dct3:  // x[0] times sqrt(2)
      e.pre_first = r2;
      break;
    case R2RKind::dst2:  // y[n-1] divided by sqrt(2)
      e.post_last = 1.0 / r2;
      break;
    case R2RKind::dst3:  // x[n-1] times sqrt(2)
      e.pre_last = r2;
      break;
    default:  // DCT-IV, DST-I and DST-IV are orthogonal up to the norm's scale already
      break;
  }
  return e;
}

double R2RDecision::scale(Direction direction) const noexcept {
  switch (norm) {
    case R2RNorm::ortho:
      return 1.0 / std::sqrt(logical_size);
    case R2RNorm::forward:
      return direction == Direction::forward ? 1.0 / logical_size : 1.0;
    case R2RNorm::backward:
      break;
  }
  return direction == Direction::forward ? 1.0 : 1.0 / logical_size;
}

EdgeScaling R2RDecision::edges(std::size_t i, Direction direction) const noexcept {
  if (!orthogonalize) return {};
  return orthogonal_edges(kind_for(i, direction));
}

void validate_r2r_options(const RealTransformOptions& o, const char* who) {
  check_enum_range(o.norm, R2RNorm::forward, who, "norm", "R2RNorm");
  check_enum_range(o.route, FFTRoute::cufft, who, "route", "FFTRoute");
  for (std::size_t i = 0; i < o.kinds.size(); ++i) check_enum_range(o.kinds[i], R2RKind::dst4, who, "kinds", "R2RKind");
  check_operation_options(o, who, "transform");
  if (o.kinds.size() > 3) [[unlikely]]
    throw InvalidArgument(
        fmt::format("{}: kinds: expected 1 to 3 kinds (one, or one per axis), got {}", who, o.kinds.size()));
}

R2RKind kind_of_type(int type, bool sine, const char* who) {
  if (type < 1 || type > 4) [[unlikely]]
    throw InvalidArgument(fmt::format("{}: type: expected 1, 2, 3 or 4, got {}", who, type));
  return static_cast<R2RKind>((sine ? 4 : 0) + type - 1);
}

R2RDecision plan_r2r(const R2RRequest& r, const char* who) {
  if (r.dtype != f32 && r.dtype != f64)
    throw InvalidArgument(
        fmt::format("{}: operand dtype: expected f32 or f64 (a real transform), got {}", who, r.dtype.name()));
  const int ndim = r.shape.size();
  if (ndim == 0)
    throw InvalidArgument(fmt::format("{}: operand: expected at least 1 dimension, got a 0-D tensor", who));
  R2RDecision d;
  d.dtype = r.dtype;
  d.shape = r.shape;
  d.in_strides = r.strides;
  d.norm = r.norm;
  d.orthogonalize = r.orthogonalize.value_or(r.norm == R2RNorm::ortho);
  d.inplace = r.inplace;

  if (r.axes.empty()) {
    int count = r.all_axes_by_default ? ndim : std::min(ndim, 3);
    if (!r.all_axes_by_default && r.kinds.size() > 1) count = static_cast<int>(r.kinds.size());
    if (count > 3)
      throw InvalidArgument(fmt::format(
          "{}: axes: a {}-D operand has more than 3 axes; expected at most 3 transformed axes, name them in axes", who,
          ndim));
    if (count > ndim)
      throw InvalidArgument(
          fmt::format("{}: kinds: {} kinds name more axes than the {}-D operand has", who, r.kinds.size(), ndim));
    for (int a = ndim - count; a < ndim; ++a) d.axes.push_back(a);
  } else {
    if (r.axes.size() > 3)
      throw InvalidArgument(
          fmt::format("{}: axes: expected 1 to 3 axes to transform, got {} axes", who, r.axes.size()));
    const std::string axes_who = fmt::format("{}: {}", who, r.axes_option);  // "dctn: axes: axis 2 is out of ..."
    for (int a : r.axes) {
      const int axis = normalize_axis(a, ndim, axes_who.c_str());
      for (int seen : d.axes)
        if (seen == axis)
          throw InvalidArgument(fmt::format("{}: axes: expected each axis once, got axis {} twice in [{}]", who, axis,
                                            fmt::join(r.axes, ", ")));
      d.axes.push_back(axis);
    }
  }
  const std::size_t naxes = d.axes.size();
  if (r.kinds.empty()) {
    d.kinds.assign(naxes, R2RKind::dct2);
  } else if (r.kinds.size() == 1) {
    d.kinds.assign(naxes, r.kinds[0]);
  } else if (r.kinds.size() == naxes) {
    d.kinds = r.kinds;
  } else {
    throw InvalidArgument(
        fmt::format("{}: kinds: expected 1 kind or one per axis ({}), got {}", who, naxes, r.kinds.size()));
  }
  for (std::size_t i = 0; i < naxes; ++i) {
    check_enum_range(d.kinds[i], R2RKind::dst4, who, "kinds", "R2RKind");
    const std::int64_t n = r.shape[d.axes[i]];
    if (n < minimum_length(d.kinds[i]))
      throw InvalidArgument(
          fmt::format("{}: operand shape: axis {} has length {}, but {} needs a length of at least {}{}", who,
                      d.axes[i], n, to_string(d.kinds[i]), minimum_length(d.kinds[i]),
                      d.kinds[i] == R2RKind::dct1 ? " (DCT-I of one point has logical length 0)" : ""));
    if (n > (std::int64_t{1} << 40))
      throw InvalidArgument(
          fmt::format("{}: operand shape: axis {} has length {}, expected at most 2^40", who, d.axes[i], n));
    const R2RAxis axis{d.axes[i], n, d.kinds[i], logical_length(d.kinds[i], n)};
    d.transformed.push_back(axis);
    d.logical_size *= static_cast<double>(axis.logical_n);
  }
  if (r.inplace) {
    d.out_strides = r.strides;
  } else {
    d.out_strides = row_major_strides(r.shape);
  }
  require_addressable_result(who, r.shape, r.dtype);
  return d;
}

}  // namespace cuplan::detail
