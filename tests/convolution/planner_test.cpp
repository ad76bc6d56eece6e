// SPDX-License-Identifier: Apache-2.0
// The convolution planner alone (no GPU, no FFTW): result shapes and offsets of every mode, FFT lengths, canonical
// work shapes, kernel broadcast, and the fused kernel's conditions.

#include "convolution/planner.hpp"

#include <gtest/gtest.h>

#include "cuplan/errors.hpp"

namespace cuplan::detail {
namespace {

ConvolutionGeometry plan(Shape x, Shape k, std::vector<int> axes, ConvolutionMode mode, DType dtype = f32,
                         DType kernel_dtype = f32, bool pow2 = false, bool pow2_all = false) {
  return plan_convolution({.in_dtype = dtype,
                           .kernel_dtype = kernel_dtype,
                           .in_shape = x,
                           .kernel_shape = k,
                           .axes = std::move(axes),
                           .mode = mode,
                           .power_of_two_first = pow2,
                           .power_of_two_all = pow2_all});
}

TEST(ConvolutionPlanner, FastAndPowerOfTwoLengths) {
  EXPECT_EQ(next_fast_length(1), 1);
  EXPECT_EQ(next_fast_length(11), 12);
  EXPECT_EQ(next_fast_length(97), 98);
  EXPECT_EQ(next_fast_length(1031), 1050);
  EXPECT_EQ(next_power_of_two(1), 1);
  EXPECT_EQ(next_power_of_two(257), 512);
  EXPECT_EQ(next_power_of_two(4096), 4096);
}

TEST(ConvolutionPlanner, FastLengthsAreTheNextSmoothNumberAtOnceForHugeLengths) {
  const auto smooth = [](std::int64_t m) {
    for (std::int64_t f : {2, 3, 5, 7})
      while (m % f == 0) m /= f;
    return m == 1;
  };
  std::int64_t expected = 1;
  for (std::int64_t n = 1; n <= 5000; ++n) {
    while (expected < n || !smooth(expected)) ++expected;
    ASSERT_EQ(next_fast_length(n), expected) << "n = " << n;
  }
  // Near 2^40 the next smooth number is 1.2e9 away: counting up to it took half a minute.
  EXPECT_EQ(next_fast_length((std::int64_t{1} << 40) + 2), 1100753141760);
  EXPECT_EQ(next_fast_length(std::int64_t{1} << 61), std::int64_t{1} << 61);
  // A convolved axis longer than 2^40 is refused before any length arithmetic (n + k - 1 could overflow).
  EXPECT_THROW(plan({8}, {std::int64_t{1} << 62}, {0}, ConvolutionMode::full), InvalidArgument);
  EXPECT_THROW(plan({std::int64_t{1} << 62}, {std::int64_t{1} << 62}, {0}, ConvolutionMode::valid), InvalidArgument);
}

TEST(ConvolutionPlanner, ModesShapesAndOffsets) {
  const auto full = plan({4, 100}, {1, 9}, {1}, ConvolutionMode::full);
  EXPECT_EQ(full.out_shape, (Shape{4, 108}));
  EXPECT_EQ(full.out_offset[0], 0);
  EXPECT_GE(full.fft_length[0], 108);
  const auto same = plan({4, 100}, {1, 10}, {1}, ConvolutionMode::same);
  EXPECT_EQ(same.out_shape, (Shape{4, 100}));
  EXPECT_EQ(same.out_offset[0], 4);  // (k - 1) / 2
  const auto valid = plan({4, 100}, {1, 10}, {1}, ConvolutionMode::valid);
  EXPECT_EQ(valid.out_shape, (Shape{4, 91}));
  EXPECT_EQ(valid.out_offset[0], 9);
  const auto swapped = plan({4, 10}, {1, 100}, {1}, ConvolutionMode::valid);
  EXPECT_EQ(swapped.out_shape, (Shape{4, 91}));
  EXPECT_EQ(swapped.out_offset[0], 9);
  const auto circular = plan({4, 100}, {1, 10}, {1}, ConvolutionMode::circular);
  EXPECT_EQ(circular.out_shape, (Shape{4, 100}));
  EXPECT_EQ(circular.fft_length[0], 100);
  const auto pow2 = plan({4, 100}, {1, 10}, {1}, ConvolutionMode::full, f32, f32, true);
  EXPECT_EQ(pow2.fft_length[0], 128);
}

TEST(ConvolutionPlanner, CanonicalOrderAndBatches) {
  const auto g = plan({6, 9, 7, 5}, {6, 3, 1, 2}, {3, 1}, ConvolutionMode::full, c64, f32);
  EXPECT_EQ(g.axes, (std::vector<int>{3, 1}));
  EXPECT_EQ(g.conv_axes, (std::vector<int>{1, 3}));
  EXPECT_EQ(g.batch_axes, (std::vector<int>{0, 2}));
  EXPECT_EQ(canonical_order(g), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_FALSE(g.real);
  EXPECT_EQ(g.out_dtype, c64);
  EXPECT_EQ(g.batch, 42);
  EXPECT_EQ(g.kernel_batch, 6);
  EXPECT_EQ(g.work_shape, (Shape{6, 7, g.fft_length[0], g.fft_length[1]}));
  EXPECT_EQ(g.kernel_work_shape, (Shape{6, 1, g.fft_length[0], g.fft_length[1]}));
  const auto r = plan({3, 20}, {1, 5}, {1}, ConvolutionMode::full);
  EXPECT_TRUE(r.real);
  EXPECT_EQ(r.spectrum_size, r.fft_length[0] / 2 + 1);
}

TEST(ConvolutionPlanner, AnAxisWhereTheKernelHasLengthOneIsNotTransformed) {
  const auto g = plan({256, 8192}, {1, 1025}, {}, ConvolutionMode::full);  // default axes: both
  EXPECT_EQ(g.axes, (std::vector<int>{0, 1}));
  EXPECT_EQ(g.conv_axes, (std::vector<int>{1}));
  EXPECT_EQ(g.batch_axes, (std::vector<int>{0}));
  EXPECT_EQ(g.out_shape, (Shape{256, 9216}));
  EXPECT_EQ(g.fft_length[0], 9216);
  const auto all_one = plan({4, 6}, {1, 1}, {0, 1}, ConvolutionMode::valid);
  EXPECT_EQ(all_one.conv_axes, (std::vector<int>{1}));  // at least one axis stays
  EXPECT_EQ(all_one.out_shape, (Shape{4, 6}));
}

TEST(ConvolutionPlanner, RefusesWhatCannotBeConvolved) {
  EXPECT_THROW(plan({4, 10}, {2, 3}, {1}, ConvolutionMode::full), InvalidArgument);  // batch extent 2 vs 4
  EXPECT_THROW(plan({4, 10}, {1, 3}, {1}, ConvolutionMode::full, f32, c128), InvalidArgument);
  EXPECT_THROW(plan({4, 10}, {1, 3}, {1}, ConvolutionMode::full, i32, i32), InvalidArgument);
  EXPECT_THROW(plan({4, 10}, {1, 11}, {1}, ConvolutionMode::circular), InvalidArgument);
  EXPECT_THROW(plan({4, 10}, {5, 3}, {0, 1}, ConvolutionMode::valid), InvalidArgument);
  EXPECT_THROW(plan({4, 0}, {1, 3}, {1}, ConvolutionMode::full), InvalidArgument);
  EXPECT_THROW(plan({}, {}, {}, ConvolutionMode::full), InvalidArgument);
}

// automatic fuses every 1D convolution, and 2D and 3D ones whose first axis's columns take at most 64 KiB (c64 up to
// 8192, c128 up to 4096); the reason names the rank, the length, the dtype and how to ask for the fused route anyway.
TEST(ConvolutionPlanner, AutomaticFusesColumnsOfUpTo64KiB) {
  EXPECT_FALSE(automatic_fused_obstacle(plan({8, 1024}, {1, 33}, {1}, ConvolutionMode::same, c64, c64, true)));
  EXPECT_FALSE(automatic_fused_obstacle(plan({8, 1000}, {8, 25}, {1}, ConvolutionMode::full, f32, f32, true)));
  EXPECT_FALSE(automatic_fused_obstacle(plan({8, 16384}, {1, 33}, {1}, ConvolutionMode::circular, c128, c128, true)));
  EXPECT_FALSE(automatic_fused_obstacle(plan({8, 300, 64}, {1, 3, 3}, {1, 2}, ConvolutionMode::full, c64, c64, true)));
  EXPECT_FALSE(
      automatic_fused_obstacle(plan({8192, 8192}, {8192, 8192}, {0, 1}, ConvolutionMode::circular, f32, f32, true)));
  EXPECT_FALSE(
      automatic_fused_obstacle(plan({512, 512, 512}, {3, 3, 3}, {0, 1, 2}, ConvolutionMode::circular, c64, c64, true)));
  EXPECT_FALSE(automatic_fused_obstacle(plan({4096, 10}, {3, 3}, {0, 1}, ConvolutionMode::circular, c128, c128, true)));
  const std::optional<std::string> two =
      automatic_fused_obstacle(plan({8192, 10}, {3, 3}, {0, 1}, ConvolutionMode::circular, c128, c128, true));
  ASSERT_TRUE(two);
  for (const char* word : {"2D", "8192", "axis 0", "c128", "route fused"})
    EXPECT_NE(two->find(word), std::string::npos) << word << ": " << *two;
  const std::optional<std::string> three =
      automatic_fused_obstacle(plan({9000, 4, 3}, {3, 3, 3}, {0, 1, 2}, ConvolutionMode::same, f32, c64, true));
  ASSERT_TRUE(three);  // first length 16384: a c64 column of 128 KiB
  EXPECT_NE(three->find("3D"), std::string::npos) << *three;
  EXPECT_NE(three->find("16384"), std::string::npos) << *three;
}

TEST(ConvolutionPlanner, FusedConditions) {
  const Strides dense{1024, 1};
  auto ok = plan({8, 1024}, {1, 33}, {1}, ConvolutionMode::same, c64, c64, true);
  EXPECT_EQ(ok.fft_length[0], 2048);
  EXPECT_FALSE(fused_obstacle(ok, Strides{1024, 1}, 256, 16384));
  auto real = plan({8, 1000}, {8, 25}, {1}, ConvolutionMode::full, f32, f32, true);
  EXPECT_FALSE(fused_obstacle(real, Strides{1000, 1}, 256, 16384));
  EXPECT_FALSE(fused_obstacle(plan({8, 1000}, {1, 25}, {1}, ConvolutionMode::full, f64, f64, true), Strides{1000, 1},
                              256, 16384));  // real f64
  const auto mixed = fused_obstacle(plan({8, 1000}, {1, 25}, {1}, ConvolutionMode::full, f32, c64, true),
                                    Strides{1000, 1}, 256, 16384);
  ASSERT_TRUE(mixed);
  EXPECT_NE(mixed->find("alike, not f32 with c64"), std::string::npos) << *mixed;
  EXPECT_TRUE(fused_obstacle(ok, Strides{1, 8}, 256, 16384));  // last axis not dense
  // 2D and 3D: through the work buffer (any operand layout, real, complex or mixed); the first convolved
  // axis (the column kernel's) has the power-of-two length, the inner ones (cuFFT's) any.
  const auto two = plan({8, 300, 64}, {1, 3, 3}, {1, 2}, ConvolutionMode::full, c64, c64, true);
  EXPECT_EQ(two.fft_length[0], 512);
  EXPECT_EQ(two.fft_length[1], 70);  // 66 is not 7-smooth
  EXPECT_FALSE(fused_obstacle(two, Strides{1, 8, 2400}, 256, 16384));
  EXPECT_FALSE(fused_obstacle(plan({300, 64, 64}, {3, 3, 3}, {0, 1, 2}, ConvolutionMode::same, f32, c64, true),
                              Strides{4096, 64, 1}, 256, 16384));
  EXPECT_FALSE(fused_obstacle(plan({8, 300, 64}, {1, 3, 3}, {1, 2}, ConvolutionMode::full, f32, f32, true),
                              Strides{19200, 64, 1}, 256, 16384));  // real: the column kernel on the half spectrum
  const auto short_first = fused_obstacle(plan({8, 64, 300}, {1, 3, 3}, {1, 2}, ConvolutionMode::full, c64, c64, true),
                                          Strides{19200, 300, 1}, 256, 16384);  // first length 128 < 256
  ASSERT_TRUE(short_first);
  EXPECT_NE(short_first->find("128 of axis 1"), std::string::npos) << *short_first;
  EXPECT_TRUE(fused_obstacle(plan({1024, 8}, {3, 1}, {0}, ConvolutionMode::full, c64, c64, true), Strides{8, 1}, 256,
                             16384));  // not the last axis
  EXPECT_TRUE(fused_obstacle(plan({8, 20000}, {1, 33}, {1}, ConvolutionMode::full, c64, c64, true), Strides{20000, 1},
                             256, 16384));  // too long
  EXPECT_TRUE(fused_obstacle(plan({8, 1000}, {1, 25}, {1}, ConvolutionMode::circular, c64, c64, true), Strides{1000, 1},
                             256, 16384));  // circular at a length that is no power of two
  const auto message = fused_obstacle(plan({4, 8, 1000}, {4, 1, 25}, {2}, ConvolutionMode::full, c64, c64, true),
                                      Strides{8000, 1000, 1}, 256, 16384);
  ASSERT_TRUE(message);
  EXPECT_NE(message->find("broadcast"), std::string::npos) << *message;
}

// The overlap-save geometry, run on the CPU as the row kernel runs it: each segment loads fft_length[0] operand values
// from s * hop + in_shift on (zero outside the row), convolves them circularly with the kernel and stores its results
// from out_offset[0] on as result values from s * hop on, at most hop of them. Every mode, kernels of one tap up to
// most of a segment, segments that end inside, at and past the row's end: each result value is written once and
// equals the direct linear convolution's (float64, integer-valued data: exact).
/// Every FFT length the next power of two (the whole-transform tiles).
ConvolutionGeometry plan_tile(Shape x, Shape k, std::vector<int> axes, ConvolutionMode mode, DType dtype = f32,
                              DType kernel_dtype = f32) {
  return plan(std::move(x), std::move(k), std::move(axes), mode, dtype, kernel_dtype, true, true);
}

TEST(ConvolutionPlanner, WholeTransformTiles) {
  // Every linear-mode length the next power of two; circular keeps the operand's.
  ConvolutionGeometry g = plan_tile({5, 40, 50}, {1, 9, 11}, {1, 2}, ConvolutionMode::same, c64, c64);
  EXPECT_EQ(g.fft_length[0], 64);
  EXPECT_EQ(g.fft_length[1], 64);
  EXPECT_EQ(g.out_offset[0], 4);
  EXPECT_EQ(g.out_offset[1], 5);
  EXPECT_FALSE(block_obstacle(g));
  EXPECT_EQ(plan({5, 40, 50}, {1, 9, 11}, {1, 2}, ConvolutionMode::same, c64, c64, true).fft_length[1], 60);
  g = plan_tile({2, 12, 10, 14}, {1, 3, 5, 3}, {1, 2, 3}, ConvolutionMode::full);
  EXPECT_EQ(g.fft_length[0] * g.fft_length[1] * g.fft_length[2], 16 * 16 * 16);
  EXPECT_FALSE(block_obstacle(g));
  // Circular at a length that is not a power of two, a length under 16, 1D, and too many values (c64 16384, c128
  // 4096): refused, naming what.
  const auto refused = [](const ConvolutionGeometry& geometry, std::vector<std::string> words) {
    const std::optional<std::string> why = block_obstacle(geometry);
    ASSERT_TRUE(why.has_value());
    for (const std::string& word : words) EXPECT_NE(why->find(word), std::string::npos) << *why;
  };
  refused(plan_tile({2, 60, 64}, {1, 5, 5}, {1, 2}, ConvolutionMode::circular), {"powers of two", "axis 1", "60"});
  refused(plan_tile({2, 4, 64}, {1, 3, 5}, {1, 2}, ConvolutionMode::full), {"from 16", "axis 1", "8"});
  refused(plan_tile({4, 100}, {1, 9}, {1}, ConvolutionMode::full), {"2D and 3D", "1D"});
  refused(plan_tile({2, 100, 120}, {1, 29, 30}, {1, 2}, ConvolutionMode::full, c64, c64), {"16384", "32768"});
  EXPECT_FALSE(block_obstacle(plan_tile({2, 100, 90}, {1, 29, 30}, {1, 2}, ConvolutionMode::full, c64, c64)));
  refused(plan_tile({2, 40, 100}, {1, 9, 11}, {1, 2}, ConvolutionMode::full, c128, c128), {"4096", "c128", "8192"});
  // Real f64 computes in c128: 64 x 64 fits, 64 x 128 does not.
  EXPECT_FALSE(block_obstacle(plan_tile({2, 40, 50}, {1, 9, 11}, {1, 2}, ConvolutionMode::full, f64, f64)));
  refused(plan_tile({2, 40, 100}, {1, 9, 11}, {1, 2}, ConvolutionMode::full, f64, f64), {"4096", "c128", "8192"});
  EXPECT_FALSE(block_obstacle(plan_tile({2, 20, 27}, {1, 5, 6}, {1, 2}, ConvolutionMode::full, f64, f64)));
}

TEST(ConvolutionPlanner, OverlapSaveSegmentsGiveTheLinearResult) {
  int checked = 0;
  for (ConvolutionMode mode : {ConvolutionMode::full, ConvolutionMode::same, ConvolutionMode::valid}) {
    for (std::int64_t n : {5, 40, 97, 128}) {  // 5: valid mode with the kernel the longer
      for (std::int64_t k : {1, 5, 12, 17}) {
        for (std::int64_t length : {16, 32}) {
          if (k - 1 >= length) continue;
          const ConvolutionGeometry whole = plan({2, n}, {1, k}, {1}, mode, f64, f64, true);
          const ConvolutionGeometry g = segmented(whole, length);
          ASSERT_EQ(g.fft_length[0], length);
          ASSERT_EQ(g.spectrum_size, length / 2 + 1);
          ASSERT_EQ(g.kernel_work_shape[g.kernel_work_shape.size() - 1], length);
          ASSERT_EQ(g.out_shape, whole.out_shape);
          ASSERT_EQ(g.segment_hop, length - (k - 1));
          ASSERT_EQ(g.segments, (g.out_shape[1] + g.segment_hop - 1) / g.segment_hop);
          std::vector<double> x(static_cast<std::size_t>(n)), h(static_cast<std::size_t>(k));
          for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 37 + 11) % 19) - 9;
          for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<double>((i * 13 + 5) % 11) - 5;
          const std::int64_t out_length = g.out_shape[1];
          std::vector<double> linear(static_cast<std::size_t>(n + k - 1), 0.0);
          for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < k; ++j)
              linear[static_cast<std::size_t>(i + j)] +=
                  x[static_cast<std::size_t>(i)] * h[static_cast<std::size_t>(j)];
          std::vector<double> out(static_cast<std::size_t>(out_length), 1e300);  // poisoned
          std::vector<int> writes(static_cast<std::size_t>(out_length), 0);
          for (std::int64_t s = 0; s < g.segments; ++s) {
            const std::int64_t first = s * g.segment_hop + g.segment_in_shift;
            for (std::int64_t j = g.out_offset[0]; j < length; ++j) {
              const std::int64_t r = s * g.segment_hop + j - g.out_offset[0];
              if (r >= out_length) break;
              double y = 0;
              for (std::int64_t t = 0; t < k; ++t) {
                const std::int64_t p = first + ((j - t) % length + length) % length;
                if (p >= 0 && p < n) y += x[static_cast<std::size_t>(p)] * h[static_cast<std::size_t>(t)];
              }
              out[static_cast<std::size_t>(r)] = y;
              ++writes[static_cast<std::size_t>(r)];
            }
          }
          for (std::int64_t r = 0; r < out_length; ++r) {
            ASSERT_EQ(writes[static_cast<std::size_t>(r)], 1)
                << "n " << n << " k " << k << " L " << length << " r " << r;
            ASSERT_EQ(out[static_cast<std::size_t>(r)], linear[static_cast<std::size_t>(r + whole.out_offset[0])])
                << "n " << n << " k " << k << " L " << length << " r " << r;
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 60);
}

// The 1D fused route's length: one FFT a row where that is cheapest, else the compiled length whose segments cost
// least; circular mode and 2D keep their length; 0 where no compiled length can run the row.
TEST(ConvolutionPlanner, RowFftLengthChoice) {
  const std::vector<std::int64_t> all{256, 512, 1024, 2048, 4096, 8192, 16384};
  // 8192 samples, 1025 taps, full mode: one FFT of 16384 or segments; 4096 keeps 3072 a segment, three a row.
  const auto full = plan({4096, 8192}, {1, 1025}, {1}, ConvolutionMode::full, f32, f32, true);
  ASSERT_EQ(full.fft_length[0], 16384);
  EXPECT_EQ(choose_row_fft_length(full, all), 4096);
  EXPECT_EQ(segmented(full, 4096).segments, 3);
  // A short row: one FFT; two segments of 256 against one FFT of 512 cost about the same, and one FFT stays.
  const auto small = plan({64, 1000}, {1, 25}, {1}, ConvolutionMode::same, c64, c64, true);
  EXPECT_EQ(choose_row_fft_length(small, all), 1024);
  EXPECT_EQ(choose_row_fft_length(plan({8, 300}, {1, 3}, {1}, ConvolutionMode::full, c64, c64, true), all), 512);
  // A row longer than any compiled kernel: segments; a kernel no segment holds: none.
  const auto long_row = plan({2, 1 << 20}, {1, 129}, {1}, ConvolutionMode::full, c64, c64, true);
  const std::int64_t long_length = choose_row_fft_length(long_row, all);
  EXPECT_GE(long_length, 256);
  EXPECT_LE(long_length, 16384);
  EXPECT_GT(segmented(long_row, long_length).segments, 1);
  EXPECT_EQ(choose_row_fft_length(plan({2, 1 << 20}, {1, 20000}, {1}, ConvolutionMode::full, c64, c64, true), all), 0);
  EXPECT_EQ(choose_row_fft_length(long_row, std::vector<std::int64_t>{}), 0);
  // A segment keeps results: 1025 taps never run at 1024 (a hop of 0) or below; at 2048 (a hop of 1024) they may.
  EXPECT_EQ(choose_row_fft_length(full, std::vector<std::int64_t>{256, 1024}), 0);
  EXPECT_EQ(choose_row_fft_length(full, std::vector<std::int64_t>{256, 1024, 2048}), 2048);
  // And at least a quarter of them: 800 taps at 1024 would keep 225.
  const auto quarter = plan({4, 8192}, {1, 800}, {1}, ConvolutionMode::full, c64, c64, true);
  EXPECT_EQ(choose_row_fft_length(quarter, std::vector<std::int64_t>{1024}), 0);
  EXPECT_EQ(choose_row_fft_length(quarter, std::vector<std::int64_t>{1024, 2048}), 2048);
  EXPECT_THROW(segmented(full, 1024), InvalidArgument);
  EXPECT_THROW(segmented(full, 512), InvalidArgument);
  EXPECT_THROW(segmented(plan({8, 4096}, {1, 9}, {1}, ConvolutionMode::circular, c64, c64, true), 1024),
               InvalidArgument);
  const auto circular = plan({8, 4096}, {1, 4096}, {1}, ConvolutionMode::circular, c64, c64, true);
  EXPECT_EQ(choose_row_fft_length(circular, all), 4096);
  const auto two = plan({8, 300, 64}, {1, 3, 3}, {1, 2}, ConvolutionMode::full, c64, c64, true);
  EXPECT_EQ(choose_row_fft_length(two, all), 512);
}

// Rows over 2^30 values: the kernels' 32-bit indices.
TEST(ConvolutionPlanner, FusedRowsOfUpTo2To30Values) {
  const std::int64_t n = (std::int64_t{1} << 30) + 1;
  const auto huge = plan({1, n}, {1, 3}, {1}, ConvolutionMode::same, f32, f32, true);
  const auto why = fused_obstacle(segmented(huge, 4096), Strides{n, 1}, 256, 16384);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("2^30"), std::string::npos) << *why;
}

TEST(ConvolutionPlanner, UniformRowStride) {
  EXPECT_EQ(uniform_row_stride(Shape{4, 3, 10}, Strides{30, 10, 1}), 10);
  EXPECT_EQ(uniform_row_stride(Shape{4, 3, 10}, Strides{48, 16, 1}), 16);
  EXPECT_FALSE(uniform_row_stride(Shape{4, 3, 10}, Strides{64, 16, 1}));
  EXPECT_EQ(uniform_row_stride(Shape{1, 1, 10}, Strides{0, 0, 1}), 10);
}

}  // namespace
}  // namespace cuplan::detail
