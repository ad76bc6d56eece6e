// SPDX-License-Identifier: Apache-2.0
// Matmul benchmarks: each figure is a ratio measured in the same run against the raw library on random data.
//  (a) cuplan execute vs raw cublasLtMatmul (first heuristic, and best of its top 8), bf16/f16/tf32/f32
//  (b) cuplan after autotune vs best of top 8
//  (c) fused matmul + bias + gelu vs matmul then a separate bias + gelu kernel (bf16 4096^2)
//  (d) host cost per execute call (64^3), allocating or into a preallocated out, vs a bare cublasLtMatmul call
//  (e) CPU execution vs a bare OpenBLAS sgemm
// GPU times are per call, from batches of back-to-back calls between two events (one call per event pair would
// count the host's launch cost as GPU time for small products); cuplan executes into a preallocated output like
// the raw side, and the allocating variant is reported next to it.
// Usage: matmul_bench [--quick] [--csv PATH]; --csv also writes the figures as CSV (bench/support/bench_csv.hpp),
// one row per variant against its baseline.
// Host code only (C++): the unfused bias + gelu baseline kernel is bench/support/bias_gelu.cu.
#include <cblas.h>
#include <cublasLt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "support/bench_check.hpp"
#include "support/bench_csv.hpp"
#include "support/bias_gelu.hpp"
#include "support/fft_timing.hpp"

namespace cp = cuplan;

namespace {

int reps = 20;

/// A device tensor of random values in [-1, 1) (never zeros): made on the host, copied once.
cp::Tensor random_tensor(cp::Shape shape, cp::DType t, std::uint32_t seed) {
  auto host = cp::Tensor::empty(shape, t, cp::Device::cpu());
  const auto n = host.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    const float v = static_cast<float>(h) / 4294967296.0f * 2.0f - 1.0f;
    if (t == cp::bf16)
      host.data<__nv_bfloat16>()[i] = __float2bfloat16(v);
    else if (t == cp::f16)
      host.data<__half>()[i] = __float2half(v);
    else
      host.data<float>()[i] = v;
  }
  return host.to(cp::Device::cuda(0));
}

/// Milliseconds per call of `f` on stream `s`: the median over `reps` batches of `calls` back-to-back calls, each
/// batch between two events (so that the host's launch cost overlaps GPU work, as in real use), after warm-up.
template <class F>
float time_ms(cudaStream_t s, int calls, F&& f) {
  for (int i = 0; i < 3; ++i) f();
  const double batch_ms = bench::gpu_median_ms(s, 0, reps, [&] {
    for (int i = 0; i < calls; ++i) f();
  });
  return static_cast<float>(batch_ms / calls);
}

/// Calls per timed batch for a product of about `ms_per_call`: enough for ~2 ms of GPU work per batch, at least 10,
/// and at most 200 (well inside the launch queue, so the host never waits for it).
int calls_for(float ms_per_call) {
  return std::clamp(static_cast<int>(2.0f / std::max(ms_per_call, 1e-4f)) + 1, 10, 200);
}

/// Milliseconds per call of each of `fs`, measured interleaved: every round times one batch of `calls` calls of each
/// function, in a rotating order, so that clock and temperature drift during the run affects all of them alike.
/// Returns the median per function over `rounds` rounds (default `reps`).
std::vector<float> time_ms_interleaved(cudaStream_t s, int calls, const std::vector<std::function<void()>>& fs,
                                       int rounds = 0) {
  if (rounds <= 0) rounds = reps;
  for (const auto& f : fs)
    for (int i = 0; i < 3; ++i) f();
  cudaEvent_t a, b;
  BENCH_CUDA_CHECK(cudaEventCreate(&a));
  BENCH_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<std::vector<float>> t(fs.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t j = 0; j < fs.size(); ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(r)) % fs.size();
      BENCH_CUDA_CHECK(cudaEventRecord(a, s));
      for (int i = 0; i < calls; ++i) fs[k]();
      BENCH_CUDA_CHECK(cudaEventRecord(b, s));
      BENCH_CUDA_CHECK(cudaEventSynchronize(b));
      float ms = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      t[k].push_back(ms / static_cast<float>(calls));
    }
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::vector<float> medians;
  for (auto& v : t) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    medians.push_back(v[v.size() / 2]);
  }
  return medians;
}

