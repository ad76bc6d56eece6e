// SPDX-License-Identifier: Apache-2.0
// DistributedMatmul's arguments at their extremes, on the CPU: what every rank resolves alone from the extents and
// the options (resolve_product, which DistributedMatmul::blocks and the constructor call before any GPU or NCCL
// work). Each bad value is a typed error naming the field, the expected and the actual value, raised at once: no
// arithmetic overflow (run under UBSan by scripts/sanitize_cpu.sh), no allocation that grows with a block count
// nobody could run, no value silently clamped.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#include "cuplan/distributed_matmul.hpp"
#include "cuplan/errors.hpp"
#include "distributed/distributed_matmul_impl.hpp"
#include "distributed/matmul_layout.hpp"

namespace {

using cuplan::DistributedMatmulOptions;
using cuplan::MatrixDistribution;
using cuplan::detail::resolve_product;
constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();

DistributedMatmulOptions block_cyclic(std::array<std::int64_t, 2> block, std::array<int, 2> grid = {0, 0}) {
  DistributedMatmulOptions o;
  o.layout_a = {.distribution = MatrixDistribution::block_cyclic, .process_grid = grid, .block = block};
  o.layout_b = o.layout_a;
  o.layout_d = o.layout_a;
  return o;
}

// `call` raises `Expected` within a second, with every word of `words` in its message.
template <class Expected, class Call>
void expect_refused(Call call, std::initializer_list<const char*> words) {
  const auto start = std::chrono::steady_clock::now();
  try {
    call();
    ADD_FAILURE() << "no exception";
  } catch (const Expected& e) {
    for (const char* w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << "refused only after a long time";
}

TEST(DistributedMatmulArguments, AProcessGridWhoseProductOverflowsIsRefused) {
  for (const std::array<int, 2> grid : {std::array<int, 2>{65536, 65536}, std::array<int, 2>{-65536, -65536},
                                        std::array<int, 2>{std::numeric_limits<int>::max(), 2}}) {
    DistributedMatmulOptions o = block_cyclic({64, 64}, grid);
    expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_product(0, 4, 256, 256, 256, o); },
                                            {"layout_a.process_grid", "4 ranks", std::to_string(grid[0]).c_str()});
    o.layout_a = {.distribution = MatrixDistribution::grid, .process_grid = grid};
    expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_product(0, 4, 256, 256, 256, o); },
                                            {"layout_a.process_grid", "4 ranks"});
  }
}

TEST(DistributedMatmulArguments, BlocksLargerThanTheMatrixGiveEverythingToTheFirstGridPosition) {
  // ScaLAPACK's rule with one block per matrix: grid position (0, 0) holds all of it, the others nothing; extreme
  // block extents must not overflow the block arithmetic.
  for (const std::int64_t b : {std::int64_t{4096}, big / 2, big}) {
    const auto r = resolve_product(0, 4, 100, 60, 80, block_cyclic({b, b}));
    for (std::size_t rank = 0; rank < 4; ++rank) {
      const auto& a = r.user.a[rank];
      if (rank == 0) {
        EXPECT_EQ(a.shape[0], 100) << b;
        EXPECT_EQ(a.shape[1], 80) << b;
      } else {
        EXPECT_EQ(a.shape[0] * a.shape[1], 0) << "rank " << rank << ", block " << b;
      }
    }
  }
}

