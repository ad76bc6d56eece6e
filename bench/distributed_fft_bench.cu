// SPDX-License-Identifier: Apache-2.0
// Distributed FFT on every visible GPU (ranks as threads, Communicator::local_all).
//
//   distributed_fft_bench [--sizes 512,1024] [--reps 10] [--warmup 3] [--chunks 4] [--extra 1]
//
// --chunks: comma-separated chunk counts of the copy-engine rows (DistributedFFTOptions::chunks); --extra 1 adds
// the rows of R2C (slab) and of a pencil grid (2x2 on four GPUs), copy engines, optimized layout.
//
// Per cube size n^3, in the same run and on random data (median of the repetitions after warm-up, each repetition
// timed on every rank with events and the slowest rank counted):
//  - single:   cuplan's single-GPU FFT of the whole array on GPU 0;
//  - per exchange route (nccl, and copy engine per chunk count): one forward C2C c64 slab DistributedFFT,
//    natural layout (two exchanges) and optimized (one); speed-up = single / dist;
//  - exchange: dist opt minus the same local FFTs run alone (public FFT on the rank's stage boxes), i.e. pack, NCCL
//    and unpack of the one exchange; its bandwidth counts the bytes each rank sends to other ranks;
//  - cufftXt: one cufftXt plan over the same GPUs (cufftXtSetGPUs, single process), in place, timed on the host
//    around cufftXtExecDescriptorC2C with every GPU synchronised (two GPUs or more);
//  - a2a: a bare NCCL all-to-all (grouped ncclSend/ncclRecv, equal pieces) of the same bytes, and ring: a bare
//    copy-engine exchange of the same bytes (a shifted ring of cudaMemcpyPeerAsync, one peer after another); ratio =
//    exchange bandwidth / the faster of the two.
// With one GPU there is no exchange on the wire: the bandwidth columns print "-".

#include <cufftXt.h>
#include <nccl.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cuplan/cuplan.hpp>
#include <cuplan/distributed.hpp>

#include "support/bench_check.hpp"