cudaDataType_t lt_type(cp::DType t) {
  return t == cp::bf16 ? CUDA_R_16BF : (t == cp::f16 ? CUDA_R_16F : CUDA_R_32F);
}

/// The raw baseline: row-major D = A B computed as column-major D^T = B^T A^T, as any cuBLASLt user would.
struct RawLt {
  cublasLtHandle_t handle{};
  cublasLtMatmulDesc_t desc{};
  cublasLtMatrixLayout_t la{}, lb{}, ld{};
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  void* workspace = nullptr;
  std::size_t ws = 32u << 20;
  float alpha = 1, beta = 0;
  RawLt(cp::DType t, bool tf32, std::int64_t m, std::int64_t n, std::int64_t k) {
    BENCH_CUBLAS_CHECK(cublasLtCreate(&handle));
    BENCH_CUBLAS_CHECK(
        cublasLtMatmulDescCreate(&desc, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F));
    BENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la, lt_type(t), n, k, n));  // B row-major = B^T col-major
    BENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb, lt_type(t), k, m, k));  // A row-major = A^T col-major
    BENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&ld, lt_type(t), n, m, n));
    cublasLtMatmulPreference_t pref;
    BENCH_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    BENCH_CUBLAS_CHECK(
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    algos.resize(8);
    int found = 0;
    BENCH_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, ld, ld, pref, 8, algos.data(), &found));
    algos.resize(static_cast<std::size_t>(found));
    cublasLtMatmulPreferenceDestroy(pref);
    BENCH_CUDA_CHECK(cudaMalloc(&workspace, ws));
  }
  ~RawLt() {
    cudaFree(workspace);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(handle);
  }
  /// "algo/tile/stages/split-k" of candidate i, as AlgorithmInfo reports it for cuplan's candidates.
  std::string config(std::size_t i) const {
    std::int32_t id = 0, split_k = 1;
    std::uint32_t tile = 0, stages = 0;
    std::size_t written = 0;
    const auto& algo = algos[i].algo;
    BENCH_CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), &written));
    BENCH_CUBLAS_CHECK(
        cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), &written));
    BENCH_CUBLAS_CHECK(
        cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof(stages), &written));
    BENCH_CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split_k,
                                                            sizeof(split_k), &written));
    return std::to_string(id) + "/" + std::to_string(tile) + "/" + std::to_string(stages) + "/" +
           std::to_string(split_k);
  }
  void run(const void* a, const void* b, void* d, cudaStream_t s, std::size_t i = 0) {
    BENCH_CUBLAS_CHECK(
        cublasLtMatmul(handle, desc, &alpha, b, la, a, lb, &beta, d, ld, d, ld, &algos[i].algo, workspace, ws, s));
  }
  /// The first candidate's call captured once into a CUDA graph, as a user replaying it by hand would.
  cudaGraphExec_t capture(const void* a, const void* b, void* d) {
    cudaStream_t s = nullptr;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    BENCH_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    run(a, b, d, s);
    BENCH_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    BENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    BENCH_CUDA_CHECK(cudaGraphDestroy(graph));
    BENCH_CUDA_CHECK(cudaStreamDestroy(s));
    return exec;
  }
};

// Problem shapes and element kinds of (a); at namespace scope (nvcc rejects local types in std::vector).
struct Shape3 {
  std::int64_t m, n, k;
};
struct Kind {
  const char* name;
  cp::DType t;
  bool tf32;
};

