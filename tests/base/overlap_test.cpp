// SPDX-License-Identifier: Apache-2.0
// The overlap analysis against brute force: self-overlap of random small layouts (exact for 1-D and 2-D, never a
// false "no overlap" for more axes) and shared memory between two random views of one buffer (exact when small).

#include "base/overlap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "cuplan/errors.hpp"
#include "support/test_support.hpp"

namespace cuplan::testing {
namespace {

std::vector<std::int64_t> offsets_of(const Shape& shape, const Strides& strides) {
  std::vector<std::int64_t> out{0};
  for (int axis = 0; axis < shape.size(); ++axis) {
    std::vector<std::int64_t> next;
    for (std::int64_t base : out)
      for (std::int64_t i = 0; i < shape[axis]; ++i) next.push_back(base + i * strides[axis]);
    out = next;
  }
  return out;
}

struct Layout {
  Shape shape;
  Strides strides;
};

// A random layout: the rank, then the extent and the stride of each axis, drawn in that order.
Layout random_layout(std::uniform_int_distribution<int>& rank_d, std::uniform_int_distribution<int>& extent_d,
                     std::uniform_int_distribution<int>& stride_d) {
  const int rank = rank_d(rng());
  Layout layout{Dims::filled(rank, 1), Dims::filled(rank, 1)};
  for (int a = 0; a < rank; ++a) {
    layout.shape[a] = extent_d(rng());
    layout.strides[a] = stride_d(rng());
  }
  return layout;
}

bool brute_self_overlap(const Shape& shape, const Strides& strides) {
  const auto offsets = offsets_of(shape, strides);
  return std::set<std::int64_t>(offsets.begin(), offsets.end()).size() != offsets.size();
}

TEST(Overlap, SelfOverlapMatchesBruteForce) {
  std::uniform_int_distribution<int> rank_d(1, 3), extent_d(1, 6), stride_d(-12, 12);
  for (int trial = 0; trial < 20000; ++trial) {
    const auto [shape, strides] = random_layout(rank_d, extent_d, stride_d);
    // Small views: the enumeration makes even 3-D answers exact.
    EXPECT_EQ(detail::self_overlaps(shape, strides), brute_self_overlap(shape, strides))
        << "shape " << shape[0] << " strides " << strides[0] << " rank " << shape.size();
  }
}

TEST(Overlap, CommonLayouts) {
  EXPECT_FALSE(detail::self_overlaps(Dims{4, 8}, Dims{8, 1}));
  EXPECT_FALSE(detail::self_overlaps(Dims{4, 8}, Dims{1, 4}));
  EXPECT_FALSE(detail::self_overlaps(Dims{4, 8}, Dims{16, -1}));
  EXPECT_TRUE(detail::self_overlaps(Dims{4, 8}, Dims{1, 1}));
  EXPECT_TRUE(detail::self_overlaps(Dims{4, 8}, Dims{4, 1}));
  EXPECT_TRUE(detail::self_overlaps(Dims{4, 8}, Dims{0, 1}));
  // Interleaved rows that never meet: stride 3 and 2 with extents too short to coincide.
  EXPECT_FALSE(detail::self_overlaps(Dims{2, 3}, Dims{3, 2}));
  EXPECT_TRUE(detail::self_overlaps(Dims{3, 4}, Dims{3, 2}));  // 2 * 3 == 3 * 2
  EXPECT_FALSE(detail::self_overlaps(Dims{0, 8}, Dims{0, 0}));
}

TEST(Overlap, ViewsOverlapMatchesBruteForce) {
  std::vector<std::byte> buffer(4096);
  const DType dtypes[] = {f32, f64, c64, c128, i8};
  std::uniform_int_distribution<int> dtype_d(0, 4), rank_d(1, 2), extent_d(1, 5), stride_d(1, 9), offset_d(0, 255);
  for (int trial = 0; trial < 20000; ++trial) {
    TensorView views[2];
    std::set<std::size_t> bytes[2];
    for (int v = 0; v < 2; ++v) {
      const DType dtype = dtypes[dtype_d(rng())];
      const auto [shape, strides] = random_layout(rank_d, extent_d, stride_d);
      // Byte offsets of any alignment: the analysis works on bytes, not elements.
      const std::size_t start = static_cast<std::size_t>(offset_d(rng()));
      views[v] = TensorView(buffer.data() + start, dtype, shape, strides);
      for (std::int64_t o : offsets_of(shape, strides))
        for (std::size_t byte = 0; byte < dtype.size(); ++byte)
          bytes[v].insert(start + static_cast<std::size_t>(o) * dtype.size() + byte);
    }
    std::vector<std::size_t> common;
    std::set_intersection(bytes[0].begin(), bytes[0].end(), bytes[1].begin(), bytes[1].end(),
                          std::back_inserter(common));
    ASSERT_EQ(detail::views_overlap(views[0], views[1]), !common.empty())
        << views[0].dtype().name() << " " << views[0].shape()[0] << "x" << views[0].shape()[views[0].ndim() - 1]
        << " strides " << views[0].strides()[0] << "," << views[0].strides()[views[0].ndim() - 1] << " at "
        << views[0].data() << " / " << views[1].dtype().name() << " " << views[1].shape()[0] << "x"
        << views[1].shape()[views[1].ndim() - 1] << " strides " << views[1].strides()[0] << ","
        << views[1].strides()[views[1].ndim() - 1] << " at " << views[1].data();
  }
}

TEST(Overlap, SameElementsIgnoresUnitAxes) {
  std::vector<float> data(64);
  const TensorView a(data.data(), f32, {4, 1, 8}, Strides{8, 99, 1});
  const TensorView b(data.data(), f32, {4, 1, 8}, Strides{8, 1, 1});
  EXPECT_TRUE(detail::same_elements(a, b));
  EXPECT_FALSE(detail::same_elements(a, TensorView(data.data() + 1, f32, {4, 1, 8}, Strides{8, 1, 1})));
}

TEST(Overlap, MessageNamesOperationAndBothOperands) {
  std::vector<float> data(64);
  try {
    detail::check_no_overlap(TensorView(data.data() + 1, {8}), "out", TensorView(data.data(), {8}), "operand", "fft");
    ADD_FAILURE() << "no exception";
  } catch (const InvalidArgument& e) {
    const std::string m = e.what();
    for (const char* part : {"fft", "out overlaps operand", "expected out in memory separate from operand"})
      EXPECT_NE(m.find(part), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace cuplan::testing
