// SPDX-License-Identifier: Apache-2.0
// Randomized multi-stream stress (stress_program.cuh): 10,000 operations (1,000 under CUPLAN_TEST_SHORT=1) over 4
// streams and 8 tensors must give the same tensors as the same program on one stream; with the ordering checker on, the
// correct program raises nothing and a planted missing edge raises OrderingError. The longer run is
// bench/stress_bench.cu.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "plan/checking_on.hpp"
#include "plan/stress_program.cuh"
#include "support/test_support.hpp"

namespace cuplan::stress {
namespace {

using cuplan::testing::CheckingOn;

std::uint64_t seed() {
  const char* text = std::getenv("CUPLAN_STRESS_SEED");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 20240611;
}

// Tensors that differ from the one-stream run (bit for bit).
int mismatches(const std::vector<Op>& ops, std::uint64_t s) {
  Runner multi(s, false);
  multi.run(ops);
  Runner single(s, true);
  single.run(ops);
  const auto a = multi.result(), b = single.result();
  int differ = 0;
  for (std::size_t t = 0; t < a.size(); ++t) differ += a[t] != b[t] ? 1 : 0;
  return differ;
}

TEST(StressTest, TenThousandOperationsOnFourStreamsMatchOneStream) {
  CUPLAN_REQUIRE_GPU();
  const std::uint64_t s = seed();
  const std::vector<Op> ops = generate(s, testing::short_run() ? 1'000 : 10'000, false);
  const int differ = mismatches(ops, s);
  std::printf("stress: seed %llu, %zu operations, 4 streams, 8 tensors: %d mismatching tensors\n",
              static_cast<unsigned long long>(s), ops.size(), differ);
  EXPECT_EQ(differ, 0) << "seed " << s;
}

TEST(StressTest, TheCorrectProgramRaisesNothingUnderTheChecker) {
  CUPLAN_REQUIRE_GPU();
  CheckingOn on;
  const std::uint64_t s = seed() + 1;
  const std::vector<Op> ops = generate(s, testing::short_run() ? 500 : 3'000, false);
  Runner multi(s, false);
  EXPECT_NO_THROW(multi.run(ops)) << "seed " << s;
}

TEST(StressTest, APlantedMissingEdgeIsCaughtByTheChecker) {
  CUPLAN_REQUIRE_GPU();
  CheckingOn on;
  const std::uint64_t s = seed() + 2;
  const std::vector<Op> ops = generate(s, 2'000, true);
  Runner multi(s, false);
  try {
    multi.run(ops);
    FAIL() << "the planted missing edge was not caught (seed " << s << ")";
  } catch (const OrderingError& e) {
    std::printf("stress: planted edge caught after %lld operations: %s\n", static_cast<long long>(multi.operations()),
                e.what());
  }
}

}  // namespace
}  // namespace cuplan::stress