void bench_products(bool quick, bench::Csv& csv) {
  std::vector<Shape3> shapes = {
      {1024, 1024, 1024}, {4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 8192, 64}, {64, 8192, 8192}};
  if (quick) shapes = {{1024, 1024, 1024}, {4096, 4096, 4096}, {8192, 8192, 64}};
  std::vector<Kind> kinds = {
      {"bf16", cp::bf16, false}, {"f16", cp::f16, false}, {"tf32", cp::f32, true}, {"f32", cp::f32, false}};
  std::printf(
      "\n(a)/(b) cuplan vs raw cuBLASLt (ms per call: median of %d interleaved batches of back-to-back calls; ratio "
      "= raw / cuplan, >= 1 means cuplan is as fast). cuplan executes into the same preallocated out as raw; "
      "'alloc' is execute allocating its result. Both sides run the same form: row-major D as column-major "
      "D^T = B^T A^T, no transposes. cuplan, alloc, raw1st and rawgraph (raw's first candidate captured once in a "
      "CUDA graph and replayed, as cuplan replays repeated executes; vsgraph = rawgraph / cuplan) are timed "
      "together; rawbest8 (the fastest of raw's top 8), cuplan as planned (a:best8) and a second object after "
      "autotune (b:best8) are timed together. 1st: cuplan's first candidate is raw's first "
      "(algo/tile/stages/split-k); tuned: the autotuned object's first is raw's best of 8\n",
      2 * reps);
  std::printf("%-5s %-18s %5s %9s %9s %9s %9s %9s %9s %8s %8s %8s %8s %-9s %s\n", "type", "M x N x K", "calls",
              "cuplan", "alloc", "raw1st", "rawgraph", "rawbest8", "autotuned", "a:1st", "a:best8", "b:best8",
              "vsgraph", "1st", "tuned");
  cp::Stream stream;
  cudaStream_t s = stream.native();
  {
    // Bring the GPU to its steady clocks before the first row is timed (~0.3 s of bf16 4096^3 products).
    auto a = random_tensor({4096, 4096}, cp::bf16, 7), b = random_tensor({4096, 4096}, cp::bf16, 8);
    cp::Matmul warm(a, b);
    warm.plan({.stream = stream});
    auto d = cp::Tensor::empty({4096, 4096}, cp::bf16, cp::Device::cuda(0), stream);
    for (int i = 0; i < 1500; ++i) (void)warm.execute({.stream = stream, .out = d.view()});
    stream.synchronize();
  }
  for (const auto& kind : kinds)
    for (const auto& sh : shapes) {
      cp::StreamScope scope(stream);
      auto a = random_tensor({sh.m, sh.k}, kind.t, 1), b = random_tensor({sh.k, sh.n}, kind.t, 2);
      auto d = cp::Tensor::empty({sh.m, sh.n}, kind.t, cp::Device::cuda(0), stream);
      const cp::MatmulOptions options{.compute = kind.tf32 ? cp::Compute::tf32 : cp::Compute::automatic};
      cp::Matmul mm(a, b, options), tuned_mm(a, b, options);
      mm.plan({.stream = stream});
      tuned_mm.plan({.stream = stream});
      RawLt raw(kind.t, kind.tf32, sh.m, sh.n, sh.k);
      const std::string ours_first = mm.algorithms()[0].description;
      const std::string raw_first = raw.config(0);
      // cuplan's D for epilog none is row-major M x N, exactly as `d`: both sides write the same memory.
      const cp::MatmulExecuteOptions into{.stream = stream, .out = d.view()};
      const int calls = calls_for(time_ms(s, 10, [&] { raw.run(a.data(), b.data(), d.data(), s); }));
      // Head to head, interleaved (see time_ms_interleaved) over twice the rounds: cuplan, cuplan allocating, raw's
      // first choice replayed from a graph, raw's first choice called directly.
      const cudaGraphExec_t raw_graph = raw.capture(a.data(), b.data(), d.data());
      const std::vector<float> head = time_ms_interleaved(
          s, calls,
          {[&] { (void)mm.execute(into); }, [&] { (void)mm.execute({.stream = stream}); },
           [&] { BENCH_CUDA_CHECK(cudaGraphLaunch(raw_graph, s)); }, [&] { raw.run(a.data(), b.data(), d.data(), s); }},
          2 * reps);
      BENCH_CUDA_CHECK(cudaGraphExecDestroy(raw_graph));
      const float ours = head[0], alloc = head[1], graph = head[2], first = head[3];
      // Raw's best of its top 8 (interleaved among themselves).
      std::vector<std::function<void()>> candidates;
      std::vector<std::size_t> raw_index;
      for (std::size_t i = 0; i < raw.algos.size(); ++i) {
        if (raw.algos[i].workspaceSize > raw.ws) continue;
        raw_index.push_back(i);
        candidates.push_back([&, i] { raw.run(a.data(), b.data(), d.data(), s, i); });
      }
      const std::vector<float> times = time_ms_interleaved(s, calls, candidates);
      const std::size_t best_raw =
          raw_index[static_cast<std::size_t>(std::min_element(times.begin(), times.end()) - times.begin())];
      tuned_mm.autotune({.iterations = 7, .stream = stream});
      // cuplan as planned and after autotune against raw's best, interleaved.
      const std::vector<float> after =
          time_ms_interleaved(s, calls,
                              {[&] { (void)mm.execute(into); }, [&] { (void)tuned_mm.execute(into); },
                               [&] { raw.run(a.data(), b.data(), d.data(), s, best_raw); }},
                              2 * reps);
      const float planned = after[0], tuned = after[1], best = after[2];
      // AlgorithmInfo::description begins "algo <id> tile <t> stages <s> split-k <k>", RawLt::config gives
      // "id/tile/stages/split-k".
      auto config_of = [](const std::string& description) {
        int id = 0, tile = 0, stages = 0, split = 0;  // split-k -1: cuBLASLt chooses it (as RawLt::config prints)
        std::sscanf(description.c_str(), "algo %d tile %d stages %d split-k %d", &id, &tile, &stages, &split);
        return std::to_string(id) + "/" + std::to_string(tile) + "/" + std::to_string(stages) + "/" +
               std::to_string(split);
      };
      const std::string tuned_first = config_of(tuned_mm.algorithms()[0].description);
      const std::string raw_best = raw.config(best_raw);
      std::printf(
          "%-5s %5lld x %5lld x %5lld %5d %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f %8.3f %8.3f %8.3f %8.3f %-9s %s\n",
          kind.name, (long long)sh.m, (long long)sh.n, (long long)sh.k, calls, ours, alloc, first, graph, best, tuned,
          first / ours, best / planned, best / tuned, graph / ours,
          config_of(ours_first) == raw_first ? "same" : ("raw " + raw_first).c_str(),
          tuned_first == raw_best ? "same" : ("ours " + tuned_first + " raw " + raw_best).c_str());
      const std::string what =
          std::string(kind.name) + " " + std::to_string(sh.m) + "x" + std::to_string(sh.n) + "x" + std::to_string(sh.k);
      csv.row("a", what, "execute into out", ours, "ms", "raw first choice", first);
      csv.row("a", what, "execute allocating", alloc, "ms", "raw first choice", first);
      csv.row("a", what, "execute into out", ours, "ms", "raw graph replay", graph);
      csv.row("a", what, "execute into out, as planned", planned, "ms", "raw best of 8", best);
      csv.row("b", what, "execute into out, autotuned", tuned, "ms", "raw best of 8", best);
    }
}

