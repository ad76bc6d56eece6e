// Host operands at PCIe speed (docs/staging.md): each row times a blocking cuplan call on host memory and sets it
// against a raw measurement of the same bytes taken in the same run. Random data, warm-up, median of the
// repetitions.
//
// Rows (select with --rows=<substring>):
//   fft_pageable / fft_pinned  FFT c64 [16384, 4096] over the last axis, host round trip: GB/s of operand per
//                              blocking execute, and the ratio against a bidirectional pinned cudaMemcpyAsync of the
//                              same bytes (H2D and D2H on two streams at once: the round trip's physical limit);
//   fft_out_of_core            a 4 GiB host operand under a 1 GiB device_memory_limit against the in-memory staged
//                              rate (the same transform of 512 MiB under the default limit);
//   matmul_bf16                bf16 8192^3 with host operands against the transfer limit (bytes of A, B and D at
//                              the PCIe rates measured in this run);
//   copy_h2d / copy_d2h        cuplan::copy of 512 MiB pageable memory against a plain cudaMemcpy;
//   small_fft / small_matmul   FFT 64x64 and matmul 64^3 with host operands against the device-operand call plus
//                              cudaMemcpy in and out ("no slower than before" compares this ratio across builds).
// --breakdown: for the 512 MiB FFT, time in result allocation and first touch, pool growth (first call against
// steady state), pageable copies (host threads into pinned memory), DMA, compute and synchronisation.
// --quick: fewer repetitions.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "support/bench_check.hpp"

namespace {

using namespace cuplan;
using Clock = std::chrono::steady_clock;
constexpr std::size_t MiB = std::size_t{1} << 20;

int g_reps = 15;
std::string g_rows;

bool selected(const char* row) {
  return g_rows.empty() || std::string(row).find(g_rows) != std::string::npos;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call: `warmup` untimed calls, then the median of g_reps timed ones.
double time_call(const std::function<void()>& call, int warmup = 2) {
  for (int i = 0; i < warmup; ++i) call();
  std::vector<double> t;
  for (int i = 0; i < g_reps; ++i) {
    const auto start = Clock::now();
    call();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(t);
}

// Random bytes, filled on all host threads (xorshift: the fill must not dominate the run).
void fill_random(void* data, std::size_t bytes) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([=] {
      const std::size_t words = bytes / 4, begin = words * t / threads, end = words * (t + 1) / threads;
      auto* p = static_cast<std::uint32_t*>(data);
      std::uint32_t x =
          0x9e3779b9u ^ (t * 0x85ebca6bu) ^ static_cast<std::uint32_t>(Clock::now().time_since_epoch().count());
      for (std::size_t i = begin; i < end; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        // Small finite floats (bf16 and f32 alike): exponent bits fixed, mantissa and sign random.
        p[i] = (x & 0x807f807fu) | 0x3c003c00u;
      }
    });
  for (auto& th : pool) th.join();
}

struct PinnedRates {
  double h2d = 0, d2h = 0, both = 0;  // seconds for `bytes` one way, the other way, and both at once
};

PinnedRates pinned_rates(std::size_t bytes) {
  void *host_a, *host_b, *dev_a, *dev_b;
  BENCH_CUDA_CHECK(cudaMallocHost(&host_a, bytes));
  BENCH_CUDA_CHECK(cudaMallocHost(&host_b, bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&dev_a, bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&dev_b, bytes));
  std::memset(host_a, 1, bytes);
  std::memset(host_b, 2, bytes);
  cudaStream_t s1, s2;
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  PinnedRates r;
  r.h2d = time_call([&] {
    BENCH_CUDA_CHECK(cudaMemcpyAsync(dev_a, host_a, bytes, cudaMemcpyHostToDevice, s1));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s1));
  });
  r.d2h = time_call([&] {
    BENCH_CUDA_CHECK(cudaMemcpyAsync(host_b, dev_b, bytes, cudaMemcpyDeviceToHost, s2));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s2));
  });
  r.both = time_call([&] {
    BENCH_CUDA_CHECK(cudaMemcpyAsync(dev_a, host_a, bytes, cudaMemcpyHostToDevice, s1));
    BENCH_CUDA_CHECK(cudaMemcpyAsync(host_b, dev_b, bytes, cudaMemcpyDeviceToHost, s2));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s1));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s2));
  });
  BENCH_CUDA_CHECK(cudaStreamDestroy(s1));
  BENCH_CUDA_CHECK(cudaStreamDestroy(s2));
  BENCH_CUDA_CHECK(cudaFree(dev_a));
  BENCH_CUDA_CHECK(cudaFree(dev_b));
  BENCH_CUDA_CHECK(cudaFreeHost(host_a));
  BENCH_CUDA_CHECK(cudaFreeHost(host_b));
  return r;
}