TEST(DistributedMatmulArguments, BlockCyclicLayoutsWithMoreBlocksThanTheLimitAreRefused) {
  // 1 x 1 blocks of a 65536 x 65536 matrix would be 2^32 blocks: refused by count, before any is listed.
  expect_refused<cuplan::InvalidArgument>(
      [&] {
        (void)resolve_product(0, 4, 65536, 65536, 65536, block_cyclic({1, 1}));
      },
      {"layout_a.block", "1x1", "4294967296 blocks", "at most"});
  // Extents at the top of the range are refused for their size before their blocks are counted.
  expect_refused<cuplan::InvalidArgument>(
      [&] {
        (void)resolve_product(0, 4, big, big, big, block_cyclic({1, 1}));
      },
      {"m x k (A)", "at most"});
  // The limit is per matrix and counts whole and partial blocks alike: 1024 x 1024 blocks of 64 (the largest
  // count allowed) resolve.
  const std::int64_t limit = cuplan::detail::dist::max_block_cyclic_blocks;
  EXPECT_EQ(limit, std::int64_t{1} << 20);
  const auto r = resolve_product(0, 4, 1024 * 64, 64, 1024 * 64, [] {
    DistributedMatmulOptions o;
    o.layout_a = {.distribution = MatrixDistribution::block_cyclic, .process_grid = {2, 2}, .block = {64, 64}};
    return o;
  }());
  EXPECT_EQ(r.user.a[0].parts.size(), std::size_t{1} << 18);
  expect_refused<cuplan::InvalidArgument>(
      [&] {
        DistributedMatmulOptions o;
        o.layout_a = {.distribution = MatrixDistribution::block_cyclic, .process_grid = {2, 2}, .block = {64, 64}};
        (void)resolve_product(0, 4, 1024 * 64 + 1, 64, 1024 * 64, o);
      },
      {"layout_a.block", "64x64", "1049600 blocks"});
}

TEST(DistributedMatmulArguments, ExtentsAndEnumsOutOfRangeAreRefused) {
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_product(0, 2, 0, 8, 8, {}); }, {"m, n, k", "0x8x8"});
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_product(0, 2, 8, -1, 8, {}); }, {"m, n, k", "8x-1x8"});
  DistributedMatmulOptions o;
  o.layout_b.distribution = static_cast<MatrixDistribution>(77);
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_product(0, 2, 8, 8, 8, o); },
                                          {"layout_b.distribution", "77"});
  EXPECT_EQ(cuplan::to_string(static_cast<MatrixDistribution>(77)), "?");
  EXPECT_EQ(cuplan::to_string(MatrixDistribution::block_cyclic), "block_cyclic");
  o = {};
  o.algorithm = static_cast<cuplan::DistributedMatmulAlgorithm>(9);
  EXPECT_EQ(cuplan::to_string(o.algorithm), "?");
  EXPECT_EQ(cuplan::to_string(cuplan::DistributedMatmulAlgorithm::summa), "summa");
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_product(0, 2, 8, 8, 8, o); }, {"algorithm", "9"});
  o = {};
  o.exchange = static_cast<cuplan::ExchangeMethod>(3);
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_product(0, 2, 8, 8, 8, o); }, {"exchange", "3"});
  o = {};
  o.min_panels = -1;
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_product(0, 2, 8, 8, 8, o); }, {"min_panels", "-1"});
  o = {};
  o.epilog = static_cast<cuplan::Epilog>(200);
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_product(0, 2, 8, 8, 8, o); }, {"epilog", "200"});
  o = {};
  o.compute = static_cast<cuplan::Compute>(99);
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_product(0, 2, 8, 8, 8, o); }, {"compute", "99"});
}

TEST(DistributedMatmulArguments, HugeExtentsResolveWithoutOverflowOrAreRefused) {
  // Extents no GPU could hold still resolve arithmetically while every matrix's byte count fits an int64 (the
  // operands' shapes are checked against them later): local extents add up to the global ones and the cost
  // estimate is finite.
  const std::int64_t m = std::int64_t{1} << 40, n = std::int64_t{1} << 10, k = std::int64_t{1} << 12;
  const auto r = resolve_product(1, 4, m, n, k, {});
  std::int64_t rows = 0;
  for (const auto& a : r.user.a) rows += a.shape[0];
  EXPECT_EQ(rows, m);
  EXPECT_TRUE(std::isfinite(r.plan.moved_elements));
  // Past that, the matrix is named.
  expect_refused<cuplan::InvalidArgument>([&] { (void)resolve_product(1, 4, big, big / 3, big / 5, {}); },
                                          {"m x k (A)", "at most"});
  expect_refused<cuplan::InvalidArgument>(
      [&] { (void)resolve_product(1, 4, 8, std::int64_t{1} << 40, std::int64_t{1} << 40, {}); },
      {"k x n (B)", "at most"});
}

}  // namespace
