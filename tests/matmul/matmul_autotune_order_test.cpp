// SPDX-License-Identifier: Apache-2.0
// The selection rule of Matmul::autotune (pure: no GPU needed).
#include <gtest/gtest.h>

#include <vector>

#include "matmul/cublaslt/autotune_order.hpp"

namespace {

using cuplan::detail::mm::autotune_order;
using Order = std::vector<std::size_t>;

TEST(MatmulAutotuneOrder, KeepsTheHeuristicsFirstChoiceWithinTheMargin) {
  // Candidate 2 is 0.5 % faster than candidate 0: noise, so 0 stays first; the rest follow fastest first.
  const std::vector<float> t = {1.000f, 1.200f, 0.995f, 1.100f};
  EXPECT_EQ(autotune_order(t), (Order{0, 2, 3, 1}));
}

TEST(MatmulAutotuneOrder, ReplacesTheFirstChoiceWhenAnotherIsMeasurablyFaster) {
  const std::vector<float> t = {1.000f, 0.950f, 0.980f};
  EXPECT_EQ(autotune_order(t), (Order{1, 2, 0}));
  // The margin is a parameter: with 10 % required, 5 % faster is not enough.
  EXPECT_EQ(autotune_order(t, 0.10f), (Order{0, 1, 2}));
}

TEST(MatmulAutotuneOrder, DropsCandidatesThatDidNotRun) {
  const std::vector<float> t = {1.000f, -1.0f, 0.500f, -1.0f};
  EXPECT_EQ(autotune_order(t), (Order{2, 0}));
  // The first choice did not run: the fastest of the rest leads, with no margin to respect.
  const std::vector<float> first_failed = {-1.0f, 0.700f, 0.699f};
  EXPECT_EQ(autotune_order(first_failed), (Order{2, 1}));
  const std::vector<float> none = {-1.0f, -1.0f};
  EXPECT_TRUE(autotune_order(none).empty());
}

TEST(MatmulAutotuneOrder, EqualTimesKeepTheHeuristicOrder) {
  const std::vector<float> t = {0.700f, 0.500f, 0.500f, 0.500f};
  EXPECT_EQ(autotune_order(t), (Order{1, 2, 3, 0}));
  const std::vector<float> same = {0.5f, 0.5f, 0.5f};
  EXPECT_EQ(autotune_order(same), (Order{0, 1, 2}));
}

}  // namespace
