// SPDX-License-Identifier: Apache-2.0
// 10^5 products of 8x8 matrices in one call: A and B of shape {100000, 8, 8} give D of shape {100000, 8, 8}, one
// batched product (one cuBLASLt call, or one BLAS loop on the CPU). An argument sets another count of products
// (`batched_small_matmul 2000`: a tool that slows every launch, such as compute-sanitizer, runs it so). The same
// products as a loop of single calls, the way code written per matrix does it: one Matmul planned for an 8x8 product,
// then per matrix reset_operands and execute into that matrix's slice of the output. Both results are checked against a
// double reference on sampled batch entries; the times of both ways are printed (they depend on the machine: no
// threshold). Without a GPU the same program runs on the CPU with host tensors.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;

namespace {

constexpr std::int64_t kDefaultBatch = 100000, kMaxBatch = 10000000, kN = 8, kSize = kN * kN;

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

// Largest error of D's sampled entries against the double product, relative to the largest reference value.
double sampled_error(const std::vector<float>& d, const std::vector<float>& a, const std::vector<float>& b,
                     std::int64_t batch, std::mt19937& rng) {
  std::uniform_int_distribution<std::int64_t> pick(0, batch - 1);
  double worst = 0, largest = 0;
  for (int trial = 0; trial < 256; ++trial) {
    const std::int64_t i = trial == 0 ? 0 : trial == 1 ? batch - 1 : pick(rng);
    for (std::int64_t r = 0; r < kN; ++r)
      for (std::int64_t c = 0; c < kN; ++c) {
        double want = 0;
        for (std::int64_t k = 0; k < kN; ++k)
          want += double(a[static_cast<std::size_t>(i * kSize + r * kN + k)]) *
                  double(b[static_cast<std::size_t>(i * kSize + k * kN + c)]);
        worst = std::max(worst, std::abs(d[static_cast<std::size_t>(i * kSize + r * kN + c)] - want));
        largest = std::max(largest, std::abs(want));
      }
  }
  return worst / largest;
}

std::vector<float> to_host(const cp::Tensor& t, cp::StreamRef s) {
  const cp::Tensor host = t.to(cp::Device::cpu(), s);  // blocking: waits for s
  return std::vector<float>(host.data<float>(), host.data<float>() + host.numel());
}

// The count of products: the first argument when given (1 to 10^7), else 10^5; 0 when the argument is not such a
// count.
std::int64_t batch_from(int argc, char** argv) {
  if (argc < 2) return kDefaultBatch;
  char* end = nullptr;
  const long long n = std::strtoll(argv[1], &end, 10);
  if (end == argv[1] || *end != '\0' || n < 1 || n > kMaxBatch) return 0;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t batch = batch_from(argc, argv);
  if (batch == 0) {
    std::fprintf(stderr, "usage: batched_small_matmul [products]: products from 1 to %lld (default %lld), got '%s'\n",
                 static_cast<long long>(kMaxBatch), static_cast<long long>(kDefaultBatch), argv[1]);
    return 2;
  }
  const cp::Device device = sample::device("batched_small_matmul");
  try {
    std::mt19937 rng(11);
    std::vector<float> ha = sample::random_real<float>(static_cast<std::size_t>(batch * kSize), rng);
    std::vector<float> hb = sample::random_real<float>(ha.size(), rng);

    cp::Stream s(device);
    cp::Tensor a = cp::Tensor::empty({batch, kN, kN}, cp::f32, device, s);
    cp::Tensor b = cp::Tensor::empty({batch, kN, kN}, cp::f32, device, s);
    cp::copy(cp::TensorView(ha.data(), {batch, kN, kN}), a, s);
    cp::copy(cp::TensorView(hb.data(), {batch, kN, kN}), b, s);

    // One call for all 10^5 products. The first call plans (and caches the plan); the second is the one timed.
    (void)cp::matmul(a, b, {.stream = s});
    s.synchronize();
    auto start = std::chrono::steady_clock::now();
    const cp::Tensor batched = cp::matmul(a, b, {.stream = s});
    s.synchronize();
    const double batched_ms = elapsed_ms(start);

    // A loop of 10^5 single products into the slices of one output, with one object planned for 8x8.
    const cp::MemorySpace space = a.view().memory_space();
    const auto matrix = [&](const cp::Tensor& t, std::int64_t i) {  // view of matrix i (no pointer query)
      return cp::TensorView(t.data<float>() + i * kSize, cp::f32, {kN, kN}, cp::Strides{kN, 1}, device, space);
    };
    cp::Tensor looped = cp::Tensor::empty({batch, kN, kN}, cp::f32, device, s);
    cp::Matmul single(matrix(a, 0), matrix(b, 0), {.stream = s});
    single.plan();
    s.synchronize();
    start = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < batch; ++i) {
      single.reset_operands({.a = matrix(a, i), .b = matrix(b, i)}, s);
      (void)single.execute({.stream = s, .out = matrix(looped, i)});
    }
    s.synchronize();
    const double loop_ms = elapsed_ms(start);

    std::printf("%lld products of %lldx%lld f32: one batched call %.3f ms, a loop of single calls %.3f ms (%.1fx)\n",
                static_cast<long long>(batch), static_cast<long long>(kN), static_cast<long long>(kN), batched_ms,
                loop_ms, loop_ms / batched_ms);
    const double batched_error = sampled_error(to_host(batched, s), ha, hb, batch, rng);
    const double loop_error = sampled_error(to_host(looped, s), ha, hb, batch, rng);
    std::printf("relative error at 256 sampled batch entries: batched %.3g, loop %.3g\n", batched_error, loop_error);
    sample::check(batched_error < 1e-5, "the batched call matches the double reference");
    sample::check(loop_error < 1e-5, "the loop of single calls matches the double reference");
    return 0;
  } catch (const cp::Error& e) {
    return sample::report_error(e);
  }
}
