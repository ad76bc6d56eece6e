// SPDX-License-Identifier: Apache-2.0
#pragma once
// Timing shared by the benchmarks (fft_bench, fft_callback_bench, matmul_bench): medians of GPU time (CUDA events),
// of host wall-clock time, and of host time per call with the GPU kept busy, so that only the host side is timed.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "support/bench_check.hpp"

namespace bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Median GPU milliseconds of `run` on `stream` over `reps` repetitions after `warmup` ones.
inline double gpu_median_ms(cudaStream_t stream, int warmup, int reps, const std::function<void()>& run) {
  for (int i = 0; i < warmup; ++i) run();
  cudaEvent_t start, stop;
  BENCH_CUDA_CHECK(cudaEventCreate(&start));
  BENCH_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    BENCH_CUDA_CHECK(cudaEventRecord(start, stream));
    run();
    BENCH_CUDA_CHECK(cudaEventRecord(stop, stream));
    BENCH_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  BENCH_CUDA_CHECK(cudaEventDestroy(start));
  BENCH_CUDA_CHECK(cudaEventDestroy(stop));
  return median(times);
}

/// Median host wall-clock time of `run` in units of `Period` (std::micro, std::milli) over `reps` repetitions after
/// `warmup` ones.
template <class Period>
double host_median(int warmup, int reps, const std::function<void()>& run) {
  for (int i = 0; i < warmup; ++i) run();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(std::chrono::duration<double, Period>(std::chrono::steady_clock::now() - start).count());
  }
  return median(times);
}

/// Holds `stream` for `ms` milliseconds with a host function, so calls enqueued meanwhile cost only host time.
inline void hold_stream(cudaStream_t stream, int ms) {
  static int hold_ms = 0;
  hold_ms = ms;
  BENCH_CUDA_CHECK(cudaLaunchHostFunc(
      stream, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms)); }, nullptr));
}

/// Median host microseconds per call of each of `variants`, in `rounds` rounds; each round times `calls`
/// back-to-back calls of every variant in a rotating order, so that drift of the host's clock during the run
/// affects all alike.
inline std::vector<double> host_us_per_call(cudaStream_t stream, int rounds, int calls,
                                            const std::vector<std::function<void()>>& variants) {
  for (const auto& call : variants)
    for (int i = 0; i < 100; ++i) call();  // warm-up: plans, pools, caches
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<std::vector<double>> per_call(variants.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t j = 0; j < variants.size(); ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(r)) % variants.size();
      hold_stream(stream, 30);
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) variants[k]();
      const auto t1 = std::chrono::steady_clock::now();
      per_call[k].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
      BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
  }
  std::vector<double> medians;
  for (auto& v : per_call) medians.push_back(median(v));
  return medians;
}

}  // namespace bench
