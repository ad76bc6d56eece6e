// SPDX-License-Identifier: Apache-2.0
// Misuse of views and copies, table-driven: malformed DLPack tensors (every field), and cuplan::copy between
// overlapping views, which must behave like memmove.

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "support/misuse_table.hpp"
#include "support/test_support.hpp"

namespace cuplan::testing {
namespace {

using namespace dlpack;  // DLPack's names, as cuplan declares them (cuplan/dlpack.hpp)

struct DLStorage {
  std::vector<float> data = std::vector<float>(64, 1.0f);
  std::int64_t shape[2] = {4, 8};
};
DLStorage& storage() {
  static DLStorage s;
  return s;
}

DLTensor valid_tensor() {
  DLTensor t{};
  t.data = storage().data.data();
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = storage().shape;
  t.strides = nullptr;  // row-major
  return t;
}

MisuseRow dl_row(std::string name, void (*edit)(DLTensor&), Expect expect, std::vector<std::string> fragments) {
  return {std::move(name),
          [edit] {
            DLTensor t = valid_tensor();
            edit(t);
            TensorView view(t);
            (void)view;
          },
          expect, std::move(fragments)};
}

std::vector<MisuseRow> dlpack_rows() {
  static std::int64_t negative[2] = {4, -8};
  static std::int64_t huge[2] = {std::int64_t{1} << 40, std::int64_t{1} << 40};
  static std::int64_t one[1] = {4};
  std::vector<MisuseRow> t;
  t.push_back(dl_row("null_shape", [](DLTensor& x) { x.shape = nullptr; }, Expect::invalid_argument,
                     {"DLTensor", "shape", "null", "ndim = 2"}));
  t.push_back(dl_row("null_data_with_elements", [](DLTensor& x) { x.data = nullptr; }, Expect::invalid_argument,
                     {"DLTensor", "data", "32 elements", "null"}));
  t.push_back(dl_row("negative_ndim", [](DLTensor& x) { x.ndim = -1; }, Expect::invalid_argument,
                     {"DLTensor", "ndim", "got -1"}));
  t.push_back(dl_row("ndim_above_max_rank", [](DLTensor& x) { x.ndim = 99; }, Expect::invalid_argument,
                     {"DLTensor", "ndim", "got 99"}));
  t.push_back(dl_row("negative_extent", [](DLTensor& x) { x.shape = negative; }, Expect::invalid_argument,
                     {"DLTensor", "shape[1]", "got -8"}));
  t.push_back(dl_row("overflowing_shape", [](DLTensor& x) { x.shape = huge; }, Expect::invalid_argument,
                     {"DLTensor", "shape"}));
  t.push_back(dl_row("dtype_bits", [](DLTensor& x) { x.dtype.bits = 24; }, Expect::not_supported,
                     {"DLTensor", "dtype", "bits 24"}));
  t.push_back(dl_row("dtype_lanes", [](DLTensor& x) { x.dtype.lanes = 4; }, Expect::not_supported,
                     {"DLTensor", "dtype", "lanes 4"}));
  t.push_back(dl_row("dtype_code", [](DLTensor& x) { x.dtype.code = 42; }, Expect::not_supported,
                     {"DLTensor", "dtype", "code 42"}));
  t.push_back(dl_row("device_type", [](DLTensor& x) { x.device.device_type = kDLOpenCL; }, Expect::not_supported,
                     {"DLTensor", "device_type", "got 4"}));
  t.push_back(dl_row("cuda_device_id",
                     [](DLTensor& x) {
                       x.device = {kDLCUDA, -2};
                     },
                     Expect::invalid_argument, {"DLTensor", "device_id", "got -2"}));
  t.push_back(dl_row("offset_without_data",
                     [](DLTensor& x) {
                       x.data = nullptr;
                       x.shape = one;
                       x.ndim = 1;
                       one[0] = 0;
                       x.byte_offset = 16;
                     },
                     Expect::invalid_argument, {"DLTensor", "byte_offset", "got 16"}));
  return t;
}

CUPLAN_MISUSE_SUITE(DLPackMisuse, dlpack_rows());

TEST(DLPack, NullStridesMeanRowMajor) {
  DLTensor t = valid_tensor();
  const TensorView view(t);
  EXPECT_EQ(view.strides(), (Strides{8, 1}));
  EXPECT_EQ(view.numel(), 32);
}

// copy between overlapping host views gives what memmove gives (the source read in full first).
// The parameter: dst starts this many elements after src (negative: before).
class CopyOverlap : public ::testing::TestWithParam<std::int64_t> {};
TEST_P(CopyOverlap, OneDimensionalBehavesLikeMemmove) {
  const std::int64_t shift = GetParam(), n = 1000;
  std::vector<double> buffer(static_cast<std::size_t>(n + 2 * std::abs(shift)));
  std::iota(buffer.begin(), buffer.end(), 0.0);
  std::vector<double> expected = buffer;
  const std::int64_t src = std::abs(shift), dst = src + shift;
  std::memmove(expected.data() + dst, expected.data() + src, static_cast<std::size_t>(n) * sizeof(double));
  copy(TensorView(buffer.data() + src, {n}), TensorView(buffer.data() + dst, {n}));
  EXPECT_EQ(buffer, expected);
}
INSTANTIATE_TEST_SUITE_P(Shifts, CopyOverlap, ::testing::Values(1, -1, 7, -7, 999));

TEST(CopyOverlap, TwoDimensionalTransposeInPlaceRegion) {
  // dst is src's memory seen transposed: every element must come from the original values.
  std::vector<float> buffer = random_vector<float>(16);
  const std::vector<float> original = buffer;
  copy(TensorView(buffer.data(), f32, {4, 4}, Strides{4, 1}), TensorView(buffer.data(), f32, {4, 4}, Strides{1, 4}));
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(buffer[static_cast<std::size_t>(c * 4 + r)], original[r * 4 + c]);
}

TEST(CopyOverlap, DestinationThatOverlapsItselfIsRejected) {
  std::vector<float> buffer(64), src(32);
  check_row({"copy_dst_self_overlap",
             [&] {
               copy(TensorView(src.data(), {4, 8}), TensorView(buffer.data(), f32, {4, 8}, Strides{1, 1}));
             },
             Expect::invalid_argument,
             {"copy", "dst overlaps itself"}});
}

// Tensor::alias checks the bytes the view reaches, lowest first: with negative strides data() is the highest element.
TEST(TensorAlias, ReversedViewExactlyInsideItsOwnerIsAccepted) {
  Tensor owner = Tensor::empty({16}, f32);
  for (int i = 0; i < 16; ++i) owner.data<float>()[i] = static_cast<float>(i);
  const TensorView reversed(owner.data<float>() + 15, f32, {16}, Strides{-1}, Device::cpu(),
                            MemorySpace::host_pageable);
  Tensor alias = Tensor::alias(owner, reversed);  // was refused: data() + span_bytes() passed the owner's end
  EXPECT_TRUE(alias.owning());
  const Tensor copied = alias.to(Device::cpu());
  EXPECT_EQ(copied.data<float>()[0], 15.0F);
  EXPECT_EQ(copied.data<float>()[15], 0.0F);
}

TEST(TensorAlias, ReversedViewReachingBelowItsOwnerIsRejected) {
  Tensor owner = Tensor::empty({16}, f32);
  // Element 0 at the owner's fourth float, elements 4 to 7 below its first byte: was accepted, and writes through it
  // (a copy dst, an FFT or Matmul out) landed outside the allocation.
  const TensorView below(owner.data<float>() + 3, f32, {8}, Strides{-1}, Device::cpu(), MemorySpace::host_pageable);
  check_row({"alias_reaching_below",
             [&] { (void)Tensor::alias(owner, below); },
             Expect::invalid_argument,
             {"Tensor::alias", "view", "inside the owner's bytes [0, 64)", "strides [-1]", "bytes [-16, 16)"}});
  // Two axes, one reversed: rows 3, 2, 1, 0 of a 4 x 4 owner are inside; starting at row 2 is not.
  const TensorView rows(owner.data<float>() + 12, f32, {4, 4}, Strides{-4, 1}, Device::cpu(),
                        MemorySpace::host_pageable);
  EXPECT_NO_THROW((void)Tensor::alias(owner, rows));
  const TensorView shifted(owner.data<float>() + 8, f32, {4, 4}, Strides{-4, 1}, Device::cpu(),
                           MemorySpace::host_pageable);
  check_row({"alias_rows_below",
             [&] { (void)Tensor::alias(owner, shifted); },
             Expect::invalid_argument,
             {"Tensor::alias", "bytes [-16, 48)"}});
}

// Enum and code values outside their type are InvalidArgument naming the field, the range and the value.
TEST(EnumRange, TensorAndViewFieldsOutsideTheirTypeAreRejected) {
  std::vector<float> h(4);
  check_row({"host_memory",
             [] { (void)Tensor::empty({4}, f32, Device::cpu(), {}, static_cast<HostMemory>(9)); },
             Expect::invalid_argument,
             {"Tensor::empty", "host_memory", "HostMemory", "got 9"}});
  check_row({"tensor_dtype",
             [] { (void)Tensor::empty({4}, DType(static_cast<DTypeCode>(99)), Device::cpu()); },
             Expect::invalid_argument,
             {"Tensor::empty", "dtype", "DTypeCode from 0 to 11", "got 99"}});
  check_row({"view_dtype",
             [&] { TensorView v(h.data(), DType(static_cast<DTypeCode>(99)), {4}); },
             Expect::invalid_argument,
             {"TensorView", "dtype", "DTypeCode from 0 to 11", "got 99"}});
  check_row({"view_space",
             [&] { TensorView v(h.data(), f32, {4}, Strides{1}, Device::cpu(), static_cast<MemorySpace>(9)); },
             Expect::invalid_argument,
             {"TensorView", "space", "MemorySpace from 0 to 3", "got 9"}});
}

}  // namespace
}  // namespace cuplan::testing
