// SPDX-License-Identifier: Apache-2.0
// FFTW's planner thread count (fftw_plan_with_nthreads) is process-wide. cuplan sets it for each plan it makes,
// under its planner lock, and puts the program's own count back afterwards (it was left at cuplan's last count).

#include <gtest/gtest.h>

#include <fftw3.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
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

// Execution::cpu(0), the library default, is one FFTW thread per 64 Ki elements, at most one per hardware thread,
// for FFT and the real-to-real transforms alike (the real-to-real plans took every hardware thread for any size).
// The real-to-real plans are made, not run (plan() makes them), and the FFT, whose FFTW plan is made at its first
// execute, runs at the size that takes one thread: FFTW's worker threads synchronise in code ThreadSanitizer does not
// see. The rule is one function for both (default_cpu_threads).
TEST(FftwThreads, TheDefaultIsOneThreadPer64KiElementsForFftAndRealToReal) {
  std::vector<std::string> lines;
  set_logger([&](LogLevel, std::string_view message) { lines.emplace_back(message); });
  const LogLevel previous = log_level();
  set_log_level(LogLevel::info);
  const auto threads_logged = [&](std::string_view who) {
    for (const std::string& line : lines)
      if (line.starts_with(who) && line.find("FFTW planned") != std::string::npos) {
        const std::size_t end = line.find(" threads");
        const std::size_t begin = line.rfind(' ', end - 1) + 1;
        return std::stoi(line.substr(begin, end - begin));
      }
    return -1;
  };
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // New sizes for each call, so that each makes (and logs) a plan.
  for (const std::int64_t n : {std::int64_t{1000}, std::int64_t{3 * 65536 + 8}}) {
    const int expected = std::clamp<int>(static_cast<int>(n / 65536), 1, hardware);
    std::vector<float> x(static_cast<std::size_t>(n), 1.0F);
    std::vector<std::complex<float>> c(static_cast<std::size_t>(n), {1.0F, 0.0F});
    lines.clear();
    RealTransform dct2(TensorView(x.data(), {n}), {.execution = Execution::cpu()});
    dct2.plan();
    EXPECT_EQ(threads_logged("RealTransform"), expected) << "n = " << n;
    if (expected == 1) {
      lines.clear();
      FFT transform(TensorView(c.data(), {n}), {.execution = Execution::cpu()});
      transform.plan();
      (void)transform.execute();
      EXPECT_EQ(threads_logged("FFT"), expected) << "n = " << n;
    }
  }
  set_log_level(previous);
  set_logger(nullptr);
}

}  // namespace
}  // namespace cuplan
