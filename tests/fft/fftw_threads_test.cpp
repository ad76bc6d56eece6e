// SPDX-License-Identifier: Apache-2.0
// FFTW's planner thread count (fftw_plan_with_nthreads) is process-wide. cuplan sets it for each plan it makes,
// under its planner lock, and puts the program's own count back afterwards (it was left at cuplan's last count).

#include <gtest/gtest.h>

#include <fftw3.h>

#include <complex>
#include <vector>

#include "cuplan/cuplan.hpp"

namespace cuplan {
namespace {

TEST(FftwThreads, PlanningLeavesTheProgramsPlannerThreadCount) {
  // The first transform sets up FFTW's threads (fftw_init_threads), which must come before the program's own
  // threaded planning.
  std::vector<std::complex<float>> f(64, {1.0F, 0.0F});
  (void)fft(TensorView(f.data(), {64}), {.execution = Execution::cpu(1)});
  fftwf_plan_with_nthreads(3);
  fftw_plan_with_nthreads(3);
  // New sizes: cuplan makes new plans, single and double precision, with counts of its own.
  std::vector<std::complex<float>> g(96 * 96, {1.0F, 0.0F});
  std::vector<std::complex<double>> h(80 * 80, {1.0, 0.0});
  const Tensor y = fft(TensorView(g.data(), {96, 96}), {.execution = Execution::cpu(2)});
  const Tensor z = fft(TensorView(h.data(), {80, 80}), {.execution = Execution::cpu(1)});
  EXPECT_EQ(y.data<std::complex<float>>()[0], std::complex<float>(96.0F * 96.0F, 0.0F));
  EXPECT_EQ(z.data<std::complex<double>>()[0], std::complex<double>(80.0 * 80.0, 0.0));
  EXPECT_EQ(fftwf_planner_nthreads(), 3);
  EXPECT_EQ(fftw_planner_nthreads(), 3);
  fftwf_plan_with_nthreads(1);
  fftw_plan_with_nthreads(1);
}

}  // namespace
}  // namespace cuplan
