// SPDX-License-Identifier: Apache-2.0
#include "fft/planner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "base/geometry.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {
namespace {

// Past this many library calls per execute (cuFFT loops over all but one batch dimension), the operand is copied
// to a batch-outer dense layout instead, where every batch merges into one (count, dist) pair.
constexpr std::int64_t kMaxLoopCalls = 64;

std::string str(const Dims& dims) {
  return fmt::format("[{}]", fmt::join(dims.span(), ", "));
}

struct Nesting {
  std::int64_t stride = 1;
  std::int64_t embed[3] = {1, 1, 1};
};

// Can the transformed axes `order` (outermost first) of one side be written as ((i0*e1 + i1)*e2 + i2)*stride with
// e_k >= the extent of axis k?
std::optional<Nesting> nest(const Shape& shape, const Strides& strides, const std::vector<int>& order) {
  Nesting out;
  const int rank = static_cast<int>(order.size());
  if (rank == 0) return out;
  const int innermost = order[static_cast<std::size_t>(rank - 1)];
  std::int64_t current = shape[innermost] == 1 ? 1 : strides[innermost];
  if (current <= 0) return std::nullopt;
  out.stride = current;
  for (int k = rank - 2; k >= 0; --k) {
    const int axis = order[static_cast<std::size_t>(k)];
    const int inner = order[static_cast<std::size_t>(k + 1)];
    if (shape[axis] == 1) {
      out.embed[k + 1] = shape[inner];
      current *= shape[inner];
      continue;
    }
    const std::int64_t s = strides[axis];
    if (s <= 0 || s % current != 0 || s / current < shape[inner]) return std::nullopt;
    out.embed[k + 1] = s / current;
    current = s;
  }
  out.embed[0] = shape[order[0]];
  return out;
}

// Transformed axes in library order: by decreasing stride, the halved axis (R2C/C2R) always last.
std::vector<int> transform_order(const std::vector<int>& active, const Strides& strides, int halved) {
  std::vector<int> order;
  for (int a : active)
    if (a != halved) order.push_back(a);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return std::abs(strides[a]) > std::abs(strides[b]); });
  if (halved >= 0) order.push_back(halved);
  return order;
}

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Batch dimensions over the axes not transformed, outermost first, adjacent ones merged when both sides allow.
std::vector<BatchDim> batch_dims(const Shape& shape, const Strides& in, const Strides& out,
                                 const std::vector<int>& transformed) {
  std::vector<BatchDim> dims;
  for (int a = 0; a < shape.size(); ++a)
    if (!contains(transformed, a) && shape[a] > 1) dims.push_back({shape[a], in[a], out[a]});
  std::stable_sort(dims.begin(), dims.end(), [](const BatchDim& x, const BatchDim& y) {
    return std::abs(x.in_stride) != std::abs(y.in_stride) ? std::abs(x.in_stride) > std::abs(y.in_stride)
                                                          : std::abs(x.out_stride) > std::abs(y.out_stride);
  });
  std::vector<BatchDim> merged;
  for (const BatchDim& d : dims) {
    if (!merged.empty()) {
      BatchDim& outer = merged.back();
      if (outer.in_stride == d.in_stride * d.count && outer.out_stride == d.out_stride * d.count) {
        outer = {outer.count * d.count, d.in_stride, d.out_stride};
        continue;
      }
    }
    merged.push_back(d);
  }
  return merged;
}

bool batch_strides_positive(const std::vector<BatchDim>& dims, bool input) {
  return std::all_of(dims.begin(), dims.end(),
                     [&](const BatchDim& d) { return (input ? d.in_stride : d.out_stride) > 0; });
}

