// SPDX-License-Identifier: Apache-2.0
// Host time of the first function-form call of a new shape on device operands, queued behind a 200 ms kernel on the
// same stream, with PlanningMode::background and PlanningMode::blocking: FFT C2C and R2C over 1 to 3 axes, Matmul bf16
// and f32. Every call plans at the call in either mode (docs/streams.md, "Planning happens at the call"): the rows show
// how long plan creation holds the host, and whether it waited for the queued kernel (plan creation that loads
// library modules waits for the whole device). Each case clears the plan cache first, so both calls plan; the
// `background` call runs first (its modules are as cold as they come). The two results must be equal bit for bit
// (exit status 1 otherwise). Prints one row per case.
//
//   planning_bench [--blocking-first]   (--blocking-first: the blocking call first)

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "support/bench_check.hpp"

namespace {

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

long long cycles_for_ms(double ms) {
  int khz = 0;
  BENCH_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  return static_cast<long long>(ms * khz);
}

cuplan::Tensor random_device(const cuplan::Shape& shape, cuplan::DType dtype, cuplan::StreamRef s) {
  const auto n = static_cast<std::size_t>(cuplan::checked_numel(shape));
  std::mt19937 rng(static_cast<unsigned>(n));
  std::uniform_real_distribution<float> value(-1.0F, 1.0F);
  cuplan::Tensor t = cuplan::Tensor::empty(shape, dtype, cuplan::Device::cuda(0), s);
  if (dtype == cuplan::bf16) {
    std::vector<std::uint16_t> bits(n);
    for (auto& b : bits) {
      const float f = value(rng);
      std::uint32_t word = 0;
      std::memcpy(&word, &f, sizeof word);
      b = static_cast<std::uint16_t>(word >> 16);
    }
    cuplan::copy(cuplan::TensorView(bits.data(), cuplan::bf16, shape), t, s);
  } else {
    std::vector<float> values(n * (dtype.size() / 4));
    for (float& v : values) v = value(rng);
    cuplan::copy(cuplan::TensorView(values.data(), dtype, shape), t, s);
  }
  s.synchronize();
  return t;
}

std::vector<unsigned char> bytes_of(const cuplan::Tensor& t) {
  cuplan::Tensor host = cuplan::Tensor::empty_strided(t.shape(), t.strides(), t.dtype(), cuplan::Device::cpu());
  cuplan::copy(t, host);
  std::vector<unsigned char> out(static_cast<std::size_t>(t.numel()) * t.dtype().size());
  std::memcpy(out.data(), host.data(), out.size());
  return out;
}

struct Case {
  std::string name;
  std::function<cuplan::Tensor(cuplan::PlanningMode)> call;
};

}  // namespace

int main(int argc, char** argv) {
  if (!cuplan::cuda_available()) {
    std::printf("planning_bench: no CUDA device, nothing to measure\n");
    return 0;
  }
  const bool blocking_first = argc > 1 && std::strcmp(argv[1], "--blocking-first") == 0;
  cuplan::Stream s;
  spin<<<1, 1, 0, s.native()>>>(1);
  BENCH_CUDA_CHECK(cudaStreamSynchronize(s.native()));
  using cuplan::PlanningMode;
  std::vector<Case> cases;
  const auto fft_case = [&](const char* name, cuplan::Shape shape, std::vector<int> axes, bool real) {
    auto x = std::make_shared<cuplan::Tensor>(random_device(shape, real ? cuplan::f32 : cuplan::c64, s));
    cases.push_back({name, [x, axes, &s](PlanningMode mode) {
                       return cuplan::fft(*x, {.axes = axes, .stream = s, .planning_mode = mode});
                     }});
  };
  fft_case("FFT C2C 1D [64, 16384] axis 1", {64, 16384}, {1}, false);
  fft_case("FFT C2C 2D [16, 512, 512] axes 1,2", {16, 512, 512}, {1, 2}, false);
  fft_case("FFT C2C 3D [128, 128, 128]", {128, 128, 128}, {0, 1, 2}, false);
  fft_case("FFT R2C 1D [64, 16384] axis 1", {64, 16384}, {1}, true);
  fft_case("FFT R2C 2D [16, 512, 512] axes 1,2", {16, 512, 512}, {1, 2}, true);
  fft_case("FFT R2C 3D [128, 128, 128]", {128, 128, 128}, {0, 1, 2}, true);
  for (cuplan::DType dtype : {cuplan::bf16, cuplan::f32}) {
    auto a = std::make_shared<cuplan::Tensor>(random_device({2048, 1024}, dtype, s));
    auto b = std::make_shared<cuplan::Tensor>(random_device({1024, 1536}, dtype, s));
    cases.push_back(
        {std::string("Matmul ") + std::string(dtype.name()) + " 2048 x 1536 x 1024",
         [a, b, &s](PlanningMode mode) { return cuplan::matmul(*a, *b, {.stream = s, .planning_mode = mode}); }});
  }

  const long long spin_cycles = cycles_for_ms(200.0);
  int failures = 0;
  std::printf("first call of a new shape behind a 200 ms kernel on its stream (host time, ms)\n");
  std::printf("%-40s %14s %14s %12s %s\n", "case", "background", "blocking", "bit-equal",
              "returned while the kernel ran (background, blocking)");
  for (const Case& c : cases) {
    double ms[2] = {0, 0};
    bool during[2] = {false, false};
    std::vector<unsigned char> bytes[2];
    for (int round = 0; round < 2; ++round) {
      const int mode = blocking_first ? 1 - round : round;  // 0: background, 1: blocking
      cuplan::plan_cache::clear();
      spin<<<1, 1, 0, s.native()>>>(spin_cycles);
      BENCH_CUDA_CHECK(cudaGetLastError());
      const auto start = std::chrono::steady_clock::now();
      cuplan::Tensor result = c.call(mode == 0 ? PlanningMode::background : PlanningMode::blocking);
      ms[mode] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      during[mode] = !s.done();
      s.synchronize();
      bytes[mode] = bytes_of(result);
    }
    const bool equal = bytes[0] == bytes[1];
    failures += equal ? 0 : 1;
    std::printf("%-40s %14.3f %14.3f %12s %s, %s\n", c.name.c_str(), ms[0], ms[1], equal ? "yes" : "NO",
                during[0] ? "yes" : "no", during[1] ? "yes" : "no");
  }
  std::printf("%s\n", failures == 0 ? "all results equal bit for bit" : "RESULTS DIFFER");
  return failures == 0 ? 0 : 1;
}