void bench_fused(bench::Csv& csv) {
  const std::int64_t n = 4096;
  cp::Stream stream;
  cp::StreamScope scope(stream);
  cudaStream_t s = stream.native();
  auto a = random_tensor({n, n}, cp::bf16, 3), b = random_tensor({n, n}, cp::bf16, 4),
       bias = random_tensor({n}, cp::bf16, 5);
  // Fused: gelu_bias runs in cuBLASLt's native form and writes a column-major D.
  cp::Matmul fused(a, b, {.epilog = cp::Epilog::gelu_bias, .bias = bias});
  fused.plan({.stream = stream});
  fused.autotune({.iterations = 5, .stream = stream});
  const cp::Tensor fused_d = fused.execute({.stream = stream});
  const bool native = fused_d.strides()[0] == 1 && fused_d.strides()[1] == n;
  // Unfused baseline: the fastest plain matmul available (cuplan autotuned, or raw cuBLASLt's best of its top 8;
  // both row-major D) followed by the separate bias + gelu kernel on row-major D.
  cp::Matmul plain(a, b);
  plain.plan({.stream = stream});
  plain.autotune({.iterations = 5, .stream = stream});
  const cp::Tensor plain_d = plain.execute({.stream = stream});
  RawLt raw(cp::bf16, false, n, n, n);
  cp::Tensor raw_d = cp::Tensor::empty({n, n}, cp::bf16, cp::Device::cuda(0), stream);
  const cp::MatmulExecuteOptions fused_opts{.stream = stream, .out = fused_d.view()};
  const cp::MatmulExecuteOptions plain_opts{.stream = stream, .out = plain_d.view()};
  const int calls = 20;  // ~0.2 ms per call: 4 ms batches
  // Raw's best plain candidate first, then the fused product and both unfused baselines timed interleaved.
  float t_raw_best = time_ms(s, calls, [&] { raw.run(a.data(), b.data(), raw_d.data(), s); });
  std::size_t raw_best = 0;
  for (std::size_t i = 1; i < raw.algos.size(); ++i) {
    if (raw.algos[i].workspaceSize > raw.ws) continue;
    const float t = time_ms(s, calls, [&] { raw.run(a.data(), b.data(), raw_d.data(), s, i); });
    if (t < t_raw_best) {
      t_raw_best = t;
      raw_best = i;
    }
  }
  const std::vector<float> t =
      time_ms_interleaved(s, calls,
                          {[&] { (void)fused.execute(fused_opts); },
                           [&] {
                             (void)plain.execute(plain_opts);
                             bench::launch_bias_gelu(plain_d.data(), bias.data(), cp::bf16, n, n, s);
                           },
                           [&] {
                             raw.run(a.data(), b.data(), raw_d.data(), s, raw_best);
                             bench::launch_bias_gelu(raw_d.data(), bias.data(), cp::bf16, n, n, s);
                           }},
                          2 * reps);
  const float t_fused = t[0], t_split_cuplan = t[1], t_split_raw = t[2];
  const float t_split = std::min(t_split_cuplan, t_split_raw);
  std::printf(
      "\n(c) bf16 %lld^2 matmul+bias+gelu: fused %.4f ms (%s D; %s), matmul then kernel %.4f ms (cuplan autotuned "
      "%.4f, raw best of 8 %.4f), speed-up %.3fx\n",
      (long long)n, t_fused, native ? "column-major" : "row-major", fused.algorithms()[0].description.c_str(), t_split,
      t_split_cuplan, t_split_raw, t_split / t_fused);
  csv.row("c", "bf16 " + std::to_string(n) + "^2 matmul+bias+gelu", "fused epilog", t_fused, "ms",
          "matmul then bias+gelu kernel", t_split);
}