AdvancedLayout build_layout(const LayoutDecision& d, const std::vector<int>& order, const std::vector<int>& active) {
  AdvancedLayout layout;
  const auto in_nest = nest(d.in_shape, d.compute_in_strides, order);
  const auto out_nest = nest(d.out_shape, d.compute_out_strides, order);
  layout.rank = static_cast<int>(order.size());
  for (int k = 0; k < layout.rank; ++k) {
    const int axis = order[static_cast<std::size_t>(k)];
    layout.n[k] = d.type == FFTType::c2r ? d.out_shape[axis] : d.in_shape[axis];
    layout.inembed[k] = in_nest->embed[k];
    layout.onembed[k] = out_nest->embed[k];
    layout.transform_size *= layout.n[k];
  }
  layout.istride = in_nest->stride;
  layout.ostride = out_nest->stride;
  layout.batch_dims = batch_dims(d.in_shape, d.compute_in_strides, d.compute_out_strides, active);

  // cuFFT view: the largest batch dimension is the plan's batch, the others become a loop of calls.
  std::int64_t in_span = layout.istride, out_span = layout.ostride;
  for (int k = 0; k < layout.rank; ++k) {
    in_span *= layout.inembed[k];
    out_span *= layout.onembed[k];
  }
  layout.idist = in_span;
  layout.odist = out_span;
  std::size_t chosen = layout.batch_dims.size();
  for (std::size_t i = 0; i < layout.batch_dims.size(); ++i)
    if (chosen == layout.batch_dims.size() || layout.batch_dims[i].count >= layout.batch_dims[chosen].count) chosen = i;
  if (chosen < layout.batch_dims.size()) {
    layout.batch = layout.batch_dims[chosen].count;
    layout.idist = layout.batch_dims[chosen].in_stride;
    layout.odist = layout.batch_dims[chosen].out_stride;
  }
  layout.loop_in_offsets.assign(1, 0);
  layout.loop_out_offsets.assign(1, 0);
  for (std::size_t i = 0; i < layout.batch_dims.size(); ++i) {
    if (i == chosen) continue;
    const BatchDim& dim = layout.batch_dims[i];
    std::vector<std::int64_t> in_next, out_next;
    in_next.reserve(layout.loop_in_offsets.size() * static_cast<std::size_t>(dim.count));
    out_next.reserve(in_next.capacity());
    for (std::size_t j = 0; j < layout.loop_in_offsets.size(); ++j)
      for (std::int64_t c = 0; c < dim.count; ++c) {
        in_next.push_back(layout.loop_in_offsets[j] + c * dim.in_stride);
        out_next.push_back(layout.loop_out_offsets[j] + c * dim.out_stride);
      }
    layout.loop_in_offsets = std::move(in_next);
    layout.loop_out_offsets = std::move(out_next);
  }
  return layout;
}

// The real side's call offsets (R2C input, C2R output) in real elements are all even: each call's real pointer is
// then aligned like the complex type whenever the base pointer is (checked against the operand and the output).
bool real_calls_aligned(const LayoutDecision& d) {
  if (d.type == FFTType::c2c) return true;
  const auto& offsets = d.type == FFTType::r2c ? d.layout.loop_in_offsets : d.layout.loop_out_offsets;
  return std::all_of(offsets.begin(), offsets.end(), [](std::int64_t offset) { return offset % 2 == 0; });
}

std::string odd_offsets(const LayoutDecision& d) {
  const auto& offsets = d.type == FFTType::r2c ? d.layout.loop_in_offsets : d.layout.loop_out_offsets;
  for (std::int64_t offset : offsets)
    if (offset % 2 != 0)
      return fmt::format(
          "cuFFT needs each call's real pointer aligned to the complex type; the batch loop starts a call at an odd "
          "real offset ({})",
          offset);
  return {};
}

// The axes not transformed in the memory order of `strides`, then the transform order: a dense layout over this
// permutation keeps every transform nested as planned and puts the batches outermost, in the other side's order.
std::vector<int> batch_outer_perm(const Shape& shape, const Strides& strides, const std::vector<int>& active,
                                  const std::vector<int>& order) {
  std::vector<int> perm;
  for (int a : memory_order(shape, strides))
    if (!contains(active, a)) perm.push_back(a);
  perm.insert(perm.end(), order.begin(), order.end());
  return perm;
}

std::int64_t loop_calls(const LayoutDecision& d, const std::vector<int>& active) {
  const auto dims = batch_dims(d.in_shape, d.compute_in_strides, d.compute_out_strides, active);
  std::int64_t calls = 1, largest = 1;
  for (const BatchDim& b : dims) {
    calls *= b.count;
    largest = std::max(largest, b.count);
  }
  return calls / largest;
}

}  // namespace

Strides dense_strides(const Shape& shape, const std::vector<int>& perm) {
  Strides strides = Dims::filled(shape.size(), 1);
  std::int64_t running = 1;
  for (auto it = perm.rbegin(); it != perm.rend(); ++it) {
    strides[*it] = running;
    running *= std::max<std::int64_t>(shape[*it], 1);
  }
  return strides;
}

