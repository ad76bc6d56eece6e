// SPDX-License-Identifier: Apache-2.0
// Shapes and strides: inline storage, the rank limit, overflow-checked products and default strides.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "cuplan/errors.hpp"
#include "cuplan/tensor.hpp"
#include "support/test_support.hpp"

namespace cuplan {
namespace {

TEST(Dims, HoldsValuesInline) {
  Dims d{3, 4, 5};
  EXPECT_EQ(d.size(), 3);
  EXPECT_FALSE(d.empty());
  EXPECT_EQ(d[0], 3);
  EXPECT_EQ(d[2], 5);
  d[1] = 7;
  EXPECT_EQ((std::vector<std::int64_t>(d.begin(), d.end())), (std::vector<std::int64_t>{3, 7, 5}));
  d.push_back(9);
  EXPECT_EQ(d, (Dims{3, 7, 5, 9}));
  EXPECT_NE(d, (Dims{3, 7, 5}));
  EXPECT_TRUE(Dims{}.empty());
  EXPECT_EQ(Dims::filled(3, 2), (Dims{2, 2, 2}));
  const std::int64_t raw[] = {1, 2};
  EXPECT_EQ(Dims(std::span<const std::int64_t>(raw)), (Dims{1, 2}));
}

TEST(Dims, RankAboveMaxIsInvalidAndNamesTheRank) {
  EXPECT_NO_THROW((Dims{1, 2, 3, 4, 5, 6, 7, 8}));
  try {
    Dims d{1, 2, 3, 4, 5, 6, 7, 8, 9};
    FAIL() << "rank 9 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("at most 8"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 9"), std::string::npos) << e.what();
  }
  Dims full = Dims::filled(Dims::max_rank, 1);
  EXPECT_THROW(full.push_back(1), InvalidArgument);
  EXPECT_THROW(Dims::filled(9, 1), InvalidArgument);
  EXPECT_THROW(Dims::filled(-1, 1), InvalidArgument);
}

TEST(Dims, CheckedNumel) {
  EXPECT_EQ(checked_numel(Dims{}), 1);
  EXPECT_EQ(checked_numel(Dims{3, 4, 5}), 60);
  EXPECT_EQ(checked_numel(Dims{3, 0, 5}), 0);
  const std::int64_t big = std::int64_t{1} << 32;
  EXPECT_EQ(checked_numel(Dims{big, (std::int64_t{1} << 30)}), std::int64_t{1} << 62);
}

TEST(Dims, CheckedNumelOverflowIsInvalidAndNamesTheOperand) {
  const std::int64_t big = std::int64_t{1} << 32;
  ASSERT_NO_FATAL_FAILURE(testing::expect_throw_naming<InvalidArgument>(
      [&] {
        checked_numel(Dims{big, big}, "x");
      },
      {"x:", "overflow", "axis 1"}));
  // An overflowing product before a zero extent is still rejected (the shape itself is unrepresentable).
  EXPECT_THROW(checked_numel(Dims{std::numeric_limits<std::int64_t>::max(), 2, 0}), InvalidArgument);
}

TEST(Dims, NegativeExtentIsInvalidAndNamesAxisAndValue) {
  testing::expect_throw_naming<InvalidArgument>(
      [] {
        checked_numel(Dims{4, -3, 2}, "a");
      },
      {"a:", "axis 1", "-3", ">= 0"});
}

TEST(Dims, DefaultStrides) {
  EXPECT_EQ(row_major_strides(Dims{2, 3, 4}), (Dims{12, 4, 1}));
  EXPECT_EQ(column_major_strides(Dims{2, 3, 4}), (Dims{1, 2, 6}));
  EXPECT_EQ(row_major_strides(Dims{}), Dims{});
  EXPECT_EQ(row_major_strides(Dims{5}), Dims{1});
}

}  // namespace
}  // namespace cuplan