void row(const char* name, const char* what, double seconds, double bytes, double reference_seconds,
         const char* reference) {
  std::printf("%-16s %-44s %9.3f ms %8.2f GB/s   ratio %.2f vs %s (%.3f ms)\n", name, what, seconds * 1e3,
              bytes / seconds / 1e9, reference_seconds / seconds, reference, reference_seconds * 1e3);
}

Tensor random_host(Shape shape, DType dtype, HostMemory memory = HostMemory::pageable) {
  Tensor t = Tensor::empty(shape, dtype, Device::cpu(), {}, memory);
  fill_random(t.data(), static_cast<std::size_t>(t.numel()) * dtype.size());
  return t;
}

// FFT c64 [rows, 4096] of a host operand: seconds per blocking execute (result in a new host Tensor each call).
double fft_host_seconds(const Tensor& x, std::size_t limit) {
  FFT f(x, {.axes = {-1}, .execution = Execution::cuda(), .device_memory_limit = limit});
  f.plan();
  return time_call([&] { (void)f.execute(); });
}

void fft_rows(const PinnedRates& pcie) {
  const Shape shape{16384, 4096};
  const double bytes = 16384.0 * 4096 * 8;
  double staged = 0;
  if (selected("fft_pageable") || selected("fft_out_of_core")) {
    Tensor x = random_host(shape, c64);
    staged = fft_host_seconds(x, 0);
    row("fft_pageable", "FFT c64 [16384,4096] host round trip", staged, bytes, pcie.both, "pinned bidirectional copy");
  }
  if (selected("fft_pinned")) {
    Tensor x = random_host(shape, c64, HostMemory::pinned);
    Tensor out = Tensor::empty(shape, c64, Device::cpu(), {}, HostMemory::pinned);
    FFT f(x, {.axes = {-1}, .execution = Execution::cuda()});
    f.plan();
    const double t = time_call([&] { (void)f.execute({.out = out.view()}); });
    row("fft_pinned", "same, pinned operand and out", t, bytes, pcie.both, "pinned bidirectional copy");
  }
  if (selected("fft_out_of_core")) {
    Tensor x = random_host({131072, 4096}, c64);
    const int saved = g_reps;
    g_reps = std::max(3, g_reps / 3);
    const double t = fft_host_seconds(x, std::size_t{1} << 30);
    g_reps = saved;
    const double big = 131072.0 * 4096 * 8;
    std::printf("%-16s %-44s %9.3f ms %8.2f GB/s   ratio %.2f vs in-memory staged rate (%.2f GB/s)\n",
                "fft_out_of_core", "4 GiB host operand, 1 GiB device limit", t * 1e3, big / t / 1e9,
                (big / t) / (bytes / staged), bytes / staged / 1e9);
  }
}

void matmul_row(const PinnedRates& pcie, std::size_t pcie_bytes) {
  if (!selected("matmul_bf16")) return;
  const std::int64_t n = 8192;
  Tensor a = random_host({n, n}, bf16), b = random_host({n, n}, bf16);
  Matmul m(a, b, {.execution = Execution::cuda()});
  m.plan();
  const double t = time_call([&] { (void)m.execute(); }, 1);
  const double ab = 2.0 * n * n * 2, d = static_cast<double>(n) * n * 2;
  const double h2d_rate = static_cast<double>(pcie_bytes) / pcie.h2d,
               d2h_rate = static_cast<double>(pcie_bytes) / pcie.d2h;
  const double limit = ab / h2d_rate + d / d2h_rate;
  row("matmul_bf16", "bf16 8192^3 host operands", t, ab + d, limit, "transfer limit of A, B, D");
}