std::vector<int> memory_order(const Shape& shape, const Strides& strides) {
  std::vector<int> perm(static_cast<std::size_t>(shape.size()));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) { return std::abs(strides[a]) > std::abs(strides[b]); });
  return perm;
}

std::vector<int> normalize_axes(const std::vector<int>& axes, int ndim, const char* who) {
  if (ndim == 0)
    throw InvalidArgument(
        fmt::format("{}: operand: expected at least one axis to transform, got a 0-d operand (empty axes)", who));
  std::vector<int> out;
  if (axes.empty()) {
    for (int a = std::max(0, ndim - 3); a < ndim; ++a) out.push_back(a);
    return out;
  }
  if (axes.size() > 3)
    throw InvalidArgument(
        fmt::format("{}: axes: expected 1 to 3 axes, got {} ({})", who, axes.size(), fmt::join(axes, ", ")));
  for (int a : axes) {
    if (a < -ndim || a >= ndim)
      throw InvalidArgument(
          fmt::format("{}: axes: axis {} is out of range for an operand of rank {} (expected {} to {})", who, a, ndim,
                      -ndim, ndim - 1));
    const int normal = a < 0 ? a + ndim : a;
    if (contains(out, normal))
      throw InvalidArgument(fmt::format("{}: axes: expected distinct axes, got axis {} twice in [{}]", who, normal,
                                        fmt::join(axes, ", ")));
    out.push_back(normal);
  }
  return out;
}

FFTType resolve_fft_type(DType dtype, std::optional<FFTType> requested) {
  if (dtype.is_integer() || dtype.is_fp8() || dtype == bf16)
    throw InvalidArgument(fmt::format(
        "FFT: operand dtype: expected a floating type (f16, f32, f64, c32, c64, c128), got {}", dtype.name()));
  const FFTType type = requested.value_or(dtype.is_complex() ? FFTType::c2c : FFTType::r2c);
  if ((type == FFTType::c2c || type == FFTType::c2r) && !dtype.is_complex())
    throw InvalidArgument(fmt::format("FFT: operand dtype: {} needs a complex operand (c32, c64, c128), got {}",
                                      type == FFTType::c2c ? "C2C" : "C2R", dtype.name()));
  if (type == FFTType::r2c && dtype.is_complex())
    throw InvalidArgument(
        fmt::format("FFT: operand dtype: R2C needs a real operand (f16, f32, f64), got {}", dtype.name()));
  return type;
}

