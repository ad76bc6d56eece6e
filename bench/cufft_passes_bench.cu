// SPDX-License-Identifier: Apache-2.0
// How many passes over memory cuFFT's plan makes for the layouts the convolution's routes use, and what each costs,
// without a profiler: one execution is captured into a CUDA graph, its kernel nodes are the passes (named through
// the driver, with their grid and block), and each node is then timed alone (support/graph_nodes.hpp; CUDA events,
// median of the repetitions after warm-up), beside the whole execution's time. The layouts, c64 in place:
//   - 512^3: cuFFT's 3D plan (the separate route's), its two outer axes with the innermost as the batch (the fused
//     route's outer plan: 2D of 512 x 512, stride 512, distance 1), the innermost axis alone (what the fused kernel
//     replaces), and the outer axes one at a time (axis 0 in one call; axis 1 for one slab, of 512 such calls);
//   - 8192^2: cuFFT's 2D plan, its outer axis with the rows as the batch (stride 8192, distance 1) and the rows.
// A fused innermost axis saves its forward and inverse passes only where the full plan spends passes of its own on
// that axis; the counts say whether it does. Usage: cufft_passes_bench [--quick] (--quick: 128^3 and 2048^2).
// Without a GPU it says so and exits 0.

#include <cuda_runtime_api.h>
#include <cufft.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support/bench_check.hpp"
#include "support/fft_timing.hpp"
#include "support/graph_nodes.hpp"

namespace {

/// One cuFFT advanced layout (in place, input and output alike), c64.
struct Layout {
  std::string name;
  int rank;
  long long n[3];
  long long stride;  ///< distance of an FFT's neighbouring elements
  long long dist;    ///< distance of neighbouring batch entries
  long long batch;
  long long elements;  ///< size of the buffer
};

void run_layout(const Layout& l, cudaStream_t stream, int reps) {
  std::vector<cufftComplex> host(static_cast<std::size_t>(l.elements));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& v : host) v = {u(rng), u(rng)};
  cufftComplex* data = nullptr;
  BENCH_CUDA_CHECK(cudaMalloc(&data, host.size() * sizeof(cufftComplex)));
  BENCH_CUDA_CHECK(cudaMemcpy(data, host.data(), host.size() * sizeof(cufftComplex), cudaMemcpyHostToDevice));

  cufftHandle plan = 0;
  BENCH_CUFFT_CHECK(cufftCreate(&plan));
  long long n[3] = {l.n[0], l.n[1], l.n[2]};
  long long embed[3] = {l.n[0], l.n[1], l.n[2]};
  std::size_t work = 0;
  BENCH_CUFFT_CHECK(cufftMakePlanMany64(plan, l.rank, n, embed, l.stride, l.dist, embed, l.stride, l.dist, CUFFT_C2C,
                                        l.batch, &work));
  BENCH_CUFFT_CHECK(cufftSetStream(plan, stream));
  const auto forward = [&] { BENCH_CUFFT_CHECK(cufftExecC2C(plan, data, data, CUFFT_FORWARD)); };
  const double whole = bench::gpu_median_ms(stream, 3, reps, forward);

  cudaGraph_t graph = bench::capture_call(stream, forward);
  if (graph == nullptr) std::exit(1);
  std::size_t count = 0;
  BENCH_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  const double bytes = static_cast<double>(l.elements) * sizeof(cufftComplex);
  std::printf("%s: %.3f ms per forward (%.2f GiB in place, work area %zu bytes), %zu graph nodes\n", l.name.c_str(),
              whole, bytes / (1024.0 * 1024.0 * 1024.0), work, count);
  bench::print_kernel_nodes(graph, stream, reps, bytes);
  BENCH_CUDA_CHECK(cudaGraphDestroy(graph));
  BENCH_CUFFT_CHECK(cufftDestroy(plan));
  BENCH_CUDA_CHECK(cudaFree(data));
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: cufft_passes_bench skipped\n");
    return 0;
  }
  (void)bench::graph_driver();  // ends the program, naming the entry point, where the driver lacks one
  cudaDeviceProp prop{};
  BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s\n", prop.name);
  cudaStream_t stream = nullptr;
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const long long c = quick ? 128 : 512, s = quick ? 2048 : 8192;
  const int reps = quick ? 5 : 15;
  const std::string cube = std::to_string(c) + "^3", square = std::to_string(s) + "^2";
  const std::vector<Layout> layouts{
      {cube + " c64, cuFFT's 3D plan", 3, {c, c, c}, 1, c * c * c, 1, c * c * c},
      {cube + " c64, outer two axes (2D, stride " + std::to_string(c) + ", distance 1)",
       2,
       {c, c, 1},
       c,
       1,
       c,
       c * c * c},
      {cube + " c64, innermost axis (rows)", 1, {c, 1, 1}, 1, c, c * c, c * c * c},
      // The outer two axes one at a time: axis 0 is one call (stride c^2, its batch the c^2 columns); axis 1 is c
      // calls, one per slab of c x c (stride c, distance 1), timed here for one slab.
      {cube + " c64, axis 0 alone (1D, stride " + std::to_string(c * c) + ", distance 1)",
       1,
       {c, 1, 1},
       c * c,
       1,
       c * c,
       c * c * c},
      {cube + " c64, axis 1 of one slab (1D, stride " + std::to_string(c) + ", distance 1; x" + std::to_string(c) +
           " slabs)",
       1,
       {c, 1, 1},
       c,
       1,
       c,
       c * c},
      {square + " c64, cuFFT's 2D plan", 2, {s, s, 1}, 1, s * s, 1, s * s},
      {square + " c64, outer axis (1D, stride " + std::to_string(s) + ", distance 1)", 1, {s, 1, 1}, s, 1, s, s * s},
      {square + " c64, rows", 1, {s, 1, 1}, 1, s, s, s * s},
  };
  for (const Layout& l : layouts) run_layout(l, stream, reps);
  BENCH_CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}
