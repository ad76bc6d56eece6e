// SPDX-License-Identifier: Apache-2.0
// How many passes over memory cuFFT's plan makes for the layouts the convolution's routes use, and what each costs,
// without a profiler: one execution is captured into a CUDA graph, its kernel nodes are the passes (named through
// the driver, with their grid and block), and each node is then timed alone as a one-node graph (CUDA events, median
// of the repetitions after warm-up), beside the whole execution's time. The layouts, c64 in place:
//   - 512^3: cuFFT's 3D plan (the separate route's), its two outer axes with the innermost as the batch (the fused
//     route's outer plan: 2D of 512 x 512, stride 512, distance 1), the innermost axis alone (what the fused kernel
//     replaces), and the outer axes one at a time (axis 0 in one call; axis 1 for one slab, of 512 such calls);
//   - 8192^2: cuFFT's 2D plan, its outer axis with the rows as the batch (stride 8192, distance 1) and the rows.
// A fused innermost axis saves its forward and inverse passes only where the full plan spends passes of its own on
// that axis; the counts say whether it does. Usage: cufft_passes_bench [--quick] (--quick: 128^3 and 2048^2).
// Without a GPU it says so and exits 0.

#include <cuda.h>
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

namespace {

// The driver calls that name a captured kernel, looked up at run time (cudaGetDriverEntryPointByVersion), so that
// the program does not link libcuda and starts, to say so, where no driver is installed.
struct Driver {
  decltype(&::cuGraphKernelNodeGetParams) kernel_node_params = nullptr;
  decltype(&::cuFuncGetName) function_name = nullptr;
  decltype(&::cuKernelGetName) kernel_name = nullptr;
};
Driver driver;

template <class Function>
void entry_point(const char* symbol, unsigned version, Function& function) {
  void* found = nullptr;
  cudaDriverEntryPointQueryResult status{};
  BENCH_CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, &found, version, cudaEnableDefault, &status));
  if (status != cudaDriverEntryPointSuccess || found == nullptr) {
    std::fprintf(stderr, "the CUDA driver has no %s (version %u): status %d\n", symbol, version,
                 static_cast<int>(status));
    std::exit(1);
  }
  function = reinterpret_cast<Function>(found);
}

#define BENCH_CU_CHECK(expr)                                                                                          \
  ::bench::check<CUresult>((expr), CUDA_SUCCESS, "CUDA driver", #expr, [](CUresult) { return "CUresult"; }, __FILE__, \
                           __LINE__)

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

/// The name of a captured kernel node's kernel, its grid and block.
std::string describe_node(cudaGraphNode_t node) {
  CUDA_KERNEL_NODE_PARAMS params{};
  BENCH_CU_CHECK(driver.kernel_node_params(reinterpret_cast<CUgraphNode>(node), &params));
  const char* name = nullptr;
  if (params.func != nullptr)
    BENCH_CU_CHECK(driver.function_name(&name, params.func));
  else
    BENCH_CU_CHECK(driver.kernel_name(&name, params.kern));
  std::string text = name != nullptr ? name : "(unnamed)";
  if (text.size() > 72) text = text.substr(0, 69) + "...";
  char shape[96];
  std::snprintf(shape, sizeof shape, " grid (%u, %u, %u) block (%u, %u, %u)", params.gridDimX, params.gridDimY,
                params.gridDimZ, params.blockDimX, params.blockDimY, params.blockDimZ);
  return text + shape;
}

/// Median time of `graph` launched alone on `stream`.
double graph_ms(cudaGraph_t graph, cudaStream_t stream, int reps) {
  cudaGraphExec_t exec = nullptr;
  BENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const double ms = bench::gpu_median_ms(stream, 3, reps, [&] { BENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream)); });
  BENCH_CUDA_CHECK(cudaGraphExecDestroy(exec));
  return ms;
}

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

  cudaGraph_t graph = nullptr;
  BENCH_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  forward();
  BENCH_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  std::size_t count = 0;
  BENCH_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  BENCH_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  const double gib = static_cast<double>(l.elements) * sizeof(cufftComplex) / (1024.0 * 1024.0 * 1024.0);
  std::printf("%s: %.3f ms per forward (%.2f GiB in place, work area %zu bytes), %zu graph nodes\n", l.name.c_str(),
              whole, gib, work, count);
  int passes = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    BENCH_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type != cudaGraphNodeTypeKernel) {
      std::printf("  node of type %d (not a kernel)\n", static_cast<int>(type));
      continue;
    }
    ++passes;
    // The node alone: a clone of the graph with every other node removed (its arguments point at this plan's
    // buffers). Not a new graph from the node's parameters: the runtime cannot name cuFFT's kernels
    // (cudaGraphKernelNodeGetParams returns cudaErrorInvalidDeviceFunction for them).
    cudaGraph_t single = nullptr;
    BENCH_CUDA_CHECK(cudaGraphClone(&single, graph));
    for (cudaGraphNode_t other : nodes) {
      if (other == node) continue;
      cudaGraphNode_t in_clone = nullptr;
      BENCH_CUDA_CHECK(cudaGraphNodeFindInClone(&in_clone, other, single));
      BENCH_CUDA_CHECK(cudaGraphDestroyNode(in_clone));
    }
    const double ms = graph_ms(single, stream, reps);
    BENCH_CUDA_CHECK(cudaGraphDestroy(single));
    std::printf("  pass %d: %7.3f ms, %6.0f GB/s if it reads and writes the buffer once   %s\n", passes, ms,
                2.0 * static_cast<double>(l.elements) * sizeof(cufftComplex) / (ms * 1e6), describe_node(node).c_str());
  }
  std::printf("  %d pass(es)\n", passes);
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
  entry_point("cuGraphKernelNodeGetParams", 12000, driver.kernel_node_params);
  entry_point("cuFuncGetName", 12030, driver.function_name);
  entry_point("cuKernelGetName", 12030, driver.kernel_name);
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
