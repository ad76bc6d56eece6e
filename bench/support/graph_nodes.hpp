// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel launches of one call, without a profiler (cufft_passes_bench, convolution_bench --nodes): the call is
// captured into a CUDA graph, each kernel node is named through the driver (its kernel, grid and block) and timed
// alone, as a clone of the graph with every other node removed (CUDA events, median after warm-up). Not a new graph
// built from the node's parameters: the runtime cannot read a library's kernel node (cudaGraphKernelNodeGetParams
// returns cudaErrorInvalidDeviceFunction for cuFFT's).

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "support/bench_check.hpp"
#include "support/fft_timing.hpp"

#define BENCH_CU_CHECK(expr)                                                                                          \
  ::bench::check<CUresult>((expr), CUDA_SUCCESS, "CUDA driver", #expr, [](CUresult) { return "CUresult"; }, __FILE__, \
                           __LINE__)

namespace bench {

/// The driver calls that name a captured kernel, looked up at run time (cudaGetDriverEntryPointByVersion), so that
/// a program does not link libcuda and starts, to say so, where no driver is installed.
struct GraphDriver {
  decltype(&::cuGraphKernelNodeGetParams) kernel_node_params = nullptr;
  decltype(&::cuFuncGetName) function_name = nullptr;
  decltype(&::cuKernelGetName) kernel_name = nullptr;
};

template <class Function>
void driver_entry_point(const char* symbol, unsigned version, Function& function) {
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

/// The entry points, looked up at the first use (a GPU and its driver are there by then).
inline const GraphDriver& graph_driver() {
  static const GraphDriver driver = [] {
    GraphDriver d;
    driver_entry_point("cuGraphKernelNodeGetParams", 12000, d.kernel_node_params);
    driver_entry_point("cuFuncGetName", 12030, d.function_name);
    driver_entry_point("cuKernelGetName", 12030, d.kernel_name);
    return d;
  }();
  return driver;
}

/// The name of a captured kernel node's kernel (cut to 72 characters), its grid and block.
inline std::string describe_kernel_node(cudaGraphNode_t node) {
  const GraphDriver& driver = graph_driver();
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
inline double graph_ms(cudaGraph_t graph, cudaStream_t stream, int reps) {
  cudaGraphExec_t exec = nullptr;
  BENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const double ms = gpu_median_ms(stream, 3, reps, [&] { BENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream)); });
  BENCH_CUDA_CHECK(cudaGraphExecDestroy(exec));
  return ms;
}

/// `call` captured on `stream` into a new graph, or null (said on stderr) where the capture failed.
inline cudaGraph_t capture_call(cudaStream_t stream, const std::function<void()>& call) {
  BENCH_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  std::string failure;
  try {
    call();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (failure.empty() && ended != cudaSuccess) failure = cudaGetErrorName(ended);
  if (!failure.empty()) {
    (void)cudaGetLastError();  // the capture's error, reported here
    if (graph != nullptr) BENCH_CUDA_CHECK(cudaGraphDestroy(graph));
    std::fprintf(stderr, "  the call could not be captured into a graph: %s\n", failure.c_str());
    return nullptr;
  }
  return graph;
}

/// Prints each kernel node of `graph`, timed alone, with the bandwidth it would reach reading and writing
/// `buffer_bytes` once (none where 0); returns the number of kernel nodes.
inline int print_kernel_nodes(cudaGraph_t graph, cudaStream_t stream, int reps, double buffer_bytes) {
  std::size_t count = 0;
  BENCH_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  BENCH_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  int kernels = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    BENCH_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type != cudaGraphNodeTypeKernel) {
      std::printf("  node of type %d (not a kernel)\n", static_cast<int>(type));
      continue;
    }
    ++kernels;
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
    if (buffer_bytes > 0)
      std::printf("  pass %d: %7.3f ms, %6.0f GB/s if it reads and writes the buffer once   %s\n", kernels, ms,
                  2.0 * buffer_bytes / (ms * 1e6), describe_kernel_node(node).c_str());
    else
      std::printf("  pass %d: %7.3f ms   %s\n", kernels, ms, describe_kernel_node(node).c_str());
  }
  std::printf("  %d pass(es) of %zu graph node(s)\n", kernels, count);
  return kernels;
}

}  // namespace bench
