// SPDX-License-Identifier: Apache-2.0
// The whole-transform kernel's data flow on the host, without a GPU: the planner's geometry and walks, the tile
// geometry the kernel uses (convolution/cuda/fused_block_tile.hpp: where values lie, which elements make each axis's
// FFTs, where the spectrum holds a frequency, which tile values make the result) and the kernel's loops, with a
// float64 DFT where the kernel runs cuFFTDx. Against the direct convolution: every mode, 2D and 3D tiles of unequal
// lengths, a kernel per entry, one broadcast over some batch axes, two real entries in one tile (paired), strided
// operands. The tile's padding is poisoned, so that a read of it shows.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <vector>

#include "convolution/canonical_walk.hpp"
#include "convolution/convolution_test_util.hpp"
#include "convolution/cuda/fused_block_tile.hpp"
#include "convolution/planner.hpp"

namespace cuplan::testing {
namespace {

using detail::CanonicalWalk;
using detail::ConvolutionGeometry;

/// The DFT of `line` in place (sign -1 forward, +1 inverse; unscaled, as cuFFTDx).
void dft(std::vector<cd>& line, int sign) {
  const auto n = line.size();
  std::vector<cd> out(n);
  for (std::size_t k = 0; k < n; ++k) {
    cd sum = 0;
    for (std::size_t j = 0; j < n; ++j)
      sum += line[j] *
             std::polar(1.0, sign * 2.0 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n));
    out[k] = sum;
  }
  line = out;
}

/// The FFTs along tile axis `Axis` of every line, as block_axis_pass runs them: FFT `fft`'s elements at
/// first<Axis>(fft) + k * step<Axis>. `between(line, fft)` runs after the forward DFT (the first axis's product and
/// inverse); `sign` is the DFT's direction.
template <class Tile, unsigned Axis, class Between>
void axis_pass(std::vector<cd>& tile, int sign, Between&& between) {
  constexpr unsigned length = Tile::template length<Axis>;
  std::vector<cd> line(length);
  for (unsigned fft = 0; fft < Tile::size / length; ++fft) {
    const unsigned first = Tile::template first<Axis>(fft);
    for (unsigned k = 0; k < length; ++k) line[k] = tile.at(first + k * Tile::template step<Axis>);
    dft(line, sign);
    between(line, fft);
    for (unsigned k = 0; k < length; ++k) tile.at(first + k * Tile::template step<Axis>) = line[k];
  }
}

/// The kernel's run over operand `x` (values at the offsets its walk gives; real operands with zero imaginary
/// parts) with kernel `k` (dense, g.kernel_shape), into a result of g.out_shape (dense, poisoned first).
template <class Tile>
std::vector<cd> run_model(const ConvolutionGeometry& g, const std::vector<cd>& x, const Strides& x_strides,
                          const std::vector<cd>& k) {
  for (int i = 0; i < g.rank; ++i) {
    const unsigned tile_length = i + 3 - g.rank == 0 ? Tile::n0 : i + 3 - g.rank == 1 ? Tile::n1 : Tile::n2;
    EXPECT_EQ(g.fft_length[i], static_cast<std::int64_t>(tile_length)) << "the case's tile";
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // The kernel's spectra as the device runner computes them: each kernel entry padded to the FFT lengths, its full
  // DFT (dense [N0][N1][N2]), scaled by 1/N.
  const auto kernel_strides = row_major(std::vector<std::int64_t>(g.kernel_shape.begin(), g.kernel_shape.end()));
  const CanonicalWalk kw = detail::kernel_walk(g, Strides(std::span<const std::int64_t>(kernel_strides)));
  std::vector<std::vector<cd>> spectra;
  for (std::int64_t e = 0; e < g.kernel_batch; ++e) {
    std::vector<cd> dense(Tile::size, 0);
    for (unsigned t = 0; t < Tile::size; ++t) {
      unsigned i0 = 0, i1 = 0, i2 = 0;
      Tile::coordinates(t, i0, i1, i2);
      if (i0 < kw.extent[0] && i1 < kw.extent[1] && i2 < kw.extent[2])
        dense[t] = k.at(
            static_cast<std::size_t>(kw.batch_offset(e) + i0 * kw.stride[0] + i1 * kw.stride[1] + i2 * kw.stride[2]));
    }
    // Along each axis of the dense array: its own tile geometry, unpadded, is a dense tile's.
    std::vector<cd> padded(Tile::elements, nan);
    for (unsigned t = 0; t < Tile::size; ++t) {
      unsigned i0 = 0, i1 = 0, i2 = 0;
      Tile::coordinates(t, i0, i1, i2);
      padded[Tile::offset(i0, i1, i2)] = dense[t];
    }
    const auto none = [](std::vector<cd>&, unsigned) {};
    axis_pass<Tile, 2>(padded, -1, none);
    axis_pass<Tile, 1>(padded, -1, none);
    if (Tile::n0 > 1) axis_pass<Tile, 0>(padded, -1, none);
    for (unsigned t = 0; t < Tile::size; ++t) {
      unsigned i0 = 0, i1 = 0, i2 = 0;
      Tile::coordinates(t, i0, i1, i2);
      dense[t] = padded[Tile::offset(i0, i1, i2)] / static_cast<double>(Tile::size);
    }
    spectra.push_back(dense);
  }

  const CanonicalWalk w = detail::canonical_walk(g, g.in_shape, x_strides);
  const CanonicalWalk o = detail::canonical_walk(g, g.out_shape, g.out_strides);
  const CanonicalWalk kernel_entries = detail::kernel_entries(g);
  std::int64_t out_offset[3] = {0, 0, 0};
  for (int i = 0; i < g.rank; ++i) out_offset[3 - g.rank + i] = g.out_offset[i];
  const bool real_in = !g.in_dtype.is_complex(), real_out = g.real, paired = g.real && g.kernel_batch == 1;
  std::vector<cd> out(
      static_cast<std::size_t>(product(std::vector<std::int64_t>(g.out_shape.begin(), g.out_shape.end()))),
      cd(nan, nan));
  const std::int64_t blocks = paired ? (g.batch + 1) / 2 : g.batch;
  for (std::int64_t block = 0; block < blocks; ++block) {
    const std::int64_t entry = paired ? 2 * block : block;
    const bool second = paired && entry + 1 < g.batch;
    std::vector<cd> tile(Tile::elements, cd(nan, nan));  // the padding poisoned: no pass may read it
    for (unsigned t = 0; t < Tile::size; ++t) {
      unsigned i0 = 0, i1 = 0, i2 = 0;
      Tile::coordinates(t, i0, i1, i2);
      cd v = 0;
      if (i0 < w.extent[0] && i1 < w.extent[1] && i2 < w.extent[2]) {
        const std::int64_t at = i0 * w.stride[0] + i1 * w.stride[1] + i2 * w.stride[2];
        v = x.at(static_cast<std::size_t>(w.batch_offset(entry) + at));
        if (real_in)
          v = cd(v.real(), second ? x.at(static_cast<std::size_t>(w.batch_offset(entry + 1) + at)).real() : 0);
      }
      tile[Tile::offset(i0, i1, i2)] = v;
    }
    const auto none = [](std::vector<cd>&, unsigned) {};
    const std::vector<cd>& spectrum = spectra.at(static_cast<std::size_t>(kernel_entries.batch_offset(entry)));
    const auto product_and_inverse = [&](std::vector<cd>& line, unsigned fft) {
      for (unsigned kf = 0; kf < line.size(); ++kf) line[kf] *= spectrum.at(Tile::spectrum_index(kf, fft));
      dft(line, +1);
    };
    axis_pass<Tile, 2>(tile, -1, none);
    if constexpr (Tile::first_axis == 0) axis_pass<Tile, 1>(tile, -1, none);
    axis_pass<Tile, Tile::first_axis>(tile, -1, product_and_inverse);
    if constexpr (Tile::first_axis == 0) axis_pass<Tile, 1>(tile, +1, none);
    axis_pass<Tile, 2>(tile, +1, none);
    // The store: rows of the result along its last axis.
    for (std::int64_t r = 0; r < o.extent[0] * o.extent[1]; ++r) {
      const auto j0 = static_cast<unsigned>(r / o.extent[1]), j1 = static_cast<unsigned>(r % o.extent[1]);
      const unsigned tile_row =
          Tile::offset(j0 + static_cast<unsigned>(out_offset[0]), j1 + static_cast<unsigned>(out_offset[1]),
                       static_cast<unsigned>(out_offset[2]));
      for (unsigned j2 = 0; j2 < o.extent[2]; ++j2) {
        const cd v = tile.at(tile_row + j2);
        const std::int64_t at = j0 * o.stride[0] + j1 * o.stride[1] + j2 * o.stride[2];
        if (!real_out) {
          out.at(static_cast<std::size_t>(o.batch_offset(entry) + at)) = v;
        } else {
          out.at(static_cast<std::size_t>(o.batch_offset(entry) + at)) = v.real();
          if (second) out.at(static_cast<std::size_t>(o.batch_offset(entry + 1) + at)) = v.imag();
        }
      }
    }
  }
  return out;
}

/// One case: plans `xs` * `ks` over `axes` with every FFT length a power of two, runs the model on tile `Tile`, and
/// compares with the direct convolution. `x_strides`: the operand's (empty: dense).
template <class Tile>
void check_model(DType dtype, DType kernel_dtype, std::vector<std::int64_t> xs, std::vector<std::int64_t> ks,
                 std::vector<int> axes, ConvolutionMode mode, std::vector<std::int64_t> x_strides = {}) {
  SCOPED_TRACE(::testing::Message() << dtype.name() << " * " << kernel_dtype.name() << " x "
                                    << ::testing::PrintToString(xs) << " k " << ::testing::PrintToString(ks) << " "
                                    << to_string(mode) << " tile " << Tile::n0 << "x" << Tile::n1 << "x" << Tile::n2);
  const ConvolutionGeometry g = detail::plan_convolution({.in_dtype = dtype,
                                                          .kernel_dtype = kernel_dtype,
                                                          .in_shape = Shape(std::span<const std::int64_t>(xs)),
                                                          .kernel_shape = Shape(std::span<const std::int64_t>(ks)),
                                                          .axes = axes,
                                                          .mode = mode,
                                                          .power_of_two_first = true,
                                                          .power_of_two_all = true});
  const auto random = [](std::vector<std::int64_t> shape, bool complex, unsigned seed) {
    std::vector<cd> v(static_cast<std::size_t>(product(shape)));
    std::uint32_t state = seed;
    const auto next = [&] {
      state = state * 1664525u + 1013904223u;
      return static_cast<double>(state >> 8) / static_cast<double>(1u << 24) - 0.5;
    };
    for (cd& value : v) value = complex ? cd(next(), next()) : cd(next(), 0);
    return v;
  };
  const std::vector<cd> x = random(xs, dtype.is_complex(), 11), k = random(ks, kernel_dtype.is_complex(), 12);
  // The operand at its strides (padding poisoned).
  const std::vector<std::int64_t> strides = x_strides.empty() ? row_major(xs) : x_strides;
  std::int64_t extent = 1;
  for (std::size_t i = 0; i < xs.size(); ++i) extent += (xs[i] - 1) * strides[i];
  std::vector<cd> stored(static_cast<std::size_t>(extent), cd(std::numeric_limits<double>::quiet_NaN(), 0));
  const auto dense_strides = row_major(xs);
  for (std::int64_t linear = 0; linear < product(xs); ++linear) {
    std::int64_t at = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) at += (linear / dense_strides[i]) % xs[i] * strides[i];
    stored[static_cast<std::size_t>(at)] = x[static_cast<std::size_t>(linear)];
  }
  const auto result = run_model<Tile>(g, stored, Strides(std::span<const std::int64_t>(strides)), k);
  std::vector<int> ref_axes;
  for (int a : axes) ref_axes.push_back(a < 0 ? a + static_cast<int>(xs.size()) : a);
  const auto expected = reference_convolution(x, xs, k, ks, ref_axes, mode);
  ASSERT_EQ(result.size(), expected.size());
  EXPECT_LT(relative_error(result, expected), 1e-12);
}

using detail::fused::BlockTile;

TEST(ConvolutionFusedBlockModel, TwoDimensionalTiles) {
  for (ConvolutionMode mode : {ConvolutionMode::full, ConvolutionMode::same, ConvolutionMode::valid}) {
    check_model<BlockTile<1, 16, 32>>(c128, c128, {3, 10, 20}, {1, 5, 9}, {1, 2}, mode);  // one kernel
    check_model<BlockTile<1, 16, 32>>(c128, c128, {3, 10, 20}, {3, 5, 9}, {1, 2}, mode);  // a kernel per entry
    check_model<BlockTile<1, 32, 16>>(f64, f64, {5, 20, 10}, {1, 9, 5}, {1, 2}, mode);    // paired, an odd batch
    check_model<BlockTile<1, 32, 16>>(f64, f64, {2, 20, 10}, {2, 9, 5}, {1, 2}, mode);    // real, not paired
    check_model<BlockTile<1, 16, 16>>(f64, c128, {2, 9, 12}, {1, 7, 5}, {1, 2}, mode);    // real * complex
  }
  // Circular (the operand's own lengths), the kernel broadcast over one of two batch axes; the valid mode with the
  // kernel the longer (scipy's swap).
  check_model<BlockTile<1, 16, 32>>(c128, c128, {2, 3, 16, 32}, {1, 3, 16, 5}, {2, 3}, ConvolutionMode::circular);
  check_model<BlockTile<1, 16, 16>>(c128, c128, {2, 3, 4}, {1, 12, 13}, {1, 2}, ConvolutionMode::valid);
  // A batch axis between the convolved ones, padded rows; the axes given in reverse order.
  check_model<BlockTile<1, 16, 16>>(c128, c128, {10, 3, 12}, {5, 1, 5}, {0, 2}, ConvolutionMode::same, {200, 60, 1});
  check_model<BlockTile<1, 32, 16>>(f64, f64, {3, 20, 10}, {1, 9, 5}, {2, 1}, ConvolutionMode::full, {1000, 31, 2});
}

TEST(ConvolutionFusedBlockModel, ThreeDimensionalTiles) {
  for (ConvolutionMode mode : {ConvolutionMode::full, ConvolutionMode::same, ConvolutionMode::valid})
    check_model<BlockTile<16, 32, 16>>(c128, c128, {2, 10, 20, 10}, {1, 5, 9, 5}, {1, 2, 3}, mode);
  check_model<BlockTile<16, 16, 32>>(f64, f64, {3, 12, 10, 20}, {1, 5, 7, 9}, {1, 2, 3}, ConvolutionMode::same);
  // Batch axis last.
  check_model<BlockTile<16, 16, 16>>(f64, f64, {16, 16, 16, 3}, {16, 4, 4, 1}, {0, 1, 2}, ConvolutionMode::circular);
}

}  // namespace
}  // namespace cuplan::testing
