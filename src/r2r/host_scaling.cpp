// SPDX-License-Identifier: Apache-2.0
// Host scaling of a RealTransform (host_scaling.hpp).

#include "r2r/host_scaling.hpp"

#include <vector>

namespace cuplan::detail {
namespace {

// The factors of one element of one axis: first, last, or 1.
struct AxisFactors {
  int axis;
  std::int64_t n;
  double first, last;
  double at(std::int64_t i) const noexcept {
    double f = 1.0;
    if (i == 0) f *= first;
    if (i == n - 1) f *= last;
    return f;
  }
};

// Multiplies every element whose index along `fixed_axis` is `fixed_index` (every element when fixed_axis < 0) by
// `global` times the factors of `axes` at its indices.
template <class T>
void walk(T* data, const Shape& shape, const Strides& strides, int fixed_axis, std::int64_t fixed_index,
          const std::vector<AxisFactors>& axes, double global) {
  const int ndim = shape.size();
  std::vector<double> axis_factor(static_cast<std::size_t>(ndim), 0.0);
  std::vector<std::int64_t> index(static_cast<std::size_t>(ndim), 0);
  for (int a = 0; a < ndim; ++a)
    if (shape[a] == 0) return;
  if (fixed_axis >= 0) index[static_cast<std::size_t>(fixed_axis)] = fixed_index;
  const int inner = ndim - 1;
  const auto factor_of = [&](int a, std::int64_t i) {
    double f = 1.0;
    for (const AxisFactors& af : axes)
      if (af.axis == a) f *= af.at(i);
    return f;
  };
  // Odometer over every axis but the innermost, which is a plain loop (with the fixed axis held still).
  for (;;) {
    double outer = global;
    std::int64_t offset = 0;
    for (int a = 0; a < inner; ++a) {
      outer *= factor_of(a, index[static_cast<std::size_t>(a)]);
      offset += index[static_cast<std::size_t>(a)] * strides[a];
    }
    const std::int64_t stride = strides[inner];
    if (inner == fixed_axis) {
      const std::int64_t i = fixed_index;
      data[offset + i * stride] = static_cast<T>(data[offset + i * stride] * outer * factor_of(inner, i));
    } else {
      bool inner_scaled = false;
      for (const AxisFactors& af : axes) inner_scaled = inner_scaled || af.axis == inner;
      if (!inner_scaled) {
        const T f = static_cast<T>(outer);
        if (stride == 1)
          for (std::int64_t i = 0; i < shape[inner]; ++i) data[offset + i] *= f;
        else
          for (std::int64_t i = 0; i < shape[inner]; ++i) data[offset + i * stride] *= f;
      } else {
        for (std::int64_t i = 0; i < shape[inner]; ++i)
          data[offset + i * stride] = static_cast<T>(data[offset + i * stride] * outer * factor_of(inner, i));
      }
    }
    int a = inner - 1;
    for (; a >= 0; --a) {
      if (a == fixed_axis) continue;
      if (++index[static_cast<std::size_t>(a)] < shape[a]) break;
      index[static_cast<std::size_t>(a)] = 0;
    }
    if (a < 0) return;
  }
}

template <class T>
void apply(T* data, const Strides& strides, const R2RDecision& d, const std::vector<AxisFactors>& axes, double global) {
  if (global != 1.0) {
    walk(data, d.shape, strides, -1, 0, axes, global);
    return;
  }
  // Only the first and last planes of each scaled axis; a plane shared by two axes gets each factor once.
  for (std::size_t k = 0; k < axes.size(); ++k) {
    const AxisFactors& af = axes[k];
    if (af.first != 1.0) walk(data, d.shape, strides, af.axis, 0, {{af.axis, af.n, af.first, 1.0}}, 1.0);
    if (af.last != 1.0) walk(data, d.shape, strides, af.axis, af.n - 1, {{af.axis, af.n, 1.0, af.last}}, 1.0);
  }
}

void dispatch(void* data, const Strides& strides, const R2RDecision& d, const std::vector<AxisFactors>& axes,
              double global) {
  if (axes.empty() && global == 1.0) return;
  if (d.dtype == f64)
    apply(static_cast<double*>(data), strides, d, axes, global);
  else
    apply(static_cast<float*>(data), strides, d, axes, global);
}

}  // namespace

void scale_input_edges(void* data, const Strides& strides, const R2RDecision& d, Direction direction) {
  std::vector<AxisFactors> axes;
  for (std::size_t i = 0; i < d.transformed.size(); ++i) {
    const EdgeScaling e = d.edges(i, direction);
    if (e.scales_input()) axes.push_back({d.transformed[i].axis, d.transformed[i].n, e.pre_first, e.pre_last});
  }
  dispatch(data, strides, d, axes, 1.0);
}

void scale_output(void* data, const Strides& strides, const R2RDecision& d, Direction direction) {
  std::vector<AxisFactors> axes;
  for (std::size_t i = 0; i < d.transformed.size(); ++i) {
    const EdgeScaling e = d.edges(i, direction);
    if (e.scales_output()) axes.push_back({d.transformed[i].axis, d.transformed[i].n, e.post_first, e.post_last});
  }
  dispatch(data, strides, d, axes, d.scale(direction));
}

}  // namespace cuplan::detail
