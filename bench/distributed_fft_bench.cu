// Distributed C2C c64 FFT on every visible GPU (ranks as threads, Communicator::local_all), slab decomposition.
//
//   distributed_fft_bench [--sizes 512,1024] [--reps 10] [--warmup 3]
//
// Per cube size n^3, in the same run and on random data (median of the repetitions after warm-up, each repetition
// timed on every rank with events and the slowest rank counted):
//  - single:   cuplan's single-GPU FFT of the whole array on GPU 0;
//  - dist nat / dist opt: one forward DistributedFFT, natural layout (two exchanges) and optimized (one);
//    speed-up = single / dist;
//  - exchange: dist opt minus the same local FFTs run alone (public FFT on the rank's stage boxes), i.e. pack, NCCL
//    and unpack of the one exchange; its bandwidth counts the bytes each rank sends to other ranks;
//  - cufftXt: one cufftXt plan over the same GPUs (cufftXtSetGPUs, single process), in place, timed on the host
//    around cufftXtExecDescriptorC2C with every GPU synchronised (two GPUs or more);
//  - a2a: a bare NCCL all-to-all (grouped ncclSend/ncclRecv, equal pieces) of the same bytes; ratio = exchange
//    bandwidth / a2a bandwidth.
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
  int reps = 10;
  int warmup = 3;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--sizes") {
      a.sizes.clear();
      for (char* tok = std::strtok(argv[i + 1], ","); tok; tok = std::strtok(nullptr, ","))
        a.sizes.push_back(std::atoll(tok));
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

struct RankResult {
  std::vector<double> natural, optimized, local, a2a;
  std::int64_t bytes_to_others = 0;
};

RankResult run_rank(cp::Communicator& comm, std::int64_t n, const Args& a, std::barrier<>& sync) {
  RankResult r;
  comm.device().use();
  const cp::Stream stream(comm.device());
  const cp::Shape g{n, n, n};
  const int ranks = comm.size();
  cp::DistributedFFTOptions nat{.decomposition = cp::Decomposition::slab, .stream = stream.ref()};
  cp::DistributedFFTOptions opt = nat;
  opt.result_layout = cp::ResultLayout::optimized;
  const auto boxes = cp::DistributedFFT::boxes(comm, g, cp::c64, opt);
  auto x = random_c64(boxes.input.shape(), comm.device(), stream.ref(), 7u + static_cast<unsigned>(comm.rank()));
  {
    cp::DistributedFFT plan(comm, g, x, nat);
    plan.plan();
    auto out = cp::Tensor::empty(plan.output_box().shape(), cp::c64, comm.device(), stream.ref());
    r.natural = time_on(stream.ref(), &sync, a, [&] { plan.execute({.stream = stream.ref(), .out = out.view()}); });
  }
  {
    cp::DistributedFFT plan(comm, g, x, opt);
    plan.plan();
    auto out = cp::Tensor::empty(boxes.output.shape(), cp::c64, comm.device(), stream.ref());
    r.optimized = time_on(stream.ref(), &sync, a, [&] { plan.execute({.stream = stream.ref(), .out = out.view()}); });
  }
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
  std::printf("distributed C2C c64, slab, %d GPU(s), median of %d after %d warm-up\n", gpus, a.reps, a.warmup);
  std::printf("%6s %4s %10s %10s %7s %10s %7s %10s %10s %10s %6s %11s\n", "n", "gpus", "single ms", "nat ms", "x nat",
              "opt ms", "x opt", "exch ms", "exch GB/s", "a2a GB/s", "ratio", "cufftXt ms");
  for (std::int64_t n : a.sizes) {
    const double single = single_gpu(n, a);
    std::vector<RankResult> results(comms.size());
    std::barrier<> sync(static_cast<std::ptrdiff_t>(comms.size()));
    std::vector<std::thread> threads;
    for (std::size_t r = 0; r < comms.size(); ++r)
      threads.emplace_back([&, r] { results[r] = run_rank(comms[r], n, a, sync); });
    for (auto& t : threads) t.join();
    auto collect = [&](auto member) {
      std::vector<std::vector<double>> v;
      for (const auto& r : results) v.push_back(r.*member);
      return slowest_median(v);
    };
    const double nat = collect(&RankResult::natural);
    const double opt = collect(&RankResult::optimized);
    const double local = collect(&RankResult::local);
    if (gpus > 1) {
      const double exch = std::max(opt - local, 1e-6);
      const double a2a = collect(&RankResult::a2a);
      const double exch_bw = static_cast<double>(results[0].bytes_to_others) / exch / 1e6;
      const double a2a_bw = static_cast<double>(results[0].bytes_to_others) / a2a / 1e6;
      const double xt = cufftxt(n, gpus, a);
      std::printf("%6lld %4d %10.3f %10.3f %7.2f %10.3f %7.2f %10.3f %10.1f %10.1f %6.2f %11.3f\n",
                  static_cast<long long>(n), gpus, single, nat, single / nat, opt, single / opt, exch, exch_bw, a2a_bw,
                  exch_bw / a2a_bw, xt);
    } else {
      std::printf("%6lld %4d %10.3f %10.3f %7.2f %10.3f %7.2f %10s %10s %10s %6s %11s\n", static_cast<long long>(n),
                  gpus, single, nat, single / nat, opt, single / opt, "-", "-", "-", "-", "-");
    }
  }
  return 0;
}
