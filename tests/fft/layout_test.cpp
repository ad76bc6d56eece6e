// The pure planning layer: layouts, copies, output shapes and bad input, with no GPU and no FFT library.

#include "fft/layout.hpp"

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
