// SPDX-License-Identifier: Apache-2.0
// The convolution planner (see planner.hpp).

#include "convolution/planner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "base/geometry.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {
namespace {

constexpr const char* kWho = "Convolution";
// The longest convolved axis of the operand or the kernel (as RealTransform's axes): 2^40 elements, terabytes.
constexpr std::int64_t kMaxAxisLength = std::int64_t{1} << 40;

std::string str(const Dims& dims) {
  return fmt::format("[{}]", fmt::join(dims.span(), ", "));
}

bool supported_dtype(DType dtype) {
  return dtype == f32 || dtype == f64 || dtype == c64 || dtype == c128;
}

std::int64_t checked_product(std::int64_t a, std::int64_t b, const char* what) {
  if (b != 0 && a > std::numeric_limits<std::int64_t>::max() / b)
    throw InvalidArgument(fmt::format("{}: {}: the element count overflows a 64-bit integer", kWho, what));
  return a * b;
}

// v * f, or the largest int64 where that would overflow (every search below stops at a value >= n, so a saturated
// value only ends a loop).
constexpr std::int64_t times(std::int64_t v, std::int64_t f) noexcept {
  return v > std::numeric_limits<std::int64_t>::max() / f ? std::numeric_limits<std::int64_t>::max() : v * f;
}

// The fused row kernels' time per transformed point at each compiled length, relative to the kernel of 256:
// raw cuFFT's separate passes over the fused kernel, 3.00x, 2.77x, 2.48x and 1.62x at 256, 1024, 4096 and 16384
// (bench/convolution_bench --rows 1d, c64 rows of 512 MiB, H100), times the separate passes' own time per point
// (the same up to 4096, 1.26x at 16384: the H200 table of docs/convolution.md); the lengths between are geometric
// means. The real kernels gain less at 16384 (1.47x against 2.35x at 256); one table for all keeps the choice simple.
struct PointCost {
  std::int64_t length;
  double fused;
};
constexpr PointCost kFusedPointCost[] = {{256, 1.00},  {512, 1.04},  {1024, 1.08}, {2048, 1.14},
                                         {4096, 1.21}, {8192, 1.68}, {16384, 2.33}};

double fused_point_cost(std::int64_t length) {
  for (const PointCost& c : kFusedPointCost)
    if (c.length >= length) return c.fused;
  return kFusedPointCost[std::size(kFusedPointCost) - 1].fused;
}

// The fused route's cost of one row of `g` (segments FFTs of fft_length[0]).
double fused_row_cost(const ConvolutionGeometry& g) {
  return static_cast<double>(g.segments) * static_cast<double>(g.fft_length[0]) * fused_point_cost(g.fft_length[0]);
}

// The overlap-save segments of a 1D linear-mode `g` at FFT length `length`; count 0 where a segment keeps no result
// (length <= the kernel's length - 1).
struct Segments {
  std::int64_t lead, hop, count;
};
Segments segments_at(const ConvolutionGeometry& g, std::int64_t length) {
  const int axis = g.conv_axes[0];
  const std::int64_t lead = g.kernel_shape[axis] - 1, hop = length - lead;
  return {lead, hop, hop > 0 ? (g.out_shape[axis] + hop - 1) / hop : 0};
}

}  // namespace

std::int64_t next_power_of_two(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p = times(p, 2);
  return p;
}

std::int64_t next_fast_length(std::int64_t n) {
  if (n <= 1) return 1;
  // For each odd part 3^b 5^c 7^d (up to the first one >= n), the least power-of-two multiple >= n: O(log^3 n)
  // steps. Counting upwards from n takes as many steps as the gap to the next smooth number, ~10^9 near 2^40.
  std::int64_t best = next_power_of_two(n);
  for (std::int64_t p7 = 1;; p7 = times(p7, 7)) {
    for (std::int64_t p5 = p7;; p5 = times(p5, 5)) {
      for (std::int64_t odd = p5;; odd = times(odd, 3)) {
        std::int64_t candidate = odd;
        while (candidate < n) candidate = times(candidate, 2);
        best = std::min(best, candidate);
        if (odd >= n) break;
      }
      if (p5 >= n) break;
    }
    if (p7 >= n) break;
  }
  return best;
}

