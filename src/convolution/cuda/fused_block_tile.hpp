// SPDX-License-Identifier: Apache-2.0
#pragma once
// The whole-transform kernel's tile geometry (fused_block.cuh), free of cuFFTDx and of CUDA: where an entry's values
// lie in the shared-memory tile, which tile elements make the FFTs along each axis, where the kernel's spectrum holds a
// frequency of the first axis, and which tile values make the result. The kernel and a host model of it
// (tests/convolution/fused_block_model_test.cpp) use the same functions.

#include <cstdint>

#if defined(__CUDACC__)
#define CUPLAN_TILE_HD __host__ __device__ inline
#else
#define CUPLAN_TILE_HD inline
#endif

namespace cuplan::detail::fused {

/// The tile of an entry of lengths N0 x N1 x N2 (N0 = 1 in 2D): element (i0, i1, i2) at i0 * plane + i1 * row + i2.
/// Rows (and in 3D planes) are one element longer than dense, so that a warp reading down a column (the outer axes'
/// FFTs) falls in different banks.
template <unsigned N0, unsigned N1, unsigned N2>
struct BlockTile {
  static constexpr unsigned n0 = N0, n1 = N1, n2 = N2;
  static constexpr unsigned row = N2 + 1;
  static constexpr unsigned plane = N0 > 1 ? N1* row + 1 : N1* row;
  static constexpr unsigned elements = N0 * plane;  ///< the tile's extent in elements, padding included
  static constexpr unsigned size = N0 * N1 * N2;    ///< values of one entry
  /// The first axis (0 in 3D, 1 in 2D): its pass runs the forward FFT, the product and the inverse FFT.
  static constexpr unsigned first_axis = N0 > 1 ? 0 : 1;

  CUPLAN_TILE_HD static unsigned offset(unsigned i0, unsigned i1, unsigned i2) { return i0 * plane + i1 * row + i2; }
  /// Value `t` of the entry in row-major order (i2 fastest) as tile coordinates.
  CUPLAN_TILE_HD static void coordinates(unsigned t, unsigned& i0, unsigned& i1, unsigned& i2) {
    i2 = t % N2;
    i1 = (t / N2) % N1;
    i0 = t / (N2 * N1);
  }
  template <unsigned Axis>
  static constexpr unsigned length = Axis == 0   ? N0
                                     : Axis == 1 ? N1
                                                 : N2;
  /// The distance between neighbouring elements of an FFT along `Axis`.
  template <unsigned Axis>
  static constexpr unsigned step = Axis == 2   ? 1
                                   : Axis == 1 ? row
                                               : plane;
  /// The first element of FFT `fft` (0 <= fft < size / length<Axis>) along `Axis`: the other two axes' indices, the
  /// inner one fastest in `fft`. Element k of it is at first + k * step<Axis>.
  template <unsigned Axis>
  CUPLAN_TILE_HD static unsigned first(unsigned fft) {
    if constexpr (Axis == 2)
      return (fft / N1) * plane + (fft % N1) * row;
    else if constexpr (Axis == 1)
      return (fft / N2) * plane + fft % N2;
    else
      return (fft / N2) * row + fft % N2;
  }
  /// Where the kernel's spectrum (dense [N0][N1][N2]) holds frequency k of FFT `fft` along the first axis.
  CUPLAN_TILE_HD static unsigned spectrum_index(unsigned k, unsigned fft) {
    return k * (size / length<first_axis>)+fft;
  }
};

}  // namespace cuplan::detail::fused