LayoutDecision plan_layout(const LayoutRequest& req) {
  LayoutDecision d;
  d.type = resolve_fft_type(req.dtype, req.type);
  const int ndim = req.shape.size();
  d.axes = normalize_axes(req.axes, ndim);
  for (int a = 0; a < ndim; ++a)
    if (req.shape[a] <= 0)
      throw InvalidArgument(fmt::format("FFT: operand shape: expected every extent >= 1, got {} (axis {} is {})",
                                        str(req.shape), a, req.shape[a]));

  const int halved = d.type == FFTType::c2c ? -1 : d.axes.back();
  d.in_dtype = req.dtype;
  d.in_shape = req.shape;
  d.out_shape = req.shape;
  d.out_dtype = d.type == FFTType::c2c ? req.dtype : d.type == FFTType::r2c ? req.dtype.complex() : req.dtype.real();
  if (d.type == FFTType::r2c) d.out_shape[halved] = req.shape[halved] / 2 + 1;
  if (d.type == FFTType::c2r) {
    const std::int64_t m = req.shape[halved];
    const std::int64_t n = req.parity == Parity::even ? 2 * (m - 1) : 2 * (m - 1) + 1;
    if (n < 1)
      throw InvalidArgument(fmt::format(
          "FFT: last_axis_parity: C2R over axis {} of length {} with Parity::even gives a result of length 0; "
          "expected Parity::odd (result length 1) or a longer axis",
          halved, m));
    d.out_shape[halved] = n;
  }

  if (req.out_shape && !(*req.out_shape == d.out_shape))
    throw InvalidArgument(fmt::format("FFT: out: expected shape {}, got {}", str(d.out_shape), str(*req.out_shape)));
  if (req.out_dtype && !(*req.out_dtype == d.out_dtype))
    throw InvalidArgument(
        fmt::format("FFT: out: expected dtype {}, got {}", d.out_dtype.name(), req.out_dtype->name()));
  require_addressable_result("FFT", d.out_shape, d.out_dtype);

  // Transformed axes of length 1 are the identity and drop out, except the halved axis of R2C/C2R.
  std::vector<int> active;
  for (int a : d.axes)
    if (a == halved || req.shape[a] > 1) active.push_back(a);

  // The result the user sees.
  if (req.inplace) {
    d.out_strides = req.strides;
    if (d.type != FFTType::c2c) {
      // R2C: the real strides halve into complex ones, so they must be even. C2R: any complex stride doubles into
      // a real one (the result of an in-place R2C, e.g. complex strides [9, 1] for n = 16 or 17, qualifies).
      const bool ok_last = req.strides[halved] == 1;
      bool ok_even = true;
      for (int a = 0; a < ndim && d.type == FFTType::r2c; ++a)
        if (a != halved && req.shape[a] > 1 && req.strides[a] % 2 != 0) ok_even = false;
      if (!ok_last || !ok_even)
        throw InvalidArgument(
            fmt::format("FFT: inplace: {} in place needs axis {} contiguous (stride 1){}, got strides {}",
                        d.type == FFTType::r2c ? "R2C" : "C2R", halved,
                        d.type == FFTType::r2c ? " and every other stride even" : "", str(req.strides)));
      for (int a = 0; a < ndim; ++a)
        d.out_strides[a] = a == halved ? 1 : d.type == FFTType::r2c ? req.strides[a] / 2 : req.strides[a] * 2;
      // Each complex row of m values must fit before the next one starts (the real rows padded to 2m values).
      const Strides& complex_strides = d.type == FFTType::r2c ? d.out_strides : req.strides;
      const std::int64_t m = d.type == FFTType::r2c ? d.out_shape[halved] : req.shape[halved];
      for (int a = 0; a < ndim; ++a)
        if (a != halved && req.shape[a] > 1 && complex_strides[a] < m)
          throw InvalidArgument(fmt::format(
              "FFT: inplace: {} in place needs the real rows along axis {} padded to {} values (strides of at least "
              "{} reals), got strides {}",
              d.type == FFTType::r2c ? "R2C" : "C2R", halved, 2 * m, 2 * m,
              str(d.type == FFTType::r2c ? req.strides : d.out_strides)));
    }
  } else if (req.out_strides) {
    d.out_strides = *req.out_strides;
    for (int a = 0; a < ndim; ++a)
      if (d.out_shape[a] > 1 && d.out_strides[a] <= 0)
        throw InvalidArgument(fmt::format("FFT: out: expected positive strides, got {} for shape {}",
                                          str(d.out_strides), str(d.out_shape)));
  } else {
    d.out_strides = row_major_strides(d.out_shape);
  }

  // Compute input: the operand itself when its layout nests, else a dense staging copy.
  d.compute_in_strides = req.strides;
  d.input_copy = req.stage_input;
  if (req.stage_input) d.input_copy_reason = "operand staged into the execution space's memory";
  if (!d.input_copy && d.type == FFTType::c2r && !req.inplace) {
    d.input_copy = true;
    d.input_copy_reason = "C2R overwrites its input; the operand is copied to keep it intact";
  }
  std::vector<int> order = transform_order(active, d.compute_in_strides, halved);
  if (!d.input_copy) {
    const bool nests = nest(d.in_shape, d.compute_in_strides, order).has_value();
    const auto dims = batch_dims(d.in_shape, d.compute_in_strides, d.out_strides, active);
    if (!nests || !batch_strides_positive(dims, true)) {
      if (req.inplace)
        throw InvalidArgument(fmt::format(
            "FFT: inplace: operand strides {} (shape {}) cannot be transformed in place: the transformed axes must "
            "nest as an advanced layout with positive strides",
            str(req.strides), str(req.shape)));
      d.input_copy = true;
      d.input_copy_reason = fmt::format("operand strides {} are not an advanced layout", str(req.strides));
    }
  }
  if (d.input_copy) {
    std::vector<int> perm = memory_order(d.out_shape, d.out_strides);
    if (halved >= 0) {
      perm.erase(std::find(perm.begin(), perm.end(), halved));
      perm.push_back(halved);
    }
    d.compute_in_strides = dense_strides(d.in_shape, perm);
    order = transform_order(active, d.compute_in_strides, halved);
  }

  // Compute output: the result itself when it nests in the same order, else an internal dense buffer.
  d.compute_out_strides = d.out_strides;
  d.output_copy = req.stage_output;
  if (req.stage_output) d.output_copy_reason = "result staged back from the execution space's memory";
  if (!d.output_copy && !nest(d.out_shape, d.out_strides, order)) {
    if (req.inplace)
      throw InvalidArgument(fmt::format("FFT: inplace: result strides {} do not nest like the operand strides {}",
                                        str(d.out_strides), str(req.strides)));
    d.output_copy = true;
    d.output_copy_reason =
        fmt::format("result strides {} do not nest in the transform order of the input", str(d.out_strides));
  }
  if (d.output_copy) d.compute_out_strides = dense_strides(d.out_shape, memory_order(d.in_shape, d.compute_in_strides));
  d.inplace_compute = req.inplace && !d.input_copy && !d.output_copy;

  // Both sides dense over one batch-outer permutation: every batch dimension merges into one (count, distance)
  // pair, so the transform is a single library call.
  const auto copy_both_batch_outer = [&](const std::string& reason) {
    const std::vector<int> perm = batch_outer_perm(d.in_shape, d.compute_in_strides, active, order);
    if (!d.input_copy) d.input_copy_reason = reason;
    if (!d.output_copy) d.output_copy_reason = reason;
    d.input_copy = d.output_copy = true;
    d.compute_in_strides = dense_strides(d.in_shape, perm);
    d.compute_out_strides = dense_strides(d.out_shape, perm);
  };

  // Many batch dimensions that do not merge would cost one cuFFT call each: use batch-outer dense copies instead.
  if (req.loop_is_costly && !d.inplace_compute && loop_calls(d, active) > kMaxLoopCalls)
    copy_both_batch_outer("batch axes do not merge into one (count, distance) pair");
  else if (req.single_call && !d.inplace_compute && loop_calls(d, active) > 1)
    copy_both_batch_outer("callbacks need one cuFFT call, and the batch axes do not merge into one");

  d.layout = build_layout(d, order, active);

  // cuFFT rejects (CUFFT_INVALID_VALUE) an R2C/C2R call whose real pointer is not aligned to the complex type, as
  // when a loop over a batch axis of odd real stride starts calls at odd real offsets. In place, every real stride
  // is even (checked above), so only out-of-place layouts get here. First copy the real side alone into a dense
  // layout whose batches follow the complex side (they then usually merge into one call); else copy both sides.
  if (req.aligned_real_calls && !d.inplace_compute && !real_calls_aligned(d)) {
    const std::string reason = odd_offsets(d);
    if (d.type == FFTType::r2c) {
      if (!d.input_copy) d.input_copy_reason = reason;
      d.input_copy = true;
      d.compute_in_strides =
          dense_strides(d.in_shape, batch_outer_perm(d.out_shape, d.compute_out_strides, active, order));
    } else {
      if (!d.output_copy) d.output_copy_reason = reason;
      d.output_copy = true;
      d.compute_out_strides =
          dense_strides(d.out_shape, batch_outer_perm(d.in_shape, d.compute_in_strides, active, order));
    }
    d.layout = build_layout(d, order, active);
    if (!real_calls_aligned(d)) {
      copy_both_batch_outer(reason);
      d.layout = build_layout(d, order, active);
    }
  }

  // ResultLayout::optimized: the result takes the layout the library computes into, so no copy is made just to
  // rearrange it (a copy back from another memory space stays, and is then a plain dense one).
  if (req.result_layout == ResultLayout::optimized && !req.inplace && !req.out_strides && d.output_copy) {
    d.out_strides = d.compute_out_strides;
    if (!req.stage_output) {
      d.output_copy = false;
      d.output_copy_reason.clear();
    }
  }
  return d;
}

}  // namespace cuplan::detail

namespace cuplan::detail {

OutputWalk output_walk(const AdvancedLayout& layout, FFTType type) {
  OutputWalk walk;
  for (const BatchDim& b : layout.batch_dims) {
    walk.extent[walk.rank] = b.count;
    walk.stride[walk.rank++] = b.out_stride;
  }
  for (int k = 0; k < layout.rank; ++k) {
    std::int64_t stride = layout.ostride;
    for (int j = k + 1; j < layout.rank; ++j) stride *= layout.onembed[j];
    const bool halved = type == FFTType::r2c && k == layout.rank - 1;
    walk.extent[walk.rank] = halved ? layout.n[k] / 2 + 1 : layout.n[k];
    walk.stride[walk.rank++] = stride;
  }
  return walk;
}

}  // namespace cuplan::detail
