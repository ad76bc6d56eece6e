// SPDX-License-Identifier: Apache-2.0
#pragma once
// The convolution planner: pure functions from the operand, the kernel and the options to the geometry both
// backends run (no CUDA, no FFTW, no memory). The work buffers are in canonical order: the batch axes (ascending),
// then the convolved axes (ascending), dense, each convolved axis padded to its FFT length. The kernel's buffer has
// the kernel's batch extents (each the operand's or 1) in the same order.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cuplan/convolution.hpp"
#include "fft/planner.hpp"

namespace cuplan::detail {

/// What the planner needs to know.
struct ConvolutionRequest {
  DType in_dtype = f32;
  DType kernel_dtype = f32;
  Shape in_shape;
  Shape kernel_shape;
  std::vector<int> axes;
  ConvolutionMode mode = ConvolutionMode::full;
  /// The FFT length of the first convolved axis, the one the fused kernels transform (the only one in 1D, the
  /// outermost in 2D and 3D), is the next power of two (the fused kernels' lengths) instead of the next
  /// 2-3-5-7-smooth length. Linear modes only; circular convolution keeps length n.
  bool power_of_two_first = false;
  /// Every convolved axis's FFT length is the next power of two (the whole-transform kernels' tiles). Linear modes;
  /// circular convolution keeps the operand's lengths.
  bool power_of_two_all = false;
};

/// The planner's answer.
struct ConvolutionGeometry {
  ConvolutionMode mode = ConvolutionMode::full;
  DType in_dtype, kernel_dtype;
  DType out_dtype;    ///< complex when either operand is
  bool real = false;  ///< both real: R2C forward, C2R inverse
  Shape in_shape, kernel_shape, out_shape;
  Strides out_strides;                     ///< dense row-major
  std::vector<int> axes;                   ///< normalised, in the order given
  std::vector<int> conv_axes;              ///< the same, ascending (canonical order)
  std::vector<int> batch_axes;             ///< the other axes, ascending
  int rank = 0;                            ///< convolved axes (1 to 3)
  std::int64_t fft_length[3] = {1, 1, 1};  ///< per convolved axis, canonical order
  std::int64_t out_offset[3] = {0, 0, 0};  ///< first result index in the circular result, per convolved axis
  Shape work_shape;                        ///< the operand's buffer: batch extents, then FFT lengths
  Shape kernel_work_shape;                 ///< the kernel's buffer: its batch extents, then FFT lengths
  Shape spectrum_shape;                    ///< the operand's spectrum (R2C: last length n/2+1)
  Shape kernel_spectrum_shape;             ///< the kernel's spectrum
  std::int64_t batch = 1;                  ///< product of the operand's batch extents
  std::int64_t kernel_batch = 1;           ///< product of the kernel's batch extents
  std::int64_t fft_size = 1;               ///< product of the FFT lengths (N of the 1/N scaling)
  std::int64_t spectrum_size = 1;          ///< spectrum values per batch entry
  /// Overlap-save (the 1D fused route only, segmented()): each row is `segments` FFTs of fft_length[0]; segment s
  /// reads operand values from s * segment_hop + segment_in_shift on (zero outside the row) and stores its circular
  /// results from out_offset[0] on (the kernel's length - 1: the ones no wrap-around reaches) as result values from
  /// s * segment_hop on, at most segment_hop of them. 1: one zero-padded FFT per row.
  std::int64_t segments = 1;
  std::int64_t segment_hop = 0;
  std::int64_t segment_in_shift = 0;
};

/// Decides the geometry; InvalidArgument naming the operand, the expected and the actual value for an unsupported
/// dtype, a precision mismatch, a rank mismatch, a zero extent, a kernel extent that does not broadcast, valid mode
/// with mixed length orders, or circular mode with a kernel longer than the operand.
ConvolutionGeometry plan_convolution(const ConvolutionRequest& request);

/// The smallest 2-3-5-7-smooth length >= n (1 <= n <= 2^61).
std::int64_t next_fast_length(std::int64_t n);
/// The smallest power of two >= n (1 <= n <= 2^62).
std::int64_t next_power_of_two(std::int64_t n);
/// The length one convolved axis needs: n + k - 1 for the linear modes, n for circular.
std::int64_t needed_length(ConvolutionMode mode, std::int64_t n, std::int64_t k);

/// Why the fused kernels cannot serve `geometry` for an operand of `in_strides` (nullopt: they can, as far as the
/// geometry goes; the build and the device decide the rest). In 1D the row kernel reads and writes the operand and
/// result directly: the convolved axis is the operand's last and dense, rows one stride apart, c64, c128, real f32 or
/// real f64 (both operands). In 2D and 3D (any dtypes) cuFFT transforms the inner axes of the work buffer and the
/// column kernel the first one, with the product between its two FFTs. Always: one kernel for every
/// batch entry or one per entry, and a power-of-two FFT length of the first convolved axis from `min_length` to
/// `max_length`.
std::optional<std::string> fused_obstacle(const ConvolutionGeometry& geometry, const Strides& in_strides,
                                          std::int64_t min_length, std::int64_t max_length);

/// `g` (1D, a linear mode, planned with power_of_two_first) as overlap-save segments of FFT length `length`, a power
/// of two above the kernel's length - 1: the spectra at that length, `segments` covering the result.
ConvolutionGeometry segmented(const ConvolutionGeometry& g, std::int64_t length);

/// The FFT length the 1D fused route runs `g` at (planned with power_of_two_first): g.fft_length[0], one FFT per row,
/// or a length of `lengths` (the compiled kernels', ascending) as overlap-save segments, whichever costs least by
/// the fused kernels' cost per point and length (measured; planner.cpp); 0 when no length of `lengths` can run it
/// (one FFT too long, segments too short for the kernel). Circular mode and 2D/3D: g.fft_length[0].
std::int64_t choose_row_fft_length(const ConvolutionGeometry& g, std::span<const std::int64_t> lengths);

/// The most c64 values a whole-transform tile holds (128 KiB; c128: a quarter as many, 64 KiB).
constexpr std::int64_t kMaxBlockValues = 16384;

/// Why the whole-transform kernel (one block takes a batch entry whole: every axis's FFTs, the product and the inverse
/// in shared memory) cannot serve `g`, planned with power_of_two_all (nullopt: it can, as far as the geometry goes;
/// the compiled tiles and the device decide the rest). 2D or 3D; every FFT length a power of two from 16, at most
/// kMaxBlockValues values an entry (c128: half); at most 2^31 - 1 blocks. Any dtypes, strides and kernel broadcast.
std::optional<std::string> block_obstacle(const ConvolutionGeometry& g);

/// Why ConvolutionRoute::automatic keeps the separate route where the fused kernel could run (nullopt: it takes the
/// fused kernel). 1D: always (one FFT a row: the device runner takes overlap-save segments on route fused only). 2D and
/// 3D: a column of at most 64 KiB (c64 up to 8192, c128 up to 4096; the split route's three passes at 64 KiB), the
/// lengths measured faster than the separate route; longer columns are not measured yet, and `fused` still runs them
/// (docs/convolution.md).
std::optional<std::string> automatic_fused_obstacle(const ConvolutionGeometry& geometry);

/// The distance between consecutive rows (along the last axis) of an operand whose other axes nest densely over
/// one another, counting every row once; nullopt when they do not. A single row gives its length.
std::optional<std::int64_t> uniform_row_stride(const Shape& shape, const Strides& strides);

/// The canonical order of an operand's axes: batch axes then convolved axes, both ascending.
std::vector<int> canonical_order(const ConvolutionGeometry& geometry);

/// The FFT planner's request for one side of the transforms over a dense canonical buffer of `shape` (the last
/// `rank` axes transformed): `type` c2c on a complex buffer, r2c on a real one, c2r on a spectrum whose real
/// length is `real_last`.
LayoutRequest transform_request(const Shape& shape, int rank, DType dtype, FFTType type, std::int64_t real_last = 0);

}  // namespace cuplan::detail