std::int64_t needed_length(ConvolutionMode mode, std::int64_t n, std::int64_t k) {
  return mode == ConvolutionMode::circular ? n : n + k - 1;
}

ConvolutionGeometry plan_convolution(const ConvolutionRequest& request) {
  ConvolutionGeometry g;
  g.mode = request.mode;
  if (!supported_dtype(request.in_dtype))
    throw InvalidArgument(
        fmt::format("{}: operand dtype: expected f32, f64, c64 or c128, got {}", kWho, request.in_dtype.name()));
  if (!supported_dtype(request.kernel_dtype))
    throw InvalidArgument(
        fmt::format("{}: kernel dtype: expected f32, f64, c64 or c128, got {}", kWho, request.kernel_dtype.name()));
  if (request.kernel_dtype.real() != request.in_dtype.real())
    throw InvalidArgument(fmt::format("{}: kernel dtype: expected the operand's precision ({} or {}), got {}", kWho,
                                      request.in_dtype.real().name(), request.in_dtype.real().complex().name(),
                                      request.kernel_dtype.name()));
  const int ndim = request.in_shape.size();
  if (request.kernel_shape.size() != ndim)
    throw InvalidArgument(fmt::format("{}: kernel rank: expected the operand's rank {}, got {} (kernel shape {})", kWho,
                                      ndim, request.kernel_shape.size(), str(request.kernel_shape)));
  g.axes = normalize_axes(request.axes, ndim, kWho);
  for (int a = 0; a < ndim; ++a) {
    if (request.in_shape[a] <= 0)
      throw InvalidArgument(fmt::format("{}: operand shape: expected every extent >= 1, got {} (axis {} is {})", kWho,
                                        str(request.in_shape), a, request.in_shape[a]));
    if (request.kernel_shape[a] <= 0)
      throw InvalidArgument(fmt::format("{}: kernel shape: expected every extent >= 1, got {} (axis {} is {})", kWho,
                                        str(request.kernel_shape), a, request.kernel_shape[a]));
  }
  g.in_dtype = request.in_dtype;
  g.kernel_dtype = request.kernel_dtype;
  g.real = !request.in_dtype.is_complex() && !request.kernel_dtype.is_complex();
  g.out_dtype = g.real ? request.in_dtype : request.in_dtype.real().complex();
  g.in_shape = request.in_shape;
  g.kernel_shape = request.kernel_shape;
  // An axis along which the kernel has length 1 needs no transform: there the convolution multiplies by the kernel's
  // one value, as a batch axis with the kernel broadcast does (same result in every mode, without the FFTs).
  for (int a : g.axes)
    if (request.kernel_shape[a] != 1) g.conv_axes.push_back(a);
  if (g.conv_axes.empty()) g.conv_axes.push_back(g.axes.back());
  std::sort(g.conv_axes.begin(), g.conv_axes.end());
  g.rank = static_cast<int>(g.conv_axes.size());
  for (int a = 0; a < ndim; ++a)
    if (std::find(g.conv_axes.begin(), g.conv_axes.end(), a) == g.conv_axes.end()) g.batch_axes.push_back(a);

  // Batch axes: the kernel broadcasts (extent 1) or matches.
  for (int a : g.batch_axes) {
    const std::int64_t k = request.kernel_shape[a];
    if (k != 1 && k != request.in_shape[a])
      throw InvalidArgument(fmt::format(
          "{}: kernel shape: batch axis {} must have the operand's extent {} or 1 (broadcast), got {} (kernel {}, "
          "operand {})",
          kWho, a, request.in_shape[a], k, str(request.kernel_shape), str(request.in_shape)));
  }
  // Valid mode: one operand covers the other on every convolved axis (scipy's rule).
  if (g.mode == ConvolutionMode::valid) {
    bool kernel_shorter = true, kernel_longer = true;
    for (int a : g.conv_axes) {
      kernel_shorter = kernel_shorter && request.kernel_shape[a] <= request.in_shape[a];
      kernel_longer = kernel_longer && request.kernel_shape[a] >= request.in_shape[a];
    }
    if (!kernel_shorter && !kernel_longer)
      throw InvalidArgument(fmt::format(
          "{}: kernel shape: valid mode needs the operand at least as long as the kernel on every convolved axis, or "
          "at most as long on every one; got operand {} and kernel {} on axes [{}]",
          kWho, str(request.in_shape), str(request.kernel_shape), fmt::join(g.axes, ", ")));
  }

  g.out_shape = request.in_shape;
  for (int i = 0; i < g.rank; ++i) {
    const int a = g.conv_axes[static_cast<std::size_t>(i)];
    const std::int64_t n = request.in_shape[a], k = request.kernel_shape[a];
    // Before any length arithmetic: n + k - 1 and the FFT lengths above it stay far from overflow.
    for (const auto& [what, length] : {std::pair{"operand", n}, std::pair{"kernel", k}})
      if (length > kMaxAxisLength)
        throw InvalidArgument(
            fmt::format("{}: {} shape: convolved axis {} has length {}, expected at most 2^40", kWho, what, a, length));
    if (g.mode == ConvolutionMode::circular && k > n)
      throw InvalidArgument(fmt::format(
          "{}: kernel shape: circular mode needs a kernel no longer than the operand on each convolved axis; axis {} "
          "expected at most {}, got {}",
          kWho, a, n, k));
    // At least 2: cuFFT refuses a C2C plan of length 1. Any length of at least n + k - 1 gives the linear result, and
    // for n = 1 (so k = 1) the circular result of period 1 is the linear one.
    const std::int64_t needed = std::max<std::int64_t>(needed_length(g.mode, n, k), 2);
    if (g.mode == ConvolutionMode::circular)
      g.fft_length[i] = std::max<std::int64_t>(n, 2);
    else if ((i == 0 && request.power_of_two_first) || request.power_of_two_all)
      g.fft_length[i] = next_power_of_two(needed);
    else
      g.fft_length[i] = next_fast_length(needed);
    switch (g.mode) {
      case ConvolutionMode::full:
        g.out_shape[a] = n + k - 1;
        break;
      case ConvolutionMode::same:
        g.out_shape[a] = n;
        g.out_offset[i] = (k - 1) / 2;
        break;
      case ConvolutionMode::valid:
        g.out_shape[a] = std::max(n, k) - std::min(n, k) + 1;
        g.out_offset[i] = std::min(n, k) - 1;
        break;
      case ConvolutionMode::circular:
        g.out_shape[a] = n;
        break;
    }
  }
  g.out_strides = dense_strides(g.out_shape, [&] {
    std::vector<int> perm(static_cast<std::size_t>(ndim));
    for (int a = 0; a < ndim; ++a) perm[static_cast<std::size_t>(a)] = a;
    return perm;
  }());
  require_addressable_result(kWho, g.out_shape, g.out_dtype);

  for (int a : g.batch_axes) {
    g.work_shape.push_back(request.in_shape[a]);
    g.kernel_work_shape.push_back(request.kernel_shape[a]);
    g.batch = checked_product(g.batch, request.in_shape[a], "operand");
    g.kernel_batch = checked_product(g.kernel_batch, request.kernel_shape[a], "kernel");
  }
  g.spectrum_shape = g.work_shape;
  g.kernel_spectrum_shape = g.kernel_work_shape;
  for (int i = 0; i < g.rank; ++i) {
    const std::int64_t length = g.fft_length[i];
    const std::int64_t spectrum = g.real && i == g.rank - 1 ? length / 2 + 1 : length;
    g.work_shape.push_back(length);
    g.kernel_work_shape.push_back(length);
    g.spectrum_shape.push_back(spectrum);
    g.kernel_spectrum_shape.push_back(spectrum);
    g.fft_size = checked_product(g.fft_size, length, "FFT length");
    g.spectrum_size = checked_product(g.spectrum_size, spectrum, "FFT length");
  }
  // Every buffer's byte count fits an int64 (16 bytes an element at most).
  checked_product(checked_product(g.batch, g.fft_size, "operand"), 16, "operand");
  checked_product(checked_product(g.kernel_batch, g.fft_size, "kernel"), 16, "kernel");
  return g;
}