#define BENCH_NCCL_CHECK(expr)                                                                            \
  do {                                                                                                    \
    const ncclResult_t bench_status_ = (expr);                                                            \
    if (bench_status_ != ncclSuccess)                                                                     \
      ::bench::fail("NCCL", #expr, bench_status_, ncclGetErrorString(bench_status_), __FILE__, __LINE__); \
  } while (0)

namespace cp = cuplan;

namespace {

struct Args {
  std::vector<std::int64_t> sizes{512, 1024};
  std::vector<int> chunks{4};
  int reps = 10;
  int warmup = 3;
  bool extra = false;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--sizes") {
      a.sizes.clear();
      for (char* tok = std::strtok(argv[i + 1], ","); tok; tok = std::strtok(nullptr, ","))
        a.sizes.push_back(std::atoll(tok));
    } else if (key == "--chunks") {
      a.chunks.clear();
      for (char* tok = std::strtok(argv[i + 1], ","); tok; tok = std::strtok(nullptr, ","))
        a.chunks.push_back(std::atoi(tok));
    } else if (key == "--extra") {
      a.extra = std::atoi(argv[i + 1]) != 0;
    } else if (key == "--reps") {
      a.reps = std::atoi(argv[i + 1]);
    } else if (key == "--warmup") {
      a.warmup = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  return a;
}

// Random values in [-1, 1) from a hash of the index: no host transfer of a multi-GiB array.
__global__ void fill_random(float2* x, std::int64_t n, unsigned seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    unsigned long long h = (static_cast<unsigned long long>(i) + seed) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    x[i] = make_float2(static_cast<float>(h & 0xFFFFFF) / 8388608.0f - 1.0f,
                       static_cast<float>((h >> 24) & 0xFFFFFF) / 8388608.0f - 1.0f);
  }
}

cp::Tensor random_c64(const cp::Shape& shape, cp::Device device, cp::StreamRef stream, unsigned seed) {
  auto t = cp::Tensor::empty(shape, cp::c64, device, stream);
  fill_random<<<1024, 256, 0, stream>>>(t.data<float2>(), t.numel(), seed);
  BENCH_CUDA_CHECK(cudaGetLastError());
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times `work` (enqueued on `stream`) `reps` times after `warmup` runs; all ranks start each repetition together.
template <class F>
std::vector<double> time_on(cp::StreamRef stream, std::barrier<>* sync, const Args& a, F&& work) {
  cp::Event start(true), stop(true);
  for (int i = 0; i < a.warmup; ++i) work();
  stream.synchronize();
  std::vector<double> ms;
  for (int i = 0; i < a.reps; ++i) {
    if (sync) sync->arrive_and_wait();
    start.record(stream);
    work();
    stop.record(stream);
    stop.synchronize();
    ms.push_back(cp::Event::elapsed_ms(start, stop));
  }
  return ms;
}

// Per repetition the slowest rank, then the median over repetitions.
double slowest_median(const std::vector<std::vector<double>>& per_rank) {
  std::vector<double> worst(per_rank[0].size(), 0.0);
  for (const auto& r : per_rank)
    for (std::size_t i = 0; i < r.size(); ++i) worst[i] = std::max(worst[i], r[i]);
  return median(worst);
}

double single_gpu(std::int64_t n, const Args& a) {
  cp::DeviceScope scope(cp::Device::cuda(0));
  const cp::Stream stream(cp::Device::cuda(0));
  auto x = random_c64({n, n, n}, cp::Device::cuda(0), stream.ref(), 1);
  auto out = cp::Tensor::empty({n, n, n}, cp::c64, cp::Device::cuda(0), stream.ref());
  cp::FFT fft(x, {.stream = stream.ref()});
  fft.plan();
  const auto ms = time_on(stream.ref(), nullptr, a, [&] { fft.execute({.stream = stream.ref(), .out = out.view()}); });
  stream.synchronize();
  return median(ms);
}

// cufftXt over all `gpus` GPUs (needs two or more), forward C2C in place on its own descriptor.
double cufftxt(std::int64_t n, int gpus, const Args& a) {
  cufftHandle plan;
  BENCH_CUFFT_CHECK(cufftCreate(&plan));
  std::vector<int> ids(static_cast<std::size_t>(gpus));
  for (int i = 0; i < gpus; ++i) ids[static_cast<std::size_t>(i)] = i;
  BENCH_CUFFT_CHECK(cufftXtSetGPUs(plan, gpus, ids.data()));
  std::vector<std::size_t> work(static_cast<std::size_t>(gpus));
  BENCH_CUFFT_CHECK(
      cufftMakePlan3d(plan, static_cast<int>(n), static_cast<int>(n), static_cast<int>(n), CUFFT_C2C, work.data()));
  cudaLibXtDesc* desc = nullptr;
  BENCH_CUFFT_CHECK(cufftXtMalloc(plan, &desc, CUFFT_XT_FORMAT_INPLACE));
  for (int i = 0; i < desc->descriptor->nGPUs; ++i) {
    BENCH_CUDA_CHECK(cudaSetDevice(desc->descriptor->GPUs[i]));
    fill_random<<<1024, 256>>>(static_cast<float2*>(desc->descriptor->data[i]),
                               static_cast<std::int64_t>(desc->descriptor->size[i] / sizeof(float2)), 3u + i);
    BENCH_CUDA_CHECK(cudaGetLastError());
  }
  auto sync_all = [&] {
    for (int i = 0; i < gpus; ++i) {
      BENCH_CUDA_CHECK(cudaSetDevice(i));
      BENCH_CUDA_CHECK(cudaDeviceSynchronize());
    }
  };
  sync_all();
  std::vector<double> ms;
  for (int i = 0; i < a.warmup + a.reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    BENCH_CUFFT_CHECK(cufftXtExecDescriptorC2C(plan, desc, desc, CUFFT_FORWARD));
    sync_all();
    const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i >= a.warmup) ms.push_back(t);
  }
  BENCH_CUFFT_CHECK(cufftXtFree(desc));
  BENCH_CUFFT_CHECK(cufftDestroy(plan));
  BENCH_CUDA_CHECK(cudaSetDevice(0));
  return median(ms);
}

// One timed configuration of the distributed transform.
struct Config {
  std::string label;
  cp::ExchangeMethod exchange = cp::ExchangeMethod::nccl;
  int chunks = 0;
  cp::ResultLayout layout = cp::ResultLayout::optimized;
  cp::FFTType type = cp::FFTType::c2c;
  cp::Decomposition decomposition = cp::Decomposition::slab;
};

std::vector<Config> configs(const Args& a, int gpus) {
  std::vector<Config> c;
  c.push_back({"nccl natural", cp::ExchangeMethod::nccl, 0, cp::ResultLayout::natural});
  c.push_back({"nccl optimized", cp::ExchangeMethod::nccl, 0});
  if (gpus == 1) return c;
  c.push_back({"ce natural", cp::ExchangeMethod::copy_engine, a.chunks.front(), cp::ResultLayout::natural});
  for (int k : a.chunks) c.push_back({"ce optimized chunks " + std::to_string(k), cp::ExchangeMethod::copy_engine, k});
  if (a.extra) {
    c.push_back({"ce r2c optimized", cp::ExchangeMethod::copy_engine, a.chunks.front(), cp::ResultLayout::optimized,
                 cp::FFTType::r2c});
    c.push_back({"nccl r2c optimized", cp::ExchangeMethod::nccl, 0, cp::ResultLayout::optimized, cp::FFTType::r2c});
    if (gpus == 4) {
      c.push_back({"ce pencil 2x2 optimized", cp::ExchangeMethod::copy_engine, a.chunks.front(),
                   cp::ResultLayout::optimized, cp::FFTType::c2c, cp::Decomposition::pencil});
      c.push_back({"nccl pencil 2x2 optimized", cp::ExchangeMethod::nccl, 0, cp::ResultLayout::optimized,
                   cp::FFTType::c2c, cp::Decomposition::pencil});
    }
  }
  return c;
}

struct RankResult {
  std::vector<std::vector<double>> runs;  // per configuration
  std::vector<std::string> described;
  std::vector<double> local, a2a, ring;
  std::int64_t bytes_to_others = 0;
};

__global__ void to_real(const float2* x, float* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    y[i] = x[i].x;
}

RankResult run_rank(cp::Communicator& comm, std::int64_t n, const Args& a, std::barrier<>& sync,
                    std::vector<void*>& ring_targets) {
  RankResult r;
  comm.device().use();
  const cp::Stream stream(comm.device());
  const cp::Shape g{n, n, n};
  const int ranks = comm.size();
  for (const Config& c : configs(a, ranks)) {
    cp::DistributedFFTOptions o{.decomposition = c.decomposition,
                                .fft_type = c.type,
                                .result_layout = c.layout,
                                .stream = stream.ref(),
                                .exchange = c.exchange,
                                .chunks = c.chunks};
    if (c.decomposition == cp::Decomposition::pencil) o.process_grid = std::array<int, 2>{2, 2};
    const bool real = c.type == cp::FFTType::r2c;
    const auto boxes = cp::DistributedFFT::boxes(comm, g, real ? cp::f32 : cp::c64, o);
    auto x = random_c64(boxes.input.shape(), comm.device(), stream.ref(), 7u + static_cast<unsigned>(comm.rank()));
    if (real) {
      auto xr = cp::Tensor::empty(boxes.input.shape(), cp::f32, comm.device(), stream.ref());
      to_real<<<1024, 256, 0, stream.native()>>>(x.data<float2>(), xr.data<float>(), xr.numel());
      BENCH_CUDA_CHECK(cudaGetLastError());
      x = std::move(xr);
    }
    cp::DistributedFFT plan(comm, g, x, o);
    plan.plan();
    auto out = cp::Tensor::empty(plan.output_box().shape(), plan.result_dtype(), comm.device(), stream.ref());
    r.runs.push_back(
        time_on(stream.ref(), &sync, a, [&] { plan.execute({.stream = stream.ref(), .out = out.view()}); }));
    r.described.push_back(plan.describe());
  }
  const cp::DistributedFFTOptions opt{.decomposition = cp::Decomposition::slab,
                                      .result_layout = cp::ResultLayout::optimized};
  const auto boxes = cp::DistributedFFT::boxes(comm, g, cp::c64, opt);
  auto x = random_c64(boxes.input.shape(), comm.device(), stream.ref(), 9u);
  {
    // The local FFTs of the optimized slab transform, alone: axes (1, 2) on the input slab, axis 0 on the output.
    auto y = random_c64(boxes.output.shape(), comm.device(), stream.ref(), 11);
    auto ya = cp::Tensor::empty(boxes.input.shape(), cp::c64, comm.device(), stream.ref());
    auto yb = cp::Tensor::empty(boxes.output.shape(), cp::c64, comm.device(), stream.ref());
    cp::FFT first(x, {.axes = {1, 2}, .stream = stream.ref()});
    cp::FFT second(y, {.axes = {0}, .stream = stream.ref()});
    first.plan();
    second.plan();
    r.local = time_on(stream.ref(), &sync, a, [&] {
      first.execute({.stream = stream.ref(), .out = ya.view()});
      second.execute({.stream = stream.ref(), .out = yb.view()});
    });
  }
  if (ranks > 1) {
    // Bare all-to-all of the same bytes: the local slab cut into equal pieces, one to each rank.
    const std::size_t bytes = static_cast<std::size_t>(boxes.input.numel()) * 8;
    const std::size_t piece = bytes / static_cast<std::size_t>(ranks);
    r.bytes_to_others = static_cast<std::int64_t>(piece) * (ranks - 1);
    auto send = cp::Tensor::empty({static_cast<std::int64_t>(bytes)}, cp::i8, comm.device(), stream.ref());
    auto recv = cp::Tensor::empty({static_cast<std::int64_t>(bytes)}, cp::i8, comm.device(), stream.ref());
    r.a2a = time_on(stream.ref(), &sync, a, [&] {
      BENCH_NCCL_CHECK(ncclGroupStart());
      for (int p = 0; p < ranks; ++p) {
        BENCH_NCCL_CHECK(
            ncclSend(static_cast<char*>(send.data()) + p * piece, piece, ncclUint8, p, comm.native(), stream));
        BENCH_NCCL_CHECK(
            ncclRecv(static_cast<char*>(recv.data()) + p * piece, piece, ncclUint8, p, comm.native(), stream));
      }
      BENCH_NCCL_CHECK(ncclGroupEnd());
    });
    // Bare copy-engine ring of the same bytes: piece p of this rank's slab to rank p, peers one after another
    // starting with the next rank.
    stream.synchronize();
    // Peers write into plain cudaMalloc memory (pool memory is not mapped for peers unless the pool says so).
    void* ring_recv = nullptr;
    BENCH_CUDA_CHECK(cudaMalloc(&ring_recv, bytes));
    ring_targets[static_cast<std::size_t>(comm.rank())] = ring_recv;
    for (int p = 0; p < ranks; ++p) {
      if (p == comm.rank()) continue;
      const cudaError_t e = cudaDeviceEnablePeerAccess(p, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        (void)cudaGetLastError();
      else
        BENCH_CUDA_CHECK(e);
    }
    sync.arrive_and_wait();
    r.ring = time_on(stream.ref(), &sync, a, [&] {
      for (int step = 1; step < ranks; ++step) {
        const int p = (comm.rank() + step) % ranks;
        BENCH_CUDA_CHECK(
            cudaMemcpyPeerAsync(static_cast<char*>(ring_targets[static_cast<std::size_t>(p)]) + comm.rank() * piece, p,
                                static_cast<char*>(send.data()) + p * piece, comm.device().index(), piece, stream));
      }
    });
    stream.synchronize();
    sync.arrive_and_wait();  // no rank frees its receive buffer while a peer still copies into it
    BENCH_CUDA_CHECK(cudaFree(ring_recv));
  }
  stream.synchronize();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cp::cuda_available()) {
    std::printf("distributed_fft_bench: no CUDA device on this machine; nothing measured\n");
    return 77;
  }
  const Args a = parse(argc, argv);
  const int gpus = cp::cuda_device_count();
  std::vector<int> devices;
  for (int d = 0; d < gpus; ++d) devices.push_back(d);
  auto comms = cp::Communicator::local_all(devices);
  std::printf("distributed FFT, %d GPU(s), median of %d after %d warm-up, the slowest rank per repetition\n", gpus,
              a.reps, a.warmup);
  for (std::int64_t n : a.sizes) {
    const double single = single_gpu(n, a);
    std::vector<RankResult> results(comms.size());
    std::barrier<> sync(static_cast<std::ptrdiff_t>(comms.size()));
    std::vector<void*> ring_targets(comms.size(), nullptr);
    std::vector<std::thread> threads;
    for (std::size_t r = 0; r < comms.size(); ++r)
      threads.emplace_back([&, r] { results[r] = run_rank(comms[r], n, a, sync, ring_targets); });
    for (auto& t : threads) t.join();
    auto collect = [&](auto get) {
      std::vector<std::vector<double>> v;
      for (const auto& r : results) v.push_back(get(r));
      return slowest_median(v);
    };
    const double local = collect([](const RankResult& r) { return r.local; });
    const double xt = gpus > 1 ? cufftxt(n, gpus, a) : 0.0;
    double a2a_bw = 0, ring_bw = 0;
    if (gpus > 1) {
      a2a_bw =
          static_cast<double>(results[0].bytes_to_others) / collect([](const RankResult& r) { return r.a2a; }) / 1e6;
      ring_bw =
          static_cast<double>(results[0].bytes_to_others) / collect([](const RankResult& r) { return r.ring; }) / 1e6;
    }
    std::printf(
        "n=%lld gpus=%d single %.3f ms, local FFTs alone %.3f ms, cufftXt %.3f ms, bare a2a %.1f GB/s, bare "
        "ring %.1f GB/s\n",
        static_cast<long long>(n), gpus, single, local, xt, a2a_bw, ring_bw);
    std::printf("%-30s %10s %9s %10s %10s %10s %8s\n", "config", "ms", "x single", "x cufftXt", "exch ms", "exch GB/s",
                "x bare");
    const auto list = configs(a, gpus);
    for (std::size_t c = 0; c < list.size(); ++c) {
      const double ms = collect([c](const RankResult& r) { return r.runs[c]; });
      const double exch = std::max(ms - local, 1e-6);
      const double bw = static_cast<double>(results[0].bytes_to_others) / exch / 1e6;
      const bool comparable = list[c].type == cp::FFTType::c2c && list[c].decomposition == cp::Decomposition::slab &&
                              list[c].layout == cp::ResultLayout::optimized && gpus > 1;
      std::printf("%-30s %10.3f %9.2f %10.2f %10s %10s %8s\n", list[c].label.c_str(), ms, single / ms,
                  gpus > 1 ? xt / ms : 0.0, comparable ? std::to_string(exch).c_str() : "-",
                  comparable ? std::to_string(bw).c_str() : "-",
                  comparable ? std::to_string(bw / std::max(a2a_bw, ring_bw)).c_str() : "-");
    }
    std::printf("rank 0: %s\n", results[0].described[list.size() - 1].c_str());
  }
  return 0;
}
