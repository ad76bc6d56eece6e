// SPDX-License-Identifier: Apache-2.0
// The BLAS library's thread count is process-wide (OpenBLAS, BLIS, MKL: matmul/cpu/blas_vendor.hpp). A CPU product runs
// with the count its Execution asks for, and the process's own count is what it was after any number of concurrent
// products with different counts (it was saved and restored per call without synchronisation, so concurrent calls left
// the process at another call's count). scripts/sanitize_cpu.sh runs this under TSan with the library instrumented.

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "matmul/cpu/blas_vendor.hpp"

namespace cuplan {
namespace {

// Restores the process's count however the test ends.
struct ProcessCount {
  int saved = detail::mm::blas_thread_count();
  ~ProcessCount() { detail::mm::set_blas_thread_count(saved); }
};

TEST(BlasThreads, ConcurrentProductsWithDifferentCountsLeaveTheProcessCount) {
  ProcessCount restore;
  // A count that neither thread asks for, so that a leaked count shows.
  detail::mm::set_blas_thread_count(3);
  ASSERT_EQ(detail::mm::blas_thread_count(), 3) << "this " << detail::mm::blas_vendor << " does not take a count of 3";
  constexpr int kIterations = 1000;
  // Long enough a call for the other thread to change the count meanwhile: before the fix, one round of 1,000 left
  // the process at 1 in 5 of 6 runs on two cores.
  constexpr std::int64_t n = 128;
  std::vector<float> a(n * n, 1.0F), b(n * n, 0.5F);
  const TensorView av(a.data(), {n, n}), bv(b.data(), {n, n});
  std::atomic<int> wrong{0};
  const auto run = [&](Execution execution) {
    for (int i = 0; i < kIterations; ++i) {
      const Tensor d = matmul(av, bv, {.execution = execution});
      if (d.data<float>()[n * n - 1] != 0.5F * static_cast<float>(n)) ++wrong;
    }
  };
  for (int round = 0; round < 3; ++round) {
    std::thread one([&] { run(Execution::cpu(1)); });
    std::thread two([&] { run(Execution::cpu(2)); });
    one.join();
    two.join();
    EXPECT_EQ(detail::mm::blas_thread_count(), 3) << "round " << round;
  }
  EXPECT_EQ(wrong.load(), 0);
  // Products with no count of their own (cpu(0)) beside them run with the process's count and leave it.
  std::thread two([&] { run(Execution::cpu(2)); });
  std::thread all([&] { run(Execution::cpu(0)); });
  two.join();
  all.join();
  EXPECT_EQ(detail::mm::blas_thread_count(), 3);
  // A program's own change between products is the count products with cpu(0) see and leave.
  detail::mm::set_blas_thread_count(1);
  (void)matmul(av, bv, {.execution = Execution::cpu(2)});
  (void)matmul(av, bv, {.execution = Execution::cpu(0)});
  EXPECT_EQ(detail::mm::blas_thread_count(), 1);
}

}  // namespace
}  // namespace cuplan
