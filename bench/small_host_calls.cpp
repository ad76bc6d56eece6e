// SPDX-License-Identifier: Apache-2.0
// Small host-operand calls across builds: FFT c64 64x64 and Matmul f32 64^3, class form, planned, each against the
// device-operand call plus cudaMemcpy in and out timed in the same process. Only the public API of the first
// release with host operands is used, so the same file builds against an earlier install of cuplan: run the two
// builds in alternating processes to compare them ("small operands no slower than before", docs/staging.md).
// Prints microseconds per call: the median over 9 rounds of the median of 300 calls, after 50 warm-up calls. The
// last two lines, fft_small_class_host_us and matmul_small_class_host_us, are the host time of a planned class-form
// execute on device operands (enqueue only: the small-call host cost), for the same comparison across builds.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <random>
#include <vector>

#include "cuplan/cuplan.hpp"

namespace {

using namespace cuplan;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
double median_us(F&& call, int calls) {
  for (int i = 0; i < 50; ++i) call();
  std::vector<double> t;
  for (int i = 0; i < calls; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  return median(t);
}

void check(cudaError_t status) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(status));
    std::exit(1);
  }
}

void fill_random(Tensor& t, std::mt19937& rng, std::size_t floats) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto* data = static_cast<float*>(t.data());
  for (std::size_t i = 0; i < floats; ++i) data[i] = uniform(rng);
}

}  // namespace

int main() try {
  std::mt19937 rng(7);
  Tensor x = Tensor::empty({64, 64}, c64), a = Tensor::empty({64, 64}, f32), b = Tensor::empty({64, 64}, f32);
  fill_random(x, rng, 2 * 4096);
  fill_random(a, rng, 4096);
  fill_random(b, rng, 4096);
  Tensor dx = x.to(Device::cuda(0)), da = a.to(Device::cuda(0)), db = b.to(Device::cuda(0));
  Tensor back = Tensor::empty({64, 64}, c64);
  FFT host_fft(x, {.execution = Execution::cuda()}), device_fft(dx, {});
  Matmul host_mm(a, b, {.execution = Execution::cuda()}), device_mm(da, db, {});
  host_fft.plan();
  device_fft.plan();
  host_mm.plan();
  device_mm.plan();
  std::vector<double> fft_host, fft_raw, mm_host, mm_raw, fft_enqueue, mm_enqueue;
  for (int round = 0; round < 9; ++round) {
    fft_raw.push_back(median_us(
        [&] {
          check(cudaMemcpy(dx.data(), x.data(), 64 * 64 * 8, cudaMemcpyHostToDevice));
          Tensor y = device_fft.execute();
          check(cudaMemcpy(back.data(), y.data(), 64 * 64 * 8, cudaMemcpyDeviceToHost));
        },
        300));
    fft_host.push_back(median_us([&] { (void)host_fft.execute(); }, 300));
    mm_raw.push_back(median_us(
        [&] {
          check(cudaMemcpy(da.data(), a.data(), 64 * 64 * 4, cudaMemcpyHostToDevice));
          check(cudaMemcpy(db.data(), b.data(), 64 * 64 * 4, cudaMemcpyHostToDevice));
          Tensor d = device_mm.execute();
          check(cudaMemcpy(back.data(), d.data(), 64 * 64 * 4, cudaMemcpyDeviceToHost));
        },
        300));
    mm_host.push_back(median_us([&] { (void)host_mm.execute(); }, 300));
    check(cudaDeviceSynchronize());
    fft_enqueue.push_back(median_us([&] { (void)device_fft.execute(); }, 300));
    check(cudaDeviceSynchronize());
    mm_enqueue.push_back(median_us([&] { (void)device_mm.execute(); }, 300));
    check(cudaDeviceSynchronize());
  }
  const double fh = median(fft_host), fr = median(fft_raw), mh = median(mm_host), mr = median(mm_raw);
  std::printf("FFT c64 64x64 host operand: %.1f us; device call + cudaMemcpy in/out: %.1f us; ratio %.2f\n", fh, fr,
              fr / fh);
  std::printf("Matmul f32 64^3 host operands: %.1f us; device call + cudaMemcpy in/out: %.1f us; ratio %.2f\n", mh, mr,
              mr / mh);
  std::printf("fft_small_class_host_us %.3f\nmatmul_small_class_host_us %.3f\n", median(fft_enqueue),
              median(mm_enqueue));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "small_host_calls: %s\n", e.what());
  return 1;
}