void copy_rows() {
  const std::size_t bytes = 512 * MiB;
  if (!selected("copy_h2d") && !selected("copy_d2h")) return;
  Tensor host = random_host({static_cast<std::int64_t>(bytes)}, i8);
  Tensor device = Tensor::empty({static_cast<std::int64_t>(bytes)}, i8, Device::cuda(0));
  if (selected("copy_h2d")) {
    const double raw =
        time_call([&] { BENCH_CUDA_CHECK(cudaMemcpy(device.data(), host.data(), bytes, cudaMemcpyHostToDevice)); });
    const double t = time_call([&] { copy(host, device); });
    row("copy_h2d", "cuplan::copy 512 MiB pageable -> device", t, bytes, raw, "cudaMemcpy");
  }
  if (selected("copy_d2h")) {
    const double raw =
        time_call([&] { BENCH_CUDA_CHECK(cudaMemcpy(host.data(), device.data(), bytes, cudaMemcpyDeviceToHost)); });
    const double t = time_call([&] { copy(device, host); });
    row("copy_d2h", "cuplan::copy 512 MiB device -> pageable", t, bytes, raw, "cudaMemcpy");
  }
}

void small_rows() {
  const int saved = g_reps;
  g_reps = std::max(g_reps * 20, 100);
  if (selected("small_fft")) {
    Tensor x = random_host({64, 64}, c64);
    Tensor dx = x.to(Device::cuda(0)), back = Tensor::empty({64, 64}, c64, Device::cpu());
    const std::size_t bytes = 64 * 64 * 8;
    FFT host_fft(x, {.execution = Execution::cuda()}), device_fft(dx, {});
    host_fft.plan();
    device_fft.plan();
    const double raw = time_call([&] {
      BENCH_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), bytes, cudaMemcpyHostToDevice));
      Tensor y = device_fft.execute();
      BENCH_CUDA_CHECK(cudaMemcpy(back.data(), y.data(), bytes, cudaMemcpyDeviceToHost));
    });
    const double t = time_call([&] { (void)host_fft.execute(); });
    row("small_fft", "FFT c64 64x64 host operand", t, 2.0 * bytes, raw, "device call + cudaMemcpy in/out");
  }
  if (selected("small_matmul")) {
    Tensor a = random_host({64, 64}, f32), b = random_host({64, 64}, f32);
    Tensor da = a.to(Device::cuda(0)), db = b.to(Device::cuda(0)), back = Tensor::empty({64, 64}, f32, Device::cpu());
    const std::size_t bytes = 64 * 64 * 4;
    Matmul host_mm(a, b, {.execution = Execution::cuda()}), device_mm(da, db, {});
    host_mm.plan();
    device_mm.plan();
    const double raw = time_call([&] {
      BENCH_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), bytes, cudaMemcpyHostToDevice));
      BENCH_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), bytes, cudaMemcpyHostToDevice));
      Tensor d = device_mm.execute();
      BENCH_CUDA_CHECK(cudaMemcpy(back.data(), d.data(), bytes, cudaMemcpyDeviceToHost));
    });
    const double t = time_call([&] { (void)host_mm.execute(); });
    row("small_matmul", "matmul f32 64^3 host operands", t, 3.0 * bytes, raw, "device call + cudaMemcpy in/out");
  }
  g_reps = saved;
}

