// SPDX-License-Identifier: Apache-2.0
// Host operands at PCIe speed (docs/staging.md): each row times a blocking cuplan call on host memory and sets it
// against a raw measurement of the same bytes, the two timed alternately in the same run (so that drift in the
// host's memory bandwidth moves both alike). Random data, warm-up, median of the repetitions.
//
// Rows (select with --rows=<substring>):
//   fft_pageable / fft_pinned  FFT c64 [16384, 4096] over the last axis, host round trip: GB/s of operand per
//                              blocking execute, and the ratio against a bidirectional pinned cudaMemcpyAsync of the
//                              same bytes (H2D and D2H on two streams at once: the round trip's physical limit);
//                              fft_pageable also times the one host copy it cannot avoid (the operand into pinned
//                              slots), alone and while the bidirectional copy runs: the latter is the pageable round
//                              trip's bound on a host whose memory the DMAs and the copy share;
//   fft_out_of_core            a 4 GiB host operand under a 1 GiB device_memory_limit against the in-memory staged
//                              rate (the same transform of 512 MiB under the default limit);
//   matmul_bf16                bf16 8192^3 with host operands against the transfer limit (bytes of A, B and D at
//                              the PCIe rates measured in this run);
//   copy_h2d / copy_d2h        cuplan::copy of 512 MiB pageable memory against a plain cudaMemcpy;
//   small_fft / small_matmul   FFT 64x64 and matmul 64^3 with host operands against the device-operand call plus
//                              cudaMemcpy in and out ("no slower than before" compares this ratio across builds).
// --breakdown: for the 512 MiB FFT, time in result allocation (pageable with first touch, pinned from the cache on
// a miss and on a hit), pool growth (first call against steady state), the pageable operand's copy into pinned
// slots (host threads), DMA, compute and synchronisation.
// --quick: fewer repetitions.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <barrier>
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

// Pinned host and device buffers of `bytes` each way, and the plain DMAs between them on two streams.
class PinnedCopies {
 public:
  explicit PinnedCopies(std::size_t bytes) : bytes_(bytes) {
    BENCH_CUDA_CHECK(cudaMallocHost(&host_a_, bytes));
    BENCH_CUDA_CHECK(cudaMallocHost(&host_b_, bytes));
    BENCH_CUDA_CHECK(cudaMalloc(&dev_a_, bytes));
    BENCH_CUDA_CHECK(cudaMalloc(&dev_b_, bytes));
    std::memset(host_a_, 1, bytes);
    std::memset(host_b_, 2, bytes);
    BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s1_, cudaStreamNonBlocking));
    BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s2_, cudaStreamNonBlocking));
  }
  ~PinnedCopies() {
    BENCH_CUDA_CHECK(cudaStreamDestroy(s1_));
    BENCH_CUDA_CHECK(cudaStreamDestroy(s2_));
    BENCH_CUDA_CHECK(cudaFree(dev_a_));
    BENCH_CUDA_CHECK(cudaFree(dev_b_));
    BENCH_CUDA_CHECK(cudaFreeHost(host_a_));
    BENCH_CUDA_CHECK(cudaFreeHost(host_b_));
  }
  PinnedCopies(const PinnedCopies&) = delete;
  PinnedCopies& operator=(const PinnedCopies&) = delete;

  void h2d() const {
    BENCH_CUDA_CHECK(cudaMemcpyAsync(dev_a_, host_a_, bytes_, cudaMemcpyHostToDevice, s1_));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s1_));
  }
  void d2h() const {
    BENCH_CUDA_CHECK(cudaMemcpyAsync(host_b_, dev_b_, bytes_, cudaMemcpyDeviceToHost, s2_));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s2_));
  }
  /// H2D and D2H at once: a round trip's physical limit.
  void both() const {
    both_while([] {});
  }
  /// Both DMAs, with `host_work` running on the host meanwhile.
  void both_while(const std::function<void()>& host_work) const {
    BENCH_CUDA_CHECK(cudaMemcpyAsync(dev_a_, host_a_, bytes_, cudaMemcpyHostToDevice, s1_));
    BENCH_CUDA_CHECK(cudaMemcpyAsync(host_b_, dev_b_, bytes_, cudaMemcpyDeviceToHost, s2_));
    host_work();
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s1_));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s2_));
  }

 private:
  std::size_t bytes_;
  void *host_a_ = nullptr, *host_b_ = nullptr, *dev_a_ = nullptr, *dev_b_ = nullptr;
  cudaStream_t s1_ = nullptr, s2_ = nullptr;
};

