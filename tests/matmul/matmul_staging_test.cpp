// SPDX-License-Identifier: Apache-2.0
// Host operands with CUDA execution through the staging engine (docs/staging.md): a small device_memory_limit
// splits the rows of A and D into chunks (M not divisible by the chunk, strided operands), B is uploaded once, and
// the result equals a float64 reference with the output poisoned first. Peak device memory is read from the pool's
// statistics. Bad limits give the documented errors.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "matmul/matmul_reference.hpp"
#include "runtime/storage.hpp"
#include "support/pinned_results.hpp"

namespace cuplan::testing {
namespace {

constexpr std::size_t workspace_cap = 4096;  // MatmulOptions::memory_limit: keeps the reserve small in the tests

// Relative error of `got` (M x N, row-major) against the float64 product A B.
template <class T>
double product_error(const std::vector<cd>& got, const HostMatrix<T>& a, const HostMatrix<T>& b) {
  const std::int64_t m = a.rows, k = a.cols, n = b.cols;
  double num = 0, den = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      cd ref = 0;
      for (std::int64_t p = 0; p < k; ++p) ref += a.at({}, 0, i, p) * b.at({}, 0, p, j);
      num += std::norm(got[static_cast<std::size_t>(i * n + j)] - ref);
      den += std::norm(ref);
    }
  return std::sqrt(num / den);
}

// D = A B for host A (M x K) and B (K x N) in the given orientations under `limit` device bytes.
template <class T>
void check_staged(std::int64_t m, std::int64_t k, std::int64_t n, bool a_row_major, bool b_row_major, std::size_t limit,
                  double tolerance) {
  HostMatrix<T> a({}, m, k, a_row_major, 3), b({}, k, n, b_row_major, 1);
  Matmul mm(a.view(), b.view(),
            {.execution = Execution::cuda(), .memory_limit = workspace_cap, .device_memory_limit = limit});
  mm.plan();
  Tensor probe = mm.execute();  // learns D's planned strides
  Tensor out = Tensor::empty_strided(probe.shape(), probe.strides(), probe.dtype(), Device::cpu());
  std::memset(out.data(), 0xff, static_cast<std::size_t>(out.numel()) * out.dtype().size());  // NaN patterns
  detail::reset_pool_peak(0);
  const std::size_t before = detail::pool_statistics(0).used;
  Tensor result = mm.execute({.out = out.view()});
  EXPECT_LE(detail::pool_statistics(0).used_high - before, limit) << "peak device memory above the limit";
  EXPECT_LT(product_error(read_all(result), a, b), tolerance);
}

// B bytes + workspace cap + alignment padding (256 bytes for each of 17 parts), plus room for `rows` rows of A
// and D in three slots.
std::size_t limit_for(std::int64_t k, std::int64_t n, std::size_t element, std::int64_t rows) {
  const std::size_t b = (static_cast<std::size_t>(k * n) * element + 255) / 256 * 256;
  return b + workspace_cap + 256 * 17 + 3 * static_cast<std::size_t>(rows * (k + n)) * element;
}

TEST(MatmulStaging, RowsThatDoNotDivideByTheChunk) {
  CUPLAN_REQUIRE_GPU();
  check_staged<double>(37, 24, 20, true, true, limit_for(24, 20, 8, 5), 1e-12);
  check_staged<float>(101, 16, 48, true, true, limit_for(16, 48, 4, 8), 1e-5);
}

TEST(MatmulStaging, StridedAndColumnMajorOperands) {
  CUPLAN_REQUIRE_GPU();
  check_staged<double>(45, 17, 23, false, true, limit_for(17, 23, 8, 4), 1e-12);
  check_staged<double>(45, 17, 23, true, false, limit_for(17, 23, 8, 4), 1e-12);
  check_staged<std::complex<double>>(29, 9, 13, false, false, limit_for(9, 13, 16, 3), 1e-12);
}

TEST(MatmulStaging, UnderTheDefaultLimitIsOneChunk) {
  CUPLAN_REQUIRE_GPU();
  check_staged<float>(64, 64, 64, true, true, std::size_t{1} << 30, 1e-5);
}

TEST(MatmulStaging, BAboveTheLimitSplitsN) {
  CUPLAN_REQUIRE_GPU();
  // B (256 x 256 f32, 256 KiB) above a 100 KB limit: blocks of N as well as of M.
  check_staged<float>(8, 256, 256, true, true, 100000, 1e-5);
  check_staged<float>(300, 256, 256, false, true, 100000, 1e-5);
}

TEST(MatmulStaging, LimitWithoutRoomForARowAndAColumnIsInvalidNamingTheSmallest) {
  CUPLAN_REQUIRE_GPU();
  HostMatrix<float> a({}, 8, 1024), b({}, 1024, 4);
  // One row of A (4096 bytes), one column of B (4096) and one element of D (4) next to the workspace (4096) and
  // the alignment padding (256 x 17 = 4352): 16644 bytes; one byte less cannot run.
  const std::size_t smallest = 4096 + 4096 + 4 + workspace_cap + 4352;
  Matmul mm(a.view(), b.view(),
            {.execution = Execution::cuda(), .memory_limit = workspace_cap, .device_memory_limit = smallest - 1});
  mm.plan();
  ASSERT_NO_FATAL_FAILURE(expect_throw_naming<InvalidArgument>(
      [&] { (void)mm.execute(); }, {"smallest limit that works is " + std::to_string(smallest)}));
  check_staged<float>(8, 1024, 4, true, true, smallest, 1e-5);
}

TEST(MatmulStaging, BRowsWiderThanAnAChunk) {
  CUPLAN_REQUIRE_GPU();
  // K = 3, N = 200: one row of B (1600 bytes) is larger than a chunk of A (4 rows, 96 bytes), so B is uploaded in
  // chunks of one row each before the chunks of A.
  check_staged<double>(37, 3, 200, true, true, limit_for(3, 200, 8, 4), 1e-12);
}

TEST(MatmulStaging, ANewResultIsPinnedAndTheNextCallReusesItsBlock) {
  CUPLAN_REQUIRE_GPU();
  // D is 600 x 512 f32 (1.2 MB), above the smallest pinned result (1 MiB); a 1 MiB limit splits it into chunks.
  const std::int64_t m = 600, k = 32, n = 512;
  HostMatrix<float> a({}, m, k, true, 0), b({}, k, n, true, 0);
  Matmul mm(
      a.view(), b.view(),
      {.execution = Execution::cuda(), .memory_limit = workspace_cap, .device_memory_limit = std::size_t{1} << 20});
  mm.plan();
  expect_pinned_results_reused(
      [&] { return mm.execute(); },
      [&](const Tensor& d, int call) { EXPECT_LT(product_error(read_all(d), a, b), 1e-5) << "call " << call; });
  Tensor z = matmul(a.view(), b.view(), {.execution = Execution::cuda()});  // the function form too
  EXPECT_EQ(z.memory_space(), MemorySpace::host_pinned);
}

}  // namespace
}  // namespace cuplan::testing