ConvolutionGeometry segmented(const ConvolutionGeometry& g, std::int64_t length) {
  const bool linear_1d = g.rank == 1 && g.mode != ConvolutionMode::circular;
  const Segments seg = linear_1d ? segments_at(g, length) : Segments{};
  if (seg.count == 0)
    throw InvalidArgument(fmt::format(
        "{}: overlap-save needs a 1D linear-mode convolution and a segment length above the kernel's length - 1; got "
        "rank {}, mode {} and length {} for a kernel of {}",
        kWho, g.rank, to_string(g.mode), length, g.kernel_shape[g.conv_axes[0]]));
  ConvolutionGeometry s = g;
  s.fft_length[0] = length;
  s.segments = seg.count;
  s.segment_hop = seg.hop;
  // The circular results from the kernel's length - 1 on are linear ones: segment s's first is result value
  // s * hop when its FFT starts at operand index s * hop + out_offset - lead (out_offset: the linear result's first
  // index that the mode keeps).
  s.segment_in_shift = g.out_offset[0] - seg.lead;
  s.out_offset[0] = seg.lead;
  const std::int64_t spectrum = g.real ? length / 2 + 1 : length;
  s.work_shape[s.work_shape.size() - 1] = length;
  s.kernel_work_shape[s.kernel_work_shape.size() - 1] = length;
  s.spectrum_shape[s.spectrum_shape.size() - 1] = spectrum;
  s.kernel_spectrum_shape[s.kernel_spectrum_shape.size() - 1] = spectrum;
  s.fft_size = length;
  s.spectrum_size = spectrum;
  return s;
}