void bench_host_cost(bench::Csv& csv) {
  const std::int64_t n = 64;
  // Batches well below the GPU's launch queue depth (~1000 entries), synchronised in between: a full queue would
  // make the host wait for the GPU, and the figure would be GPU time, not host cost.
  const int calls = 200, batches = 60;
  cp::Stream stream;
  cp::StreamScope scope(stream);
  cudaStream_t s = stream.native();
  auto a = random_tensor({n, n}, cp::f32, 6), b = random_tensor({n, n}, cp::f32, 7);
  auto d = cp::Tensor::empty({n, n}, cp::f32, cp::Device::cuda(0), stream);
  cp::Matmul mm(a, b), direct(a, b, {.graph_replay = false});
  mm.plan({.stream = stream});
  direct.plan({.stream = stream});
  RawLt raw(cp::f32, false, n, n, n);
  // Rounds of one batch of each variant, in rotating order, so that drift of the host's clock affects all alike.
  const cp::MatmulExecuteOptions opts{.stream = stream};
  const cp::MatmulExecuteOptions into_d{.stream = stream, .out = d.view()};
  const std::vector<std::function<void()>> variants = {
      [&] { raw.run(a.data(), b.data(), d.data(), s); }, [&] { (void)mm.execute(into_d); },
      [&] { (void)mm.execute(opts); }, [&] { (void)direct.execute(into_d); }};
  std::vector<std::vector<double>> samples(variants.size());
  for (const auto& f : variants)
    for (int i = 0; i < calls; ++i) f();  // warm-up
  for (int r = 0; r < batches; ++r) {
    for (std::size_t j = 0; j < variants.size(); ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(r)) % variants.size();
      BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) variants[k]();
      const auto t1 = std::chrono::steady_clock::now();
      samples[k].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    }
  }
  BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const double bare = median(samples[0]), ours_out = median(samples[1]), ours = median(samples[2]),
               ours_direct = median(samples[3]);
  std::printf(
      "\n(d) host cost per call, 64^3 f32 (median of %d batches of %d calls): bare cublasLtMatmul %.3f us; execute "
      "into a preallocated out %.3f us (%+.3f us, graph replay); the same with graph_replay = false %.3f us "
      "(%+.3f us); execute allocating its result %.3f us (%+.3f us)\n",
      batches, calls, bare, ours_out, ours_out - bare, ours_direct, ours_direct - bare, ours, ours - bare);
  const std::string what = "f32 " + std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
  csv.row("d", what, "execute into out (graph replay)", ours_out, "us", "cublasLtMatmul", bare);
  csv.row("d", what, "execute into out, graph_replay = false", ours_direct, "us", "cublasLtMatmul", bare);
  csv.row("d", what, "execute allocating", ours, "us", "cublasLtMatmul", bare);
}