// Where the time of the 512 MiB host FFT goes, each stage timed on its own (host clock; events for GPU work).
void breakdown(const PinnedRates& pcie) {
  const Shape shape{16384, 4096};
  const std::size_t bytes = 512 * MiB;  // 16384 * 4096 c64
  Tensor x = random_host(shape, c64);
  std::printf("\nbreakdown of the FFT c64 [16384,4096] pageable host round trip (512 MiB each way)\n");
  const double alloc = time_call([&] { Tensor t = Tensor::empty(shape, c64, Device::cpu()); }, 1);
  const double touch = time_call(
      [&] {
        Tensor t = Tensor::empty(shape, c64, Device::cpu());
        std::memset(t.data(), 0, bytes);  // one thread: the cost the staged path spreads over its copy threads
      },
      1);
  std::printf("  result allocation                 %8.3f ms\n", alloc * 1e3);
  std::printf("  result allocation + first touch   %8.3f ms (single thread)\n", touch * 1e3);
  {
    FFT f(x, {.axes = {-1}, .execution = Execution::cuda()});
    f.plan();
    const auto start = Clock::now();
    (void)f.execute();
    const double first = std::chrono::duration<double>(Clock::now() - start).count();
    const double steady = time_call([&] { (void)f.execute(); });
    std::printf("  first execute (pool growth, pinned slots)  %8.3f ms; steady %8.3f ms\n", first * 1e3, steady * 1e3);
  }
  {
    void* pinned;
    BENCH_CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    const unsigned threads = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
    const double t = time_call([&] {
      std::vector<std::thread> pool;
      for (unsigned i = 0; i < threads; ++i)
        pool.emplace_back([&, i] {
          const std::size_t begin = bytes * i / threads, end = bytes * (i + 1) / threads;
          std::memcpy(static_cast<char*>(pinned) + begin, static_cast<const char*>(x.data()) + begin, end - begin);
        });
      for (auto& th : pool) th.join();
    });
    std::printf("  pageable -> pinned copy (%2u threads) %8.3f ms (%.1f GB/s)\n", threads, t * 1e3, bytes / t / 1e9);
    BENCH_CUDA_CHECK(cudaFreeHost(pinned));
  }
  std::printf("  DMA pinned H2D / D2H / both        %8.3f / %8.3f / %8.3f ms\n", pcie.h2d * 1e3, pcie.d2h * 1e3,
              pcie.both * 1e3);
  {
    Tensor dx = x.to(Device::cuda(0));
    FFT f(dx, {.axes = {-1}});
    f.plan();
    Stream s;
    cudaEvent_t begin, end;
    BENCH_CUDA_CHECK(cudaEventCreate(&begin));
    BENCH_CUDA_CHECK(cudaEventCreate(&end));
    std::vector<double> t;
    for (int i = 0; i < g_reps + 2; ++i) {
      BENCH_CUDA_CHECK(cudaEventRecord(begin, s.native()));
      (void)f.execute({.stream = s});
      BENCH_CUDA_CHECK(cudaEventRecord(end, s.native()));
      BENCH_CUDA_CHECK(cudaEventSynchronize(end));
      float ms = 0;
      BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
      if (i >= 2) t.push_back(ms * 1e-3);
    }
    std::printf("  compute (device operand, events)   %8.3f ms\n", median(t) * 1e3);
    const double sync = time_call([&] { BENCH_CUDA_CHECK(cudaStreamSynchronize(s.native())); });
    std::printf("  synchronisation of an idle stream  %8.3f ms\n", sync * 1e3);
    BENCH_CUDA_CHECK(cudaEventDestroy(begin));
    BENCH_CUDA_CHECK(cudaEventDestroy(end));
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool show_breakdown = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick")
      g_reps = 5;
    else if (arg.rfind("--rows=", 0) == 0)
      g_rows = arg.substr(7);
    else if (arg == "--breakdown")
      show_breakdown = true;
    else {
      std::fprintf(stderr, "usage: host_staging_bench [--quick] [--rows=<substring>] [--breakdown]\n");
      return 2;
    }
  }
  if (!cuda_available()) {
    std::printf("host_staging_bench: no CUDA device; every row needs a GPU, nothing measured\n");
    return 0;
  }
  const std::size_t pcie_bytes = 512 * MiB;
  const PinnedRates pcie = pinned_rates(pcie_bytes);
  std::printf("PCIe pinned 512 MiB: H2D %.1f GB/s, D2H %.1f GB/s, both at once %.1f GB/s each way (median of %d)\n",
              pcie_bytes / pcie.h2d / 1e9, pcie_bytes / pcie.d2h / 1e9, pcie_bytes / pcie.both / 1e9, g_reps);
  fft_rows(pcie);
  matmul_row(pcie, pcie_bytes);
  copy_rows();
  small_rows();
  if (show_breakdown) breakdown(pcie);
  return 0;
}