std::int64_t choose_row_fft_length(const ConvolutionGeometry& g, std::span<const std::int64_t> lengths) {
  if (g.rank != 1 || g.mode == ConvolutionMode::circular) return g.fft_length[0];
  const std::int64_t whole = g.fft_length[0];
  std::int64_t best = 0;
  double best_cost = std::numeric_limits<double>::infinity();
  if (std::find(lengths.begin(), lengths.end(), whole) != lengths.end()) {
    best = whole;
    // Segments must beat one FFT by a tenth: the per-point costs are ratios of one run, and segments re-read their
    // overlap.
    best_cost = 0.9 * fused_row_cost(g);
  }
  for (std::int64_t length : lengths) {
    if (length >= whole) break;  // one FFT of `whole` covers the row with fewer points
    const Segments seg = segments_at(g, length);
    // A segment keeps at least a quarter of its results: shorter hops read the operand over four times (and a
    // length at or below the kernel's length - 1 keeps none).
    if (seg.count == 0 || seg.hop * 4 < length) continue;
    const double cost = static_cast<double>(seg.count) * static_cast<double>(length) * fused_point_cost(length);
    if (cost < best_cost) {
      best = length;
      best_cost = cost;
    }
  }
  return best;
}

std::optional<std::string> block_obstacle(const ConvolutionGeometry& g) {
  if (g.rank < 2) return fmt::format("the whole-transform kernel takes 2D and 3D convolutions, not {}D", g.rank);
  std::int64_t values = 1;
  for (int i = 0; i < g.rank; ++i) {
    const std::int64_t length = g.fft_length[i];
    if (length < 16 || length != next_power_of_two(length))
      return fmt::format("the whole-transform kernel takes FFT lengths that are powers of two from 16; axis {} has {}",
                         g.conv_axes[static_cast<std::size_t>(i)], length);
    values *= length;
  }
  const DType complex = g.out_dtype.real().complex();
  const std::int64_t most = complex == c128 ? kMaxBlockValues / 4 : kMaxBlockValues;
  if (values > most)
    return fmt::format("the whole-transform kernel holds at most {} {} values an entry in one block, not {}", most,
                       complex.name(), values);
  const bool paired = g.real && g.kernel_batch == 1;
  const std::int64_t blocks = paired ? (g.batch + 1) / 2 : g.batch;
  if (blocks > 0x7fffffff)
    return fmt::format("the whole-transform kernel runs at most 2^31 - 1 blocks, not {}", blocks);
  return std::nullopt;
}

