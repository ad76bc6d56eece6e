// SPDX-License-Identifier: Apache-2.0
// Host cost per call of the runtime calls the stream contract adds on the hot path (event record, stream wait,
// current-stream lookup), next to a small cufftExecC2C for scale. Prints microseconds per call (median of rounds).

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "support/bench_check.hpp"

namespace {

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Median over rounds of the mean host time of `calls` back-to-back calls, with the GPU kept busy so that the
// queue never drains (the calls measure enqueue cost, not completion).
double us_per_call(cudaStream_t busy, const std::function<void()>& call, int calls = 2000, int rounds = 15) {
  std::vector<double> samples;
  for (int r = 0; r < rounds; ++r) {
    spin<<<1, 1, 0, busy>>>(40'000'000);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    const auto stop = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(stop - start).count() / calls);
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main() {
  if (!cuplan::cuda_available()) {
    std::printf("runtime_overhead_bench: no CUDA device, nothing to measure\n");
    return 0;
  }
  cuplan::Stream s1, s2;
  cudaEvent_t event;
  BENCH_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  cufftHandle plan;
  BENCH_CUFFT_CHECK(cufftPlan1d(&plan, 256, CUFFT_C2C, 1));
  BENCH_CUFFT_CHECK(cufftSetStream(plan, s1.native()));
  cufftComplex* data;
  BENCH_CUDA_CHECK(cudaMalloc(&data, 256 * sizeof(cufftComplex)));

  const double exec = us_per_call(s1, [&] { BENCH_CUFFT_CHECK(cufftExecC2C(plan, data, data, CUFFT_FORWARD)); });
  const double record = us_per_call(s1, [&] { BENCH_CUDA_CHECK(cudaEventRecord(event, s1.native())); });
  const double wait = us_per_call(s1, [&] { BENCH_CUDA_CHECK(cudaStreamWaitEvent(s2.native(), event, 0)); });
  const double set_stream = us_per_call(s1, [&] { BENCH_CUFFT_CHECK(cufftSetStream(plan, s1.native())); });
  const double current = us_per_call(s1, [&] { (void)cuplan::current_stream(); });
  int device = 0;
  const double get_device = us_per_call(s1, [&] { BENCH_CUDA_CHECK(cudaGetDevice(&device)); });
  const double exec_record = us_per_call(s1, [&] {
    BENCH_CUFFT_CHECK(cufftExecC2C(plan, data, data, CUFFT_FORWARD));
    BENCH_CUDA_CHECK(cudaEventRecord(event, s1.native()));
  });

  std::printf("%-40s %8s\n", "call", "us/call");
  std::printf("%-40s %8.3f\n", "cufftExecC2C n=256", exec);
  std::printf("%-40s %8.3f\n", "cufftExecC2C + cudaEventRecord", exec_record);
  std::printf("%-40s %8.3f\n", "cudaEventRecord (no timing)", record);
  std::printf("%-40s %8.3f\n", "cudaStreamWaitEvent", wait);
  std::printf("%-40s %8.3f\n", "cufftSetStream", set_stream);
  std::printf("%-40s %8.3f\n", "cuplan::current_stream()", current);
  std::printf("%-40s %8.3f\n", "cudaGetDevice", get_device);

  BENCH_CUFFT_CHECK(cufftDestroy(plan));
  BENCH_CUDA_CHECK(cudaFree(data));
  BENCH_CUDA_CHECK(cudaEventDestroy(event));
  return 0;
}