PinnedRates pinned_rates(std::size_t bytes) {
  const PinnedCopies copies(bytes);
  PinnedRates r;
  r.h2d = time_call([&] { copies.h2d(); });
  r.d2h = time_call([&] { copies.d2h(); });
  r.both = time_call([&] { copies.both(); });
  return r;
}

// Seconds per call of each of `calls`, timed alternately (warm-up first, then the median of g_reps of each): ratios
// of figures taken over the same minutes, so that a host whose memory bandwidth drifts while the benchmark runs (a
// shared machine) moves them alike.
std::vector<double> time_alternately(const std::vector<std::function<void()>>& calls, int warmup = 2) {
  for (int i = 0; i < warmup; ++i)
    for (const auto& call : calls) call();
  std::vector<std::vector<double>> t(calls.size());
  for (int i = 0; i < g_reps; ++i)
    for (std::size_t k = 0; k < calls.size(); ++k) {
      const auto start = Clock::now();
      calls[k]();
      t[k].push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
  std::vector<double> medians;
  for (auto& v : t) medians.push_back(median(v));
  return medians;
}

// {reference, call} seconds, timed alternately.
std::pair<double, double> time_against(const std::function<void()>& reference, const std::function<void()>& call,
                                       int warmup = 2) {
  const std::vector<double> m = time_alternately({reference, call}, warmup);
  return {m[0], m[1]};
}

// A persistent team of host threads (threads started per repetition would add their start-up to what is timed).
class ThreadTeam {
 public:
  explicit ThreadTeam(unsigned threads) : size_(threads), start_(threads + 1), done_(threads + 1) {
    for (unsigned t = 0; t < threads; ++t)
      threads_.emplace_back([this, t] {
        for (;;) {
          start_.arrive_and_wait();
          if (stop_) return;
          (*work_)(t);
          done_.arrive_and_wait();
        }
      });
  }
  ~ThreadTeam() {
    stop_ = true;  // published by the barrier
    start_.arrive_and_wait();
    for (auto& t : threads_) t.join();
  }
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;
  unsigned size() const { return size_; }
  /// Runs work(t) on every thread t and returns when all are done.
  void run(const std::function<void(unsigned)>& work) {
    work_ = &work;
    start_.arrive_and_wait();
    done_.arrive_and_wait();
  }

 private:
  unsigned size_;
  std::barrier<> start_, done_;
  const std::function<void(unsigned)>* work_ = nullptr;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// The one host copy a pageable round trip cannot avoid, alone: the operand into three reused pinned slots of 32 MiB
// (about the staging engine's chunk), on as many threads as the engine's copy pool has by default (the hardware
// threads, at most 16; CUPLAN_HOST_COPY_THREADS and the affinity mask are not followed here). With the
// bidirectional DMA it bounds the round trip: a host whose memory is slow (or shared) lowers this bound, not the
// DMA's.
class HostPackBound {
 public:
  static constexpr std::size_t slot_bytes = 32 * MiB;
  HostPackBound() : team_(std::min(16u, std::max(1u, std::thread::hardware_concurrency()))) {
    BENCH_CUDA_CHECK(cudaMallocHost(&slots_, 3 * slot_bytes));
    std::memset(slots_, 0, 3 * slot_bytes);
  }
  ~HostPackBound() { BENCH_CUDA_CHECK(cudaFreeHost(slots_)); }
  HostPackBound(const HostPackBound&) = delete;
  HostPackBound& operator=(const HostPackBound&) = delete;
  unsigned threads() const { return team_.size(); }
  void pack(const void* operand, std::size_t bytes) {
    const auto* src = static_cast<const char*>(operand);
    auto* slots = static_cast<char*>(slots_);
    const unsigned n = team_.size();
    team_.run([&](unsigned t) {
      for (std::size_t chunk = 0; chunk * slot_bytes < bytes; ++chunk) {
        const std::size_t size = std::min(slot_bytes, bytes - chunk * slot_bytes);
        const std::size_t begin = size * t / n / 64 * 64, end = t + 1 == n ? size : size * (t + 1) / n / 64 * 64;
        std::memcpy(slots + (chunk % 3) * slot_bytes + begin, src + chunk * slot_bytes + begin, end - begin);
      }
    });
  }

 private:
  ThreadTeam team_;
  void* slots_ = nullptr;
};

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

// FFT c64 [rows, 4096] of a host operand over the last axis, seconds per blocking execute (a new pinned host result
// each call unless `out`), timed alternately with a bidirectional pinned copy of the same bytes: {copy, execute}.
std::pair<double, double> fft_host_against_copy(const Tensor& x, const PinnedCopies& copies, const Tensor* out) {
  FFT f(x, {.axes = {-1}, .execution = Execution::cuda()});
  f.plan();
  if (out != nullptr) return time_against([&] { copies.both(); }, [&] { (void)f.execute({.out = out->view()}); });
  return time_against([&] { copies.both(); }, [&] { (void)f.execute(); });
}

void fft_rows() {
  const Shape shape{16384, 4096};
  const double bytes = 16384.0 * 4096 * 8;
  if (selected("fft_pageable") || selected("fft_pinned")) {
    const PinnedCopies copies(static_cast<std::size_t>(bytes));
    if (selected("fft_pageable")) {
      Tensor x = random_host(shape, c64);
      FFT f(x, {.axes = {-1}, .execution = Execution::cuda()});
      f.plan();
      HostPackBound host;
      const auto pack = [&] { host.pack(x.data(), static_cast<std::size_t>(bytes)); };
      const std::vector<double> t = time_alternately(
          {[&] { copies.both(); }, pack, [&] { copies.both_while(pack); }, [&] { (void)f.execute(); }});
      const double copy_s = t[0], pack_s = t[1], both_s = t[2], fft_s = t[3];
      row("fft_pageable", "FFT c64 [16384,4096] host round trip", fft_s, bytes, copy_s, "pinned bidirectional copy");
      std::printf(
          "%-16s host copy of the operand into pinned slots (%u threads) alone: %.3f ms (%.2f GB/s); with the "
          "bidirectional copy at once: %.3f ms; round trip at %.2f of the latter\n",
          "", host.threads(), pack_s * 1e3, bytes / pack_s / 1e9, both_s * 1e3, both_s / fft_s);
    }
    if (selected("fft_pinned")) {
      Tensor x = random_host(shape, c64, HostMemory::pinned);
      Tensor out = Tensor::empty(shape, c64, Device::cpu(), {}, HostMemory::pinned);
      const auto [copy_s, fft_s] = fft_host_against_copy(x, copies, &out);
      row("fft_pinned", "same, pinned operand and out", fft_s, bytes, copy_s, "pinned bidirectional copy");
    }
  }
  if (selected("fft_out_of_core")) {
    // The in-memory staged rate (512 MiB under the default limit) timed alternately with 4 GiB under 1 GiB.
    Tensor small = random_host(shape, c64), big = random_host({131072, 4096}, c64);
    FFT in_memory(small, {.axes = {-1}, .execution = Execution::cuda()});
    FFT out_of_core(big, {.axes = {-1}, .execution = Execution::cuda(), .device_memory_limit = std::size_t{1} << 30});
    in_memory.plan();
    out_of_core.plan();
    const int saved = g_reps;
    g_reps = std::max(3, g_reps / 2);
    const auto [small_s, big_s] =
        time_against([&] { (void)in_memory.execute(); }, [&] { (void)out_of_core.execute(); }, 1);
    g_reps = saved;
    const double big_bytes = 131072.0 * 4096 * 8;
    std::printf("%-16s %-44s %9.3f ms %8.2f GB/s   ratio %.2f vs in-memory staged rate (%.2f GB/s)\n",
                "fft_out_of_core", "4 GiB host operand, 1 GiB device limit", big_s * 1e3, big_bytes / big_s / 1e9,
                (big_bytes / big_s) / (bytes / small_s), bytes / small_s / 1e9);
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
    const auto [raw, t] =
        time_against([&] { BENCH_CUDA_CHECK(cudaMemcpy(device.data(), host.data(), bytes, cudaMemcpyHostToDevice)); },
                     [&] { copy(host, device); });
    row("copy_h2d", "cuplan::copy 512 MiB pageable -> device", t, bytes, raw, "cudaMemcpy");
  }
  if (selected("copy_d2h")) {
    const auto [raw, t] =
        time_against([&] { BENCH_CUDA_CHECK(cudaMemcpy(host.data(), device.data(), bytes, cudaMemcpyDeviceToHost)); },
                     [&] { copy(device, host); });
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
    const auto [raw, t] = time_against(
        [&] {
          BENCH_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), bytes, cudaMemcpyHostToDevice));
          Tensor y = device_fft.execute();
          BENCH_CUDA_CHECK(cudaMemcpy(back.data(), y.data(), bytes, cudaMemcpyDeviceToHost));
        },
        [&] { (void)host_fft.execute(); });
    row("small_fft", "FFT c64 64x64 host operand", t, 2.0 * bytes, raw, "device call + cudaMemcpy in/out");
  }
  if (selected("small_matmul")) {
    Tensor a = random_host({64, 64}, f32), b = random_host({64, 64}, f32);
    Tensor da = a.to(Device::cuda(0)), db = b.to(Device::cuda(0)), back = Tensor::empty({64, 64}, f32, Device::cpu());
    const std::size_t bytes = 64 * 64 * 4;
    Matmul host_mm(a, b, {.execution = Execution::cuda()}), device_mm(da, db, {});
    host_mm.plan();
    device_mm.plan();
    const auto [raw, t] = time_against(
        [&] {
          BENCH_CUDA_CHECK(cudaMemcpy(da.data(), a.data(), bytes, cudaMemcpyHostToDevice));
          BENCH_CUDA_CHECK(cudaMemcpy(db.data(), b.data(), bytes, cudaMemcpyHostToDevice));
          Tensor d = device_mm.execute();
          BENCH_CUDA_CHECK(cudaMemcpy(back.data(), d.data(), bytes, cudaMemcpyDeviceToHost));
        },
        [&] { (void)host_mm.execute(); });
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
  std::printf("  pageable result allocation        %8.3f ms\n", alloc * 1e3);
  std::printf("  pageable result + first touch     %8.3f ms (single thread; what a pageable result costs)\n",
              touch * 1e3);
  {
    // The new result is pinned from the cache: a miss pins fresh memory once, later calls reuse the freed block.
    const double miss = time_call(
        [&] {
          void* p = nullptr;
          BENCH_CUDA_CHECK(cudaMallocHost(&p, bytes));
          BENCH_CUDA_CHECK(cudaFreeHost(p));
        },
        0);
    const double hit = time_call([&] { Tensor t = Tensor::empty(shape, c64, Device::cpu(), {}, HostMemory::pinned); });
    std::printf("  pinned result: cache miss (cudaMallocHost + cudaFreeHost) %8.3f ms, cache hit %8.3f ms\n",
                miss * 1e3, hit * 1e3);
  }
  {
    FFT f(x, {.axes = {-1}, .execution = Execution::cuda()});
    f.plan();
    const auto start = Clock::now();
    (void)f.execute();
    const double first = std::chrono::duration<double>(Clock::now() - start).count();
    const double steady = time_call([&] { (void)f.execute(); });
    Tensor y = f.execute();
    std::printf("  first execute (pool growth, pinned slots, pinned result)  %8.3f ms; steady %8.3f ms (result %s)\n",
                first * 1e3, steady * 1e3, y.memory_space() == MemorySpace::host_pinned ? "pinned" : "pageable");
  }
  {
    // The host copies the engine makes, on as many threads as its pool: a pageable operand into pinned slots, and
    // pinned slots into a pageable `out`.
    void* pinned;
    BENCH_CUDA_CHECK(cudaMallocHost(&pinned, bytes));
    Tensor out = random_host(shape, c64);
    const unsigned threads = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
    auto on_threads = [&](const std::function<void(std::size_t, std::size_t)>& slice) {
      return time_call([&] {
        std::vector<std::thread> pool;
        for (unsigned i = 0; i < threads; ++i)
          pool.emplace_back([&, i] { slice(bytes * i / threads / 64 * 64, bytes * (i + 1) / threads / 64 * 64); });
        for (auto& th : pool) th.join();
      });
    };
    auto* slot = static_cast<char*>(pinned);
    auto* operand = static_cast<char*>(x.data());
    auto* result = static_cast<char*>(out.data());
    const double in = on_threads([&](std::size_t b, std::size_t e) { std::memcpy(slot + b, operand + b, e - b); });
    const double back = on_threads([&](std::size_t b, std::size_t e) { std::memcpy(result + b, slot + b, e - b); });
    std::printf("  pageable -> pinned copy (%2u threads) %8.3f ms (%.1f GB/s; the one host copy of a new result)\n",
                threads, in * 1e3, bytes / in / 1e9);
    std::printf("  pinned -> pageable copy (%2u threads) %8.3f ms (%.1f GB/s; the unpack into a given pageable out)\n",
                threads, back * 1e3, bytes / back / 1e9);
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
  fft_rows();
  matmul_row(pcie, pcie_bytes);
  copy_rows();
  small_rows();
  if (show_breakdown) breakdown(pcie);
  return 0;
}