std::optional<std::string> automatic_fused_obstacle(const ConvolutionGeometry& g) {
  if (g.rank == 1) return std::nullopt;
  // Columns of up to 64 KiB: one kernel up to 32 KiB, the split route's three passes at 64 KiB (c64 8192 measured
  // 1.34x the separate route, H100). Longer columns run the split route too, where it is asked for.
  const DType complex = g.out_dtype.real().complex();
  const std::int64_t length = g.fft_length[0];
  if (length * static_cast<std::int64_t>(complex.size()) <= 64 * 1024) return std::nullopt;
  return fmt::format(
      "route automatic runs the column route of {}D convolutions up to 64 KiB a column (c64 up to 8192, c128 up to "
      "4096); the column route at length {} of axis {} ({}) has not been measured against the separate route (ask "
      "for route fused to run it)",
      g.rank, length, g.conv_axes[0], complex.name());
}

std::optional<std::string> fused_obstacle(const ConvolutionGeometry& g, const Strides& in_strides,
                                          std::int64_t min_length, std::int64_t max_length) {
  const int ndim = g.in_shape.size();
  const DType in = g.in_dtype, kernel = g.kernel_dtype;
  if (g.rank == 1) {
    // The kernel reads the operand's rows and writes the result's directly.
    const int axis = g.conv_axes[0];
    if (axis != ndim - 1)
      return fmt::format("the fused kernel convolves the last axis ({}) in 1D, not axis {}", ndim - 1, axis);
    if (g.in_shape[axis] > 1 && in_strides[axis] != 1)
      return fmt::format("the operand's last axis has stride {}, not 1", in_strides[axis]);
    if (!uniform_row_stride(g.in_shape, in_strides))
      return std::string("the operand's rows are not one stride apart (its batch axes do not nest)");
    // The kernel's indices are 32-bit: rows of up to 2^30 values leave room for a segment past the row's end.
    constexpr std::int64_t kMaxRow = std::int64_t{1} << 30;
    if (g.in_shape[axis] > kMaxRow || g.out_shape[axis] > kMaxRow)
      return fmt::format("the fused kernel takes rows of up to 2^30 values, not an operand of {} and a result of {}",
                         g.in_shape[axis], g.out_shape[axis]);
    const bool c2c = in == kernel && (in == c64 || in == c128);
    const bool r2c = g.real && (in == f32 || in == f64);
    if (!c2c && !r2c)
      return fmt::format(
          "the fused kernels take c64, c128, real f32 or real f64 operand and kernel alike, not {} with {}", in.name(),
          kernel.name());
  }
  if (g.kernel_batch != 1 && g.kernel_batch != g.batch)
    return fmt::format(
        "the fused kernel takes one kernel for every batch entry or one per entry, not a kernel "
        "broadcast over some batch axes (kernel {}, operand {})",
        str(g.kernel_shape), str(g.in_shape));
  const std::int64_t length = g.fft_length[0];
  if (length != next_power_of_two(length) || length < min_length || length > max_length)
    return fmt::format("the FFT length {} of axis {} is not a power of two from {} to {}", length, g.conv_axes[0],
                       min_length, max_length);
  return std::nullopt;
}

std::optional<std::int64_t> uniform_row_stride(const Shape& shape, const Strides& strides) {
  const int ndim = shape.size();
  std::optional<std::int64_t> row_stride;
  std::int64_t expected = 0;  // what the next outer axis of extent > 1 must have
  for (int a = ndim - 2; a >= 0; --a) {
    if (shape[a] == 1) continue;
    if (!row_stride) {
      row_stride = strides[a];
    } else if (strides[a] != expected) {
      return std::nullopt;
    }
    expected = strides[a] * shape[a];
  }
  return row_stride.value_or(shape[ndim - 1]);
}

std::vector<int> canonical_order(const ConvolutionGeometry& g) {
  std::vector<int> order = g.batch_axes;
  order.insert(order.end(), g.conv_axes.begin(), g.conv_axes.end());
  return order;
}

LayoutRequest transform_request(const Shape& shape, int rank, DType dtype, FFTType type, std::int64_t real_last) {
  LayoutRequest request;
  request.dtype = dtype;
  request.shape = shape;
  const int ndim = shape.size();
  std::vector<int> perm(static_cast<std::size_t>(ndim));
  for (int a = 0; a < ndim; ++a) perm[static_cast<std::size_t>(a)] = a;
  request.strides = dense_strides(shape, perm);
  for (int a = ndim - rank; a < ndim; ++a) request.axes.push_back(a);
  request.type = type;
  request.parity = real_last % 2 == 0 ? Parity::even : Parity::odd;
  return request;
}

}  // namespace cuplan::detail
