// SPDX-License-Identifier: Apache-2.0
// The box helpers of Redistribute (slab_box, pencil_box, root_box), on the CPU as a user calls them: the slab and
// pencil rules of DistributedFFT, the boxes of a gather, and every bad argument a typed error naming it, extreme
// grids included (no arithmetic overflow: run under UBSan by scripts/sanitize_cpu.sh).
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "cuplan/errors.hpp"
#include "cuplan/redistribute.hpp"

namespace {

using cuplan::DistributedBox;
using cuplan::InvalidArgument;
using cuplan::Shape;

template <class Call>
std::string message_of(Call call) {
  try {
    call();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "no InvalidArgument";
}

TEST(RedistributeBoxes, SlabAndPencilRulesCutTheGivenAxes) {
  const Shape s{10, 7, 5};
  // 10 rows over 4 ranks: 3, 3, 2, 2.
  const DistributedBox b1 = cuplan::slab_box(s, 0, 4, 1);
  EXPECT_EQ(b1.offset, (std::vector<std::int64_t>{3, 0, 0}));
  EXPECT_EQ(b1.extent, (std::vector<std::int64_t>{3, 7, 5}));
  const DistributedBox b3 = cuplan::slab_box(s, 0, 4, 3);
  EXPECT_EQ(b3.offset, (std::vector<std::int64_t>{8, 0, 0}));
  EXPECT_EQ(b3.extent, (std::vector<std::int64_t>{2, 7, 5}));
  // Axes 1 and 2 over 2 x 3: rank 4 is grid row 1, column 1.
  const DistributedBox p = cuplan::pencil_box(s, {1, 2}, {2, 3}, 4);
  EXPECT_EQ(p.offset, (std::vector<std::int64_t>{0, 4, 2}));
  EXPECT_EQ(p.extent, (std::vector<std::int64_t>{10, 3, 2}));
  // A gather to rank 2: the whole array there, nothing (extent 0 on axis 0) elsewhere.
  EXPECT_EQ(cuplan::root_box(s, 2, 2).extent, (std::vector<std::int64_t>{10, 7, 5}));
  EXPECT_EQ(cuplan::root_box(s, 2, 0).extent, (std::vector<std::int64_t>{0, 7, 5}));
}

TEST(RedistributeBoxes, BadArgumentsAreNamed) {
  const Shape s{8, 8, 8};
  EXPECT_NE(message_of([&] { (void)cuplan::slab_box(s, 3, 2, 0); }).find("axis 3"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)cuplan::slab_box(s, -1, 2, 0); }).find("axis -1"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)cuplan::slab_box(s, 0, 0, 0); }).find("rank 0 of 0"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)cuplan::slab_box(s, 0, 2, 2); }).find("rank 2 of 2"), std::string::npos);
  EXPECT_NE(message_of([&] {
              (void)cuplan::slab_box({8, -3, 8}, 0, 2, 0);
            }).find("slab_box: global_shape"),
            std::string::npos);
  EXPECT_NE(message_of([&] { (void)cuplan::pencil_box(s, {1, 1}, {2, 2}, 0); }).find("1 twice"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)cuplan::pencil_box(s, {1, 5}, {2, 2}, 0); }).find("axis 5"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)cuplan::pencil_box(s, {0, 1}, {0, 2}, 0); }).find("grid"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)cuplan::pencil_box(s, {0, 1}, {2, 2}, 4); }).find("got rank 4"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)cuplan::root_box(s, -1, 0); }).find("root -1"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)cuplan::root_box(s, 0, -2); }).find("rank -2"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)cuplan::root_box({}, 0, 0); }).find("at least one axis"), std::string::npos);
}

TEST(RedistributeBoxes, GridsAtTheEndOfTheIntRangeDoNotOverflow) {
  constexpr int most = std::numeric_limits<int>::max();
  const Shape s{1 << 20, 1 << 20, 2};
  // 65536 x 65536 ranks is more than an int counts: a rank near the end is still a valid position.
  const DistributedBox b = cuplan::pencil_box(s, {0, 1}, {65536, 65536}, most);
  EXPECT_EQ(b.offset[0], static_cast<std::int64_t>(most / 65536) * 16);
  EXPECT_EQ(b.extent[0], 16);
  EXPECT_EQ(b.extent[1], 16);
  EXPECT_NE(message_of([&] {
              (void)cuplan::pencil_box(s, {0, 1}, {most, most}, -1);
            }).find("got rank -1"),
            std::string::npos);
}

}  // namespace
