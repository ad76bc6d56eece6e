// SPDX-License-Identifier: Apache-2.0
// Where the host time of one Matmul::execute goes, for a 64^3 f32 product: the same cublasLtMatmul call made with
// the raw user's descriptors, with descriptors that differ from them in one respect each, with cuplan's own plan
// (LtPlan::run), and through Matmul::execute. Each figure is host microseconds per call, median of interleaved
// batches; the differences between rows say which part of the path costs what.
// Usage: matmul_host_cost_bench
#include <cublasLt.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "matmul/cublaslt/cublaslt_backend.hpp"
#include "matmul/cublaslt/cublaslt_check.hpp"
#include "matmul/planner.hpp"
#include "plan/stateful.hpp"

namespace cp = cuplan;
namespace mm = cuplan::detail::mm;

namespace {

constexpr std::int64_t n = 64;

/// Raw descriptors for row-major D = A B as column-major D^T = B^T A^T, with the knobs that cuplan's plan sets.
struct RawVariant {
  cublasLtHandle_t handle{};
  bool own_handle = false;
  cublasLtMatmulDesc_t desc{};
  cublasLtMatrixLayout_t la{}, lb{}, lc{}, ld{};
  cublasLtMatmulHeuristicResult_t algo{};
  void* workspace = nullptr;
  std::size_t ws = 0;
  float alpha = 1, beta = 0;

  struct Knobs {
    bool explicit_attributes = false;  // TRANSA / TRANSB / EPILOGUE written although they are the defaults
    bool separate_c_layout = false;    // C and D described by two equal layout objects
    bool exact_workspace = false;      // pass the algorithm's own workspace size instead of the 32 MiB offered
    bool library_handle = false;       // cuplan's per-device handle
    std::int64_t size = n;             // M = N = K
    cudaDataType_t type = CUDA_R_32F;
  };

  explicit RawVariant(Knobs k) {
    if (k.library_handle) {
      handle = mm::lt_handle(0);
    } else {
      CUPLAN_CUBLAS_CHECK(cublasLtCreate(&handle));
      own_handle = true;
    }
    CUPLAN_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    if (k.explicit_attributes) {
      const std::int32_t op = CUBLAS_OP_N;
      const std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
      CUPLAN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof(op)));
      CUPLAN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op, sizeof(op)));
      CUPLAN_CUBLAS_CHECK(
          cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    }
    const auto z = static_cast<std::uint64_t>(k.size);
    CUPLAN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la, k.type, z, z, k.size));
    CUPLAN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb, k.type, z, z, k.size));
    CUPLAN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&ld, k.type, z, z, k.size));
    if (k.separate_c_layout)
      CUPLAN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc, k.type, z, z, k.size));
    else
      lc = ld;
    cublasLtMatmulPreference_t pref;
    const std::size_t offered = 32u << 20;
    CUPLAN_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    CUPLAN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &offered,
                                                             sizeof(offered)));
    int found = 0;
    CUPLAN_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, ld, pref, 1, &algo, &found));
    cublasLtMatmulPreferenceDestroy(pref);
    if (found < 1) throw std::runtime_error("no cuBLASLt algorithm for 64^3 f32");
    ws = k.exact_workspace ? algo.workspaceSize : offered;
    if (ws > 0) CUPLAN_CUDA_CHECK(cudaMalloc(&workspace, ws));
  }
  ~RawVariant() {
    cudaFree(workspace);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    if (lc != ld) cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(desc);
    if (own_handle) cublasLtDestroy(handle);
  }
  void run(const void* a, const void* b, void* d, cudaStream_t s) const {
    CUPLAN_CUBLAS_CHECK(
        cublasLtMatmul(handle, desc, &alpha, b, la, a, lb, &beta, d, lc, d, ld, &algo.algo, workspace, ws, s));
  }
  std::size_t algorithm_workspace() const { return algo.workspaceSize; }
};

/// The graph of one run of `v` on `a`, `b` and `d`, captured on `stream`.
cudaGraph_t capture_run(const RawVariant& v, const void* a, const void* b, void* d, cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  CUPLAN_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  v.run(a, b, d, stream);
  CUPLAN_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  return graph;
}

/// A device tensor of random values in [-1, 1) (never zeros), f32 or bf16.
cp::Tensor random_tensor(cp::Shape shape, std::uint32_t seed, cp::DType t = cp::f32) {
  auto host = cp::Tensor::empty(shape, t, cp::Device::cpu());
  for (std::int64_t i = 0; i < host.numel(); ++i) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352du;
    const float v = static_cast<float>(h) / 4294967296.0f * 2.0f - 1.0f;
    if (t == cp::bf16)
      host.data<__nv_bfloat16>()[i] = __float2bfloat16(v);
    else
      host.data<float>()[i] = v;
  }
  return host.to(cp::Device::cuda(0));
}

}  // namespace

