// SPDX-License-Identifier: Apache-2.0
// The pure planning layer: layouts, copies, output shapes and bad input, with no GPU and no FFT library.

#include "fft/planner.hpp"

#include <gtest/gtest.h>

#include "cuplan/errors.hpp"

namespace cuplan::detail {
namespace {

LayoutRequest request(DType dtype, Shape shape, std::vector<int> axes, std::optional<Strides> strides = {}) {
  LayoutRequest r;
  r.dtype = dtype;
  r.shape = shape;
  r.strides = strides ? *strides : row_major_strides(shape);
  r.axes = std::move(axes);
  return r;
}

TEST(FftLayout, Batched1DOnTheLastAxisIsOneCallWithOneBatch) {
  const LayoutDecision d = plan_layout(request(c64, {16384, 4096}, {-1}));
  EXPECT_EQ(d.type, FFTType::c2c);
  EXPECT_FALSE(d.input_copy);
  EXPECT_FALSE(d.output_copy);
  EXPECT_EQ(d.layout.rank, 1);
  EXPECT_EQ(d.layout.n[0], 4096);
  EXPECT_EQ(d.layout.istride, 1);
  EXPECT_EQ(d.layout.batch, 16384);
  EXPECT_EQ(d.layout.idist, 4096);
  EXPECT_EQ(d.layout.odist, 4096);
  EXPECT_EQ(d.layout.loop_in_offsets.size(), 1u);
  EXPECT_EQ(d.layout.transform_size, 4096);
}

TEST(FftLayout, LeadingAxisIsStridedWithUnitDistance) {
  const LayoutDecision d = plan_layout(request(c128, {64, 256}, {0}));
  EXPECT_EQ(d.layout.n[0], 64);
  EXPECT_EQ(d.layout.istride, 256);
  EXPECT_EQ(d.layout.batch, 256);
  EXPECT_EQ(d.layout.idist, 1);
  EXPECT_FALSE(d.input_copy || d.output_copy);
}

TEST(FftLayout, TwoLeadingAxesOfThreeNestWithAGapAndBatchInside) {
  const LayoutDecision d = plan_layout(request(c64, {64, 256, 128}, {0, 1}));
  EXPECT_EQ(d.layout.rank, 2);
  EXPECT_EQ(d.layout.n[0], 64);
  EXPECT_EQ(d.layout.n[1], 256);
  EXPECT_EQ(d.layout.istride, 128);
  EXPECT_EQ(d.layout.inembed[1], 256);
  EXPECT_EQ(d.layout.batch, 128);
  EXPECT_EQ(d.layout.idist, 1);
}

TEST(FftLayout, MiddleAxisLoopsOverTheSmallerBatchDimension) {
  const LayoutDecision d = plan_layout(request(c64, {4, 32, 1000}, {1}));
  EXPECT_EQ(d.layout.batch_dims.size(), 2u);
  EXPECT_EQ(d.layout.batch, 1000);
  EXPECT_EQ(d.layout.idist, 1);
  ASSERT_EQ(d.layout.loop_in_offsets.size(), 4u);
  EXPECT_EQ(d.layout.loop_in_offsets[1], 32000);
}

TEST(FftLayout, ManyUnmergeableBatchesOnCudaUseABatchOuterCopy) {
  LayoutRequest r = request(c64, {500, 8, 300}, {1});
  r.loop_is_costly = true;
  const LayoutDecision d = plan_layout(r);
  EXPECT_TRUE(d.input_copy);
  EXPECT_TRUE(d.output_copy);
  EXPECT_EQ(d.layout.loop_in_offsets.size(), 1u);
  EXPECT_EQ(d.layout.batch, 150000);
  r.loop_is_costly = false;  // FFTW takes every batch dimension at once
  EXPECT_FALSE(plan_layout(r).input_copy);
}

// cuFFT rejects an R2C call whose real input pointer is not aligned like the complex type (CUFFT_INVALID_VALUE).
// A transform over the middle axis of {9, 8, 5} reals loops over the last axis (stride 1 real), so without a copy
// the calls would start at real offsets 0, 1, 2, 3, 4.
TEST(FftLayout, R2CWhoseBatchLoopStartsCallsAtOddRealOffsetsCopiesTheInputOnCuda) {
  for (DType dtype : {f32, f64}) {
    LayoutRequest r = request(dtype, {9, 8, 5}, {1});
    const LayoutDecision fftw = plan_layout(r);  // FFTW takes any offset: no copy, the loop as it is
    EXPECT_FALSE(fftw.input_copy || fftw.output_copy);
    EXPECT_EQ(fftw.layout.loop_in_offsets, (std::vector<std::int64_t>{0, 1, 2, 3, 4}));

    r.loop_is_costly = r.aligned_real_calls = true;
    const LayoutDecision d = plan_layout(r);
    EXPECT_TRUE(d.input_copy);
    EXPECT_NE(d.input_copy_reason.find("odd real offset"), std::string::npos) << d.input_copy_reason;
    EXPECT_FALSE(d.output_copy);  // the result keeps its natural layout
    // The input is dense with its transform rows of 8 reals innermost and the batches in the output's order: the
    // loop over the last axis now starts its calls 8 reals apart.
    EXPECT_EQ(d.compute_in_strides, (Strides{40, 1, 8}));
    EXPECT_EQ(d.compute_out_strides, (Strides{25, 5, 1}));
    EXPECT_EQ(d.layout.loop_in_offsets, (std::vector<std::int64_t>{0, 8, 16, 24, 32}));
    EXPECT_EQ(d.layout.loop_out_offsets, (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(d.layout.batch, 9);
    EXPECT_EQ(d.layout.n[0], 8);
    EXPECT_EQ(d.layout.istride, 1);
    EXPECT_EQ(d.layout.idist, 40);
    EXPECT_EQ(d.layout.ostride, 5);
    EXPECT_EQ(d.layout.odist, 25);
  }
}

// Odd transform lengths leave the real-side copy's offsets odd too ({9, 7, 5}: calls 7 reals apart); then both
// sides go batch-outer, every batch merges and a single call remains.
TEST(FftLayout, R2CWithOddOffsetsAfterARealSideCopyCopiesBothSides) {
  LayoutRequest r = request(f64, {9, 7, 5}, {1});
  r.loop_is_costly = r.aligned_real_calls = true;
  const LayoutDecision d = plan_layout(r);
  EXPECT_TRUE(d.input_copy && d.output_copy);
  EXPECT_EQ(d.layout.loop_in_offsets, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(d.layout.batch, 45);
  EXPECT_EQ(d.out_strides, (Strides{20, 5, 1}));  // the user still gets the natural result
}

// The inverse of the {9, 8, 5} R2C case: C2R from the natural {9, 5, 5} spectrum writes the real output of the loop's
// calls at odd real offsets, so the output goes through an internal buffer on CUDA.
TEST(FftLayout, C2RWhoseBatchLoopWritesAtOddRealOffsetsCopiesTheOutputOnCuda) {
  LayoutRequest r = request(c64, {9, 5, 5}, {1});
  r.type = FFTType::c2r;
  EXPECT_FALSE(plan_layout(r).output_copy);
  EXPECT_EQ(plan_layout(r).layout.loop_out_offsets.size(), 5u);

  r.loop_is_costly = r.aligned_real_calls = true;
  const LayoutDecision d = plan_layout(r);
  EXPECT_TRUE(d.input_copy);  // C2R always preserves its operand
  EXPECT_TRUE(d.output_copy);
  EXPECT_EQ(d.out_strides, (Strides{40, 5, 1}));  // what the user sees is still natural
  EXPECT_EQ(d.layout.loop_out_offsets, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(d.layout.batch, 45);
  for (std::int64_t offset : d.layout.loop_out_offsets) EXPECT_EQ(offset % 2, 0);
}

// Even real offsets need nothing: the plan's batch is the larger batch axis (10, stride 1) and the loop runs over
// the leading axis, whose real stride (80) is even.
TEST(FftLayout, R2CWithEvenRealOffsetsKeepsItsLoopOnCuda) {
  LayoutRequest r = request(f32, {4, 8, 10}, {1});
  r.loop_is_costly = r.aligned_real_calls = true;
  const LayoutDecision d = plan_layout(r);
  EXPECT_FALSE(d.input_copy || d.output_copy);
  EXPECT_EQ(d.layout.batch, 10);
  EXPECT_EQ(d.layout.loop_in_offsets, (std::vector<std::int64_t>{0, 80, 160, 240}));
}

TEST(FftLayout, R2CHalvesTheLastGivenAxisAndC2RRestoresItFromTheParity) {
  const LayoutDecision r2c = plan_layout(request(f32, {8, 10, 9}, {0, 2}));
  EXPECT_EQ(r2c.type, FFTType::r2c);
  EXPECT_EQ(r2c.out_dtype, c64);
  EXPECT_EQ(r2c.out_shape, (Shape{8, 10, 5}));
  EXPECT_EQ(r2c.layout.n[1], 9);

  LayoutRequest even = request(c128, {8, 10, 5}, {0, 2});
  even.type = FFTType::c2r;
  const LayoutDecision c2r_even = plan_layout(even);
  EXPECT_EQ(c2r_even.out_shape, (Shape{8, 10, 8}));
  EXPECT_EQ(c2r_even.out_dtype, f64);
  EXPECT_TRUE(c2r_even.input_copy);  // C2R overwrites its input: preserved by a copy
  even.parity = Parity::odd;
  EXPECT_EQ(plan_layout(even).out_shape, (Shape{8, 10, 9}));
}

TEST(FftLayout, R2CInPlaceNeedsPaddedRows) {
  LayoutRequest r = request(f64, {4, 14}, {1}, Strides{16, 1});
  r.inplace = true;
  const LayoutDecision d = plan_layout(r);
  EXPECT_TRUE(d.inplace_compute);
  EXPECT_EQ(d.out_strides, (Strides{8, 1}));
  EXPECT_EQ(d.layout.idist, 16);
  EXPECT_EQ(d.layout.odist, 8);

  LayoutRequest unpadded = request(f64, {4, 14}, {1});
  unpadded.inplace = true;
  EXPECT_THROW(plan_layout(unpadded), InvalidArgument);
}

TEST(FftLayout, TransposedOperandComputesInItsOrderAndCopiesToTheNaturalResult) {
  const LayoutDecision d = plan_layout(request(c128, {12, 10}, {0, 1}, Strides{1, 12}));
  EXPECT_FALSE(d.input_copy);
  EXPECT_TRUE(d.output_copy);
  EXPECT_EQ(d.out_strides, (Strides{10, 1}));
  EXPECT_EQ(d.compute_out_strides, (Strides{1, 12}));
  EXPECT_FALSE(d.output_copy_reason.empty());
}

TEST(FftLayout, OptimizedResultLayoutTakesTheComputeLayoutInsteadOfACopy) {
  LayoutRequest r = request(c128, {12, 10}, {0, 1}, Strides{1, 12});
  r.result_layout = ResultLayout::optimized;
  const LayoutDecision d = plan_layout(r);
  EXPECT_FALSE(d.input_copy || d.output_copy);
  EXPECT_TRUE(d.output_copy_reason.empty());
  EXPECT_EQ(d.out_strides, (Strides{1, 12}));
  EXPECT_EQ(d.compute_out_strides, d.out_strides);
  // Where natural needs no copy, optimized is natural.
  LayoutRequest plain = request(c64, {8, 16}, {1});
  plain.result_layout = ResultLayout::optimized;
  EXPECT_EQ(plan_layout(plain).out_strides, (Strides{16, 1}));
  // A user output or in place fixes the layout: optimized changes nothing then.
  r.out_shape = Shape{12, 10};
  r.out_strides = Strides{10, 1};
  EXPECT_TRUE(plan_layout(r).output_copy);
  // Staged to another memory space, the copy back stays but is a plain dense one.
  LayoutRequest staged = request(c128, {12, 10}, {0, 1}, Strides{1, 12});
  staged.result_layout = ResultLayout::optimized;
  staged.stage_input = staged.stage_output = true;
  const LayoutDecision s = plan_layout(staged);
  EXPECT_TRUE(s.output_copy);
  EXPECT_EQ(s.out_strides, s.compute_out_strides);
}

TEST(FftLayout, OptimizedC2RWithOddRealOffsetsReturnsTheBatchOuterLayout) {
  LayoutRequest r = request(c64, {9, 5, 5}, {1});
  r.type = FFTType::c2r;
  r.loop_is_costly = r.aligned_real_calls = true;
  r.result_layout = ResultLayout::optimized;
  const LayoutDecision d = plan_layout(r);
  EXPECT_FALSE(d.output_copy);
  EXPECT_EQ(d.out_strides, (Strides{40, 1, 8}));
  EXPECT_EQ(d.layout.loop_out_offsets, (std::vector<std::int64_t>{0}));
}

TEST(FftLayout, StagedOperandsUseDenseBuffers) {
  LayoutRequest r = request(c64, {6, 7}, {1}, Strides{14, 2});
  r.stage_input = r.stage_output = true;
  const LayoutDecision d = plan_layout(r);
  EXPECT_TRUE(d.input_copy && d.output_copy);
  EXPECT_EQ(d.compute_in_strides, (Strides{7, 1}));
  EXPECT_EQ(d.layout.idist, 7);
}

TEST(FftLayout, LengthOneAxesDropOutOfTheTransform) {
  const LayoutDecision d = plan_layout(request(c64, {1, 5, 1}, {0, 1, 2}));
  EXPECT_EQ(d.layout.rank, 1);
  EXPECT_EQ(d.layout.n[0], 5);
  const LayoutDecision identity = plan_layout(request(c64, {3, 1}, {1}));
  EXPECT_EQ(identity.layout.rank, 0);
}

TEST(FftLayout, OutputWalkCoversBatchAndTransformDimensions) {
  const LayoutDecision d = plan_layout(request(f32, {3, 8}, {1}));
  const OutputWalk walk = output_walk(d.layout, d.type);
  EXPECT_EQ(walk.count(), 3 * 5);
  EXPECT_EQ(walk.stride[0], 5);
}

TEST(FftLayout, AxesAreNormalised) {
  EXPECT_EQ(normalize_axes({}, 5), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(normalize_axes({}, 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(normalize_axes({-1, 0}, 3), (std::vector<int>{2, 0}));
}

TEST(FftLayout, BadAxesAreRejectedWithTheirValues) {
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message([] { normalize_axes({}, 0); }).find("0-d"), std::string::npos);
  EXPECT_NE(message([] { normalize_axes({0, 1, 2, 3}, 4); }).find("got 4"), std::string::npos);
  EXPECT_NE(message([] { normalize_axes({3}, 3); }).find("axis 3 is out of range"), std::string::npos);
  EXPECT_NE(message([] { normalize_axes({1, -2}, 3); }).find("axis 1 twice"), std::string::npos);
  EXPECT_NE(message([] { resolve_fft_type(i32, {}); }).find("i32"), std::string::npos);
  EXPECT_NE(message([] { resolve_fft_type(f32, FFTType::c2c); }).find("complex"), std::string::npos);
  EXPECT_NE(message([] { plan_layout(request(c64, {4, 0}, {1})); }).find("axis 1 is 0"), std::string::npos);
}

TEST(FftLayout, DenseStridesFollowThePermutation) {
  EXPECT_EQ(dense_strides({2, 3, 4}, {2, 0, 1}), (Strides{3, 1, 6}));
  EXPECT_EQ(memory_order({2, 3, 4}, {3, 1, 6}), (std::vector<int>{2, 0, 1}));
}

}  // namespace
}  // namespace cuplan::detail

namespace cuplan::detail {
namespace {

TEST(FftLayout, StridesThatDoNotDivideAreStaged) {
  const LayoutDecision d = plan_layout(request(c64, {8, 10}, {0, 1}, Strides{2, 9}));
  EXPECT_TRUE(d.input_copy);
  EXPECT_EQ(d.compute_in_strides, (Strides{10, 1}));
  EXPECT_FALSE(d.output_copy);
}

}  // namespace
}  // namespace cuplan::detail