void bench_cpu(bool quick, bench::Csv& csv) {
  const std::int64_t n = quick ? 256 : 1024;
  std::vector<float> a(n * n), b(n * n), d(n * n);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>((i * 2654435761u) % 1000) / 500.0f - 1.0f;
    b[i] = static_cast<float>((i * 40503u) % 1000) / 500.0f - 1.0f;
  }
  cp::Matmul mm(cp::TensorView(a.data(), {n, n}), cp::TensorView(b.data(), {n, n}),
                {.execution = cp::Execution::cpu()});
  mm.plan();
  // Interleaved rounds (one call of each variant per round, in rotating order) after one warm-up call each;
  // cuplan writes into its own preallocated out like the raw call, and the allocating form is reported beside it.
  std::vector<float> ours_d(d.size());
  const cp::MatmulExecuteOptions into{.out = cp::TensorView(ours_d.data(), {n, n})};
  const std::vector<std::function<void()>> variants = {[&] { (void)mm.execute(into); }, [&] { (void)mm.execute(); },
                                                       [&] {
                                                         cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n,
                                                                     1.0f, a.data(), n, b.data(), n, 0.0f, d.data(), n);
                                                       }};
  std::vector<std::vector<double>> t(variants.size());
  for (const auto& f : variants) f();
  for (int r = 0; r < 2 * reps; ++r)
    for (std::size_t j = 0; j < variants.size(); ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(r)) % variants.size();
      const auto t0 = std::chrono::steady_clock::now();
      variants[k]();
      t[k].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  std::vector<double> medians;
  for (auto& v : t) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    medians.push_back(v[v.size() / 2]);
  }
  const double ours = medians[0], alloc = medians[1], raw = medians[2];
  std::printf(
      "\n(e) CPU f32 %lld^3: cuplan into out %.3f ms, raw OpenBLAS sgemm %.3f ms, ratio raw/cuplan %.3f; cuplan "
      "allocating its result %.3f ms (ratio %.3f)\n",
      (long long)n, ours, raw, raw / ours, alloc, raw / alloc);
  const std::string what = "CPU f32 " + std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
  csv.row("e", what, "execute into out", ours, "ms", "cblas_sgemm", raw);
  csv.row("e", what, "execute allocating", alloc, "ms", "cblas_sgemm", raw);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options options = bench::parse_options(argc, argv);
  const bool quick = options.quick;
  if (quick) reps = 10;
  bench::Csv csv(options.csv, "matmul");
  bench_cpu(quick, csv);
  if (!cp::cuda_available()) {
    std::printf("no CUDA device: GPU benchmarks (a)-(d) skipped\n");
    return 0;
  }
  bench_host_cost(csv);
  bench_fused(csv);
  bench_products(quick, csv);
  return 0;
}