int main() {
  if (!cp::cuda_available()) {
    std::printf("no CUDA device: matmul host-cost breakdown skipped\n");
    return 0;
  }
  const int calls = 200, batches = 60;
  cp::Stream stream;
  cp::StreamScope scope(stream);
  const cudaStream_t s = stream.native();
  auto a = random_tensor({n, n}, 1), b = random_tensor({n, n}, 2);
  auto d = cp::Tensor::empty({n, n}, cp::f32, cp::Device::cuda(0), stream);

  cp::Matmul matmul(a, b);
  matmul.plan({.stream = stream});
  const cp::MatmulExecuteOptions into_d{.stream = stream, .out = d.view()};

  // cuplan's own plan, driven directly: the descriptors and candidate that Matmul::execute passes to cuBLASLt.
  mm::ProblemSpec spec;  // fields set one by one: a partial designated initializer trips -Wmissing-field-initializers
  spec.a = a.view();
  spec.b = b.view();
  spec.route.aux_layout = mm::AuxLayout::cublaslt;
  const mm::Problem problem = mm::plan_problem(spec, "bench");
  mm::LtPlan plan(problem, 0, 1.0, 0.0, false, "bench");
  mm::LtPointers pointers{.a = a.data(), .b = b.data(), .d = d.data()};
  plan.find_algorithms({}, std::size_t{32} << 20, false, pointers);
  void* plan_workspace = nullptr;
  if (plan.workspace_bytes() > 0) CUPLAN_CUDA_CHECK(cudaMalloc(&plan_workspace, plan.workspace_bytes()));

  const RawVariant raw({});
  const RawVariant attrs({.explicit_attributes = true});
  const RawVariant separate_c({.separate_c_layout = true});
  const RawVariant exact_ws({.exact_workspace = true});
  const RawVariant lib_handle({.library_handle = true});
  const RawVariant all(
      {.explicit_attributes = true, .separate_c_layout = true, .exact_workspace = true, .library_handle = true});

  // The raw call captured once into a CUDA graph and replayed: the host cost of a graph launch.
  cudaStream_t capture_stream = nullptr;
  CUPLAN_CUDA_CHECK(cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking));
  cudaGraph_t graph = capture_run(raw, a.data(), b.data(), d.data(), capture_stream);
  cudaGraphExec_t graph_exec = nullptr;
  CUPLAN_CUDA_CHECK(cudaGraphInstantiate(&graph_exec, graph, 0));
  std::size_t nodes = 0;
  CUPLAN_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));

  cuplan::detail::PhaseOrder order;
  const cp::StreamRef ref = stream;
  struct Variant {
    const char* name;
    std::function<void()> call;
  };
  const std::vector<Variant> variants = {
      {"raw cublasLtMatmul (user's descriptors, 32 MiB workspace)", [&] { raw.run(a.data(), b.data(), d.data(), s); }},
      {"raw + TRANSA/TRANSB/EPILOGUE set explicitly", [&] { attrs.run(a.data(), b.data(), d.data(), s); }},
      {"raw + C and D as two layout objects", [&] { separate_c.run(a.data(), b.data(), d.data(), s); }},
      {"raw + the algorithm's exact workspace size", [&] { exact_ws.run(a.data(), b.data(), d.data(), s); }},
      {"raw + cuplan's per-device handle", [&] { lib_handle.run(a.data(), b.data(), d.data(), s); }},
      {"raw + all four of the above", [&] { all.run(a.data(), b.data(), d.data(), s); }},
      {"cuplan LtPlan::run (its descriptors, no wrapper)",
       [&] { plan.run(pointers, s, plan_workspace, plan.workspace_bytes()); }},
      {"cuplan PhaseOrder begin+end + LtPlan::run",
       [&] {
         order.begin(ref, {}, 0);
         plan.run(pointers, s, plan_workspace, plan.workspace_bytes());
         order.end(ref);
       }},
      {"cuplan Matmul::execute into out", [&] { (void)matmul.execute(into_d); }},
      {"raw call replayed as a CUDA graph (cudaGraphLaunch)",
       [&] { CUPLAN_CUDA_CHECK(cudaGraphLaunch(graph_exec, s)); }},
      {"cudaStreamIsCapturing + raw call",
       [&] {
         cudaStreamCaptureStatus status;
         CUPLAN_CUDA_CHECK(cudaStreamIsCapturing(s, &status));
         raw.run(a.data(), b.data(), d.data(), s);
       }},
  };

  std::vector<std::vector<double>> samples(variants.size());
  for (const auto& v : variants)
    for (int i = 0; i < calls; ++i) v.call();
  for (int r = 0; r < batches; ++r) {
    for (std::size_t j = 0; j < variants.size(); ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(r)) % variants.size();
      CUPLAN_CUDA_CHECK(cudaStreamSynchronize(s));
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) variants[k].call();
      const auto t1 = std::chrono::steady_clock::now();
      samples[k].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    }
  }
  CUPLAN_CUDA_CHECK(cudaStreamSynchronize(s));
  cudaFree(plan_workspace);

  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  std::printf("graph of the raw call: %zu node(s)\n", nodes);
  cudaGraphExecDestroy(graph_exec);
  cudaGraphDestroy(graph);
  std::printf("raw algorithm workspace %zu B; cuplan candidate: %s\n", raw.algorithm_workspace(),
              matmul.algorithms()[0].description.c_str());
  std::printf("host us per call, 64^3 f32, median of %d interleaved batches of %d calls\n", batches, calls);
  const double base = median(samples[0]);
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const double m = median(samples[i]);
    std::printf("  %-58s %7.3f  %+7.3f\n", variants[i].name, m, m - base);
  }

  // GPU-side: bf16 1024^3 back to back (batches of 200 calls between two events, variants interleaved): direct raw
  // calls, replays of the raw call captured with the 32 MiB workspace and with the algorithm's exact workspace,
  // and cuplan's execute with and without graph replay. Where a variant's host cost per call is below the GPU time,
  // its figure is GPU time.
  {
    const std::int64_t big = 1024;
    const RawVariant lt({.size = big, .type = CUDA_R_16BF});
    const RawVariant lt_exact({.exact_workspace = true, .size = big, .type = CUDA_R_16BF});
    auto x = random_tensor({big, big}, 3, cp::bf16), y = random_tensor({big, big}, 4, cp::bf16);
    auto z = cp::Tensor::empty({big, big}, cp::bf16, cp::Device::cuda(0), stream);
    auto capture = [&](const RawVariant& v) {
      cudaGraph_t g = capture_run(v, x.data(), y.data(), z.data(), capture_stream);
      cudaGraphExec_t ge = nullptr;
      CUPLAN_CUDA_CHECK(cudaGraphInstantiate(&ge, g, 0));
      CUPLAN_CUDA_CHECK(cudaGraphDestroy(g));
      return ge;
    };
    const cudaGraphExec_t graph_32mib = capture(lt), graph_exact = capture(lt_exact);
    cp::Matmul replayed(x, y), direct(x, y, {.graph_replay = false});
    replayed.plan({.stream = stream});
    direct.plan({.stream = stream});
    const cp::MatmulExecuteOptions into_z{.stream = stream, .out = z.view()};
    const std::vector<Variant> gpu_variants = {
        {"raw cublasLtMatmul, direct", [&] { lt.run(x.data(), y.data(), z.data(), s); }},
        {"raw call in a graph, 32 MiB workspace", [&] { CUPLAN_CUDA_CHECK(cudaGraphLaunch(graph_32mib, s)); }},
        {"raw call in a graph, the algorithm's workspace", [&] { CUPLAN_CUDA_CHECK(cudaGraphLaunch(graph_exact, s)); }},
        {"cuplan execute (graph replay)", [&] { (void)replayed.execute(into_z); }},
        {"cuplan execute, graph_replay = false", [&] { (void)direct.execute(into_z); }},
    };
    cudaEvent_t e0, e1;
    CUPLAN_CUDA_CHECK(cudaEventCreate(&e0));
    CUPLAN_CUDA_CHECK(cudaEventCreate(&e1));
    std::vector<std::vector<double>> gpu(gpu_variants.size());
    for (const auto& v : gpu_variants)
      for (int i = 0; i < 10; ++i) v.call();
    for (int r = 0; r < batches; ++r) {
      for (std::size_t j = 0; j < gpu_variants.size(); ++j) {
        const std::size_t k = (j + static_cast<std::size_t>(r)) % gpu_variants.size();
        CUPLAN_CUDA_CHECK(cudaEventRecord(e0, s));
        for (int i = 0; i < calls; ++i) gpu_variants[k].call();
        CUPLAN_CUDA_CHECK(cudaEventRecord(e1, s));
        CUPLAN_CUDA_CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CUPLAN_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        gpu[k].push_back(ms * 1000.0 / calls);
      }
    }
    std::printf("bf16 1024^3 back to back, us per call (median of %d interleaved batches of %d calls)\n", batches,
                calls);
    for (std::size_t i = 0; i < gpu_variants.size(); ++i)
      std::printf("  %-58s %7.3f\n", gpu_variants[i].name, median(gpu[i]));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaGraphExecDestroy(graph_32mib);
    cudaGraphExecDestroy(graph_exact);
  }
  cudaStreamDestroy(capture_stream);
  return 0;
}
