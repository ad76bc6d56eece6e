// SPDX-License-Identifier: Apache-2.0
// Distributed FFT on every visible GPU, ranks as threads of one process (Communicator::local_all) or as one
// process per GPU (Communicator::from_unique_id), as MPI codes run.
//
//   distributed_fft_bench [--sizes 512,1024] [--reps 10] [--warmup 3] [--chunks 4] [--extra 1]
//                         [--mode threads|processes|both] [--fields 3]
//
// --inplace 1: adds rows of the in-place transform (DistributedFFTOptions::inplace, unitary scaling so that the
// repeated transforms stay finite), each checked afterwards on the transform of two deltas at 64 sampled points per
// rank (column "check": the largest error relative to the values' size). --only TEXT: only the rows whose label
// contains TEXT, and none of the references (single GPU, local FFTs, bare exchanges, cufftXt), for sizes that only
// an in-place transform fits (2048^3 on four GPUs).
// CUPLAN_BENCH_PROGRESS=1 prints each rank's progress (planning, timing, timed) to stderr.
// --fields F: adds rows of F fields in one execute (DistributedFFTOptions::fields), copy engines and NCCL,
// optimized layout; their "x single" compares with F single-GPU transforms.
// --mode processes: the bench starts itself once per GPU (fork and exec, so every rank starts CUDA and NCCL
// fresh), the ranks share the NCCL unique id through a file, and each writes its timings to a file that this
// process reads; the bare copy-engine ring and cufftXt are measured only with threads. --mode both runs the
// processes first and then the threads, on the same sizes and data, and adds a column: process time / thread time.
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
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cuplan/cuplan.hpp>
#include <cuplan/distributed.hpp>

#include "support/bench_check.hpp"
#include "support/rank_processes.hpp"
#include "support/rank_timing.hpp"

namespace cp = cuplan;
using bench::Align;
using bench::median;
using bench::slowest_median;
using bench::time_on;

namespace {

struct Args {
  std::vector<std::int64_t> sizes{512, 1024};
  std::vector<int> chunks{4};
  int reps = 10;
  int warmup = 3;
  bool extra = false;
  int fields = 0;
  bool inplace = false;
  std::string only;
  std::string mode = "threads";
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
    } else if (key == "--inplace") {
      a.inplace = std::atoi(argv[i + 1]) != 0;
    } else if (key == "--only") {
      a.only = argv[i + 1];
    } else if (key == "--fields") {
      a.fields = std::atoi(argv[i + 1]);
    } else if (key == "--mode") {
      a.mode = bench::rank_mode(argv[i + 1]);
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

double single_gpu(std::int64_t n, const Args& a) {
  cp::DeviceScope scope(cp::Device::cuda(0));
  const cp::Stream stream(cp::Device::cuda(0));
  auto x = random_c64({n, n, n}, cp::Device::cuda(0), stream.ref(), 1);
  auto out = cp::Tensor::empty({n, n, n}, cp::c64, cp::Device::cuda(0), stream.ref());
  cp::FFT fft(x, {.stream = stream.ref()});
  fft.plan();
  const Align none(nullptr);
  const auto ms =
      time_on(stream.ref(), none, a.warmup, a.reps, [&] { fft.execute({.stream = stream.ref(), .out = out.view()}); });
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
  int fields = 1;
  bool inplace = false;
};

std::vector<Config> configs(const Args& a, int gpus) {
  std::vector<Config> c;
  c.push_back({"nccl natural", cp::ExchangeMethod::nccl, 0, cp::ResultLayout::natural});
  c.push_back({"nccl optimized", cp::ExchangeMethod::nccl, 0});
  if (gpus == 1) return c;
  c.push_back({"ce natural", cp::ExchangeMethod::copy_engine, a.chunks.front(), cp::ResultLayout::natural});
  for (int k : a.chunks) c.push_back({"ce optimized chunks " + std::to_string(k), cp::ExchangeMethod::copy_engine, k});
  if (a.fields > 1) {
    const std::string f = std::to_string(a.fields);
    c.push_back({"ce optimized " + f + " fields", cp::ExchangeMethod::copy_engine, a.chunks.back(),
                 cp::ResultLayout::optimized, cp::FFTType::c2c, cp::Decomposition::slab, a.fields});
    c.push_back({"nccl optimized " + f + " fields", cp::ExchangeMethod::nccl, 0, cp::ResultLayout::optimized,
                 cp::FFTType::c2c, cp::Decomposition::slab, a.fields});
  }
  if (a.inplace) {
    c.push_back({"ce optimized in place", cp::ExchangeMethod::copy_engine, a.chunks.back(), cp::ResultLayout::optimized,
                 cp::FFTType::c2c, cp::Decomposition::slab, 1, true});
    c.push_back({"nccl optimized in place", cp::ExchangeMethod::nccl, 0, cp::ResultLayout::optimized, cp::FFTType::c2c,
                 cp::Decomposition::slab, 1, true});
  }
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
  if (!a.only.empty()) std::erase_if(c, [&](const Config& x) { return x.label.find(a.only) == std::string::npos; });
  return c;
}

struct RankResult {
  std::vector<std::vector<double>> runs;  // per configuration
  std::vector<double> check;              // per configuration: the in-place check's error (-1: not checked)
  std::vector<std::string> described;
  std::vector<double> local, a2a, ring;
  std::int64_t bytes_to_others = 0;
};

__global__ void to_real(const float2* x, float* y, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    y[i] = x[i].x;
}

// The in-place rows' check: the operand holds 1 at global index p and 2 at q (zero elsewhere); the unitary
// transform is (exp(-2 pi i k.p / n) + 2 exp(-2 pi i k.q / n)) / sqrt(N). 64 points of this rank's output box are
// compared with that in double; returns the largest error relative to 3 / sqrt(N).
double check_deltas(cp::DistributedFFT& plan, const cp::Tensor& x, std::int64_t n, cp::StreamRef stream, int rank) {
  const std::int64_t p[3] = {1, 2, 3};
  const std::int64_t q[3] = {n / 2 + 5, 7, n - 3};
  BENCH_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, static_cast<std::size_t>(x.numel()) * 8, stream));
  const auto in = plan.input_box();
  auto place = [&](const std::int64_t* at, float value) {
    std::int64_t offset = 0;
    for (int d = 0; d < 3; ++d) {
      const std::int64_t local = at[d] - in.offset[static_cast<std::size_t>(d)];
      if (local < 0 || local >= in.extent[static_cast<std::size_t>(d)]) return;
      offset = offset * in.extent[static_cast<std::size_t>(d)] + local;
    }
    const float2 v = make_float2(value, 0.0f);
    BENCH_CUDA_CHECK(
        cudaMemcpyAsync(static_cast<float2*>(x.data()) + offset, &v, sizeof v, cudaMemcpyHostToDevice, stream));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // `v` is on the stack
  };
  place(p, 1.0f);
  place(q, 2.0f);
  const cp::Tensor y = plan.execute({.stream = stream});
  const auto out = plan.output_box();
  const double total = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const double pi = 3.14159265358979323846;
  double worst = 0;
  std::uint64_t state = 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(rank);
  for (int s = 0; s < 64; ++s) {
    std::int64_t k[3], offset = 0;
    for (int d = 0; d < 3; ++d) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const auto e = out.extent[static_cast<std::size_t>(d)];
      const std::int64_t local = static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(e));
      k[d] = out.offset[static_cast<std::size_t>(d)] + local;
      offset = offset * e + local;
    }
    float2 got{};
    BENCH_CUDA_CHECK(cudaMemcpyAsync(&got, static_cast<const float2*>(y.data()) + offset, sizeof got,
                                     cudaMemcpyDeviceToHost, stream));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    double phase_p = 0, phase_q = 0;
    for (int d = 0; d < 3; ++d) {
      phase_p += static_cast<double>((k[d] * p[d]) % n) / static_cast<double>(n);
      phase_q += static_cast<double>((k[d] * q[d]) % n) / static_cast<double>(n);
    }
    const double re = (std::cos(-2 * pi * phase_p) + 2 * std::cos(-2 * pi * phase_q)) / std::sqrt(total);
    const double im = (std::sin(-2 * pi * phase_p) + 2 * std::sin(-2 * pi * phase_q)) / std::sqrt(total);
    worst = std::max(worst, std::hypot(got.x - re, got.y - im) / (3 / std::sqrt(total)));
  }
  return worst;
}

// One rank's rows. `host_sync` and `ring_targets` are shared by the ranks when they are threads (the bare
// copy-engine ring needs the peers' addresses); null for processes, which then skip the ring.
RankResult run_rank(cp::Communicator& comm, std::int64_t n, const Args& a, std::barrier<>* host_sync,
                    std::vector<void*>* ring_targets) {
  RankResult r;
  comm.device().use();
  const cp::Stream stream(comm.device());
  const Align sync(&comm, host_sync);
  const cp::Shape g{n, n, n};
  const int ranks = comm.size();
  for (const Config& c : configs(a, ranks)) {
    cp::DistributedFFTOptions o{.decomposition = c.decomposition,
                                .fft_type = c.type,
                                .result_layout = c.layout,
                                .stream = stream.ref(),
                                .exchange = c.exchange,
                                .chunks = c.chunks,
                                .fields = c.fields,
                                .inplace = c.inplace};
    if (c.inplace) o.normalization = cp::Normalization::ortho;  // repeated in-place transforms stay finite
    if (c.decomposition == cp::Decomposition::pencil) o.process_grid = std::array<int, 2>{2, 2};
    const bool real = c.type == cp::FFTType::r2c;
    const auto boxes = cp::DistributedFFT::boxes(comm, g, real ? cp::f32 : cp::c64, o);
    auto with_fields = [&](cp::Shape box) {
      if (c.fields == 1) return box;
      cp::Shape s{c.fields};
      for (std::int64_t e : box) s.push_back(e);
      return s;
    };
    auto x = random_c64(with_fields(boxes.input.shape()), comm.device(), stream.ref(),
                        7u + static_cast<unsigned>(comm.rank()));
    if (real) {
      auto xr = cp::Tensor::empty(boxes.input.shape(), cp::f32, comm.device(), stream.ref());
      to_real<<<1024, 256, 0, stream.native()>>>(x.data<float2>(), xr.data<float>(), xr.numel());
      BENCH_CUDA_CHECK(cudaGetLastError());
      x = std::move(xr);
    }
    const bool progress = std::getenv("CUPLAN_BENCH_PROGRESS") != nullptr;
    if (progress)
      std::fprintf(stderr, "rank %d n=%lld %s: planning\n", comm.rank(), static_cast<long long>(n), c.label.c_str());
    cp::DistributedFFT plan(comm, g, x, o);
    plan.plan();
    if (progress) std::fprintf(stderr, "rank %d %s: planned, timing\n", comm.rank(), c.label.c_str());
    if (c.inplace) {
      r.runs.push_back(
          time_on(stream.ref(), sync, a.warmup, a.reps, [&] { (void)plan.execute({.stream = stream.ref()}); }));
      r.check.push_back(check_deltas(plan, x, n, stream.ref(), comm.rank()));
    } else {
      auto out =
          cp::Tensor::empty(with_fields(plan.output_box().shape()), plan.result_dtype(), comm.device(), stream.ref());
      r.runs.push_back(time_on(stream.ref(), sync, a.warmup, a.reps,
                               [&] { plan.execute({.stream = stream.ref(), .out = out.view()}); }));
      r.check.push_back(-1);
    }
    r.described.push_back(plan.describe());
    if (progress) std::fprintf(stderr, "rank %d %s: timed\n", comm.rank(), c.label.c_str());
    sync();  // no rank frees its buffers while a peer's copies may still reach them
  }
  if (!a.only.empty()) return r;  // no references (sizes only the selected rows fit)
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
    r.local = time_on(stream.ref(), sync, a.warmup, a.reps, [&] {
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
    r.a2a = time_on(stream.ref(), sync, a.warmup, a.reps, [&] {
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
    if (host_sync == nullptr) return r;
    // Peers write into plain cudaMalloc memory (pool memory is not mapped for peers unless the pool says so).
    void* ring_recv = nullptr;
    BENCH_CUDA_CHECK(cudaMalloc(&ring_recv, bytes));
    (*ring_targets)[static_cast<std::size_t>(comm.rank())] = ring_recv;
    for (int p = 0; p < ranks; ++p) {
      if (p == comm.rank()) continue;
      const cudaError_t e = cudaDeviceEnablePeerAccess(p, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        (void)cudaGetLastError();
      else
        BENCH_CUDA_CHECK(e);
    }
    host_sync->arrive_and_wait();
    r.ring = time_on(stream.ref(), sync, a.warmup, a.reps, [&] {
      for (int step = 1; step < ranks; ++step) {
        const int p = (comm.rank() + step) % ranks;
        BENCH_CUDA_CHECK(
            cudaMemcpyPeerAsync(static_cast<char*>((*ring_targets)[static_cast<std::size_t>(p)]) + comm.rank() * piece,
                                p, static_cast<char*>(send.data()) + p * piece, comm.device().index(), piece, stream));
      }
    });
    stream.synchronize();
    host_sync->arrive_and_wait();  // no rank frees its receive buffer while a peer still copies into it
    BENCH_CUDA_CHECK(cudaFree(ring_recv));
  }
  stream.synchronize();
  return r;
}

// Process mode (support/rank_processes.hpp): each rank's results as series keyed by the size.
bench::Series to_series(const std::map<std::int64_t, RankResult>& by_size) {
  bench::Series out;
  for (const auto& [n, r] : by_size) {
    auto& named = out[std::to_string(n)];
    for (std::size_t c = 0; c < r.runs.size(); ++c) named["run" + std::to_string(c)] = r.runs[c];
    named["check"] = r.check;
    named["local"] = r.local;
    named["a2a"] = r.a2a;
    named["bytes"] = {static_cast<double>(r.bytes_to_others)};
  }
  return out;
}

RankResult from_series(const std::map<std::string, std::vector<double>>& named) {
  RankResult r;
  // "run0", "run1", ... in configuration order (the map orders "run10" before "run2").
  for (std::size_t c = 0; named.count("run" + std::to_string(c)); ++c)
    r.runs.push_back(named.at("run" + std::to_string(c)));
  if (named.count("check")) r.check = named.at("check");
  if (named.count("local")) r.local = named.at("local");
  if (named.count("a2a")) r.a2a = named.at("a2a");
  if (named.count("bytes") && !named.at("bytes").empty())
    r.bytes_to_others = static_cast<std::int64_t>(named.at("bytes")[0]);
  return r;
}

// A rank started by run_processes: joins the communicator and writes its results; the exit code tells the parent.
int child_main(const bench::ChildRank& child, const Args& a) {
  cp::Communicator comm = bench::join_children(child);
  std::map<std::int64_t, RankResult> by_size;
  for (std::int64_t n : a.sizes) by_size[n] = run_rank(comm, n, a, nullptr, nullptr);
  return bench::write_series(child, to_series(by_size)) ? 0 : 1;
}

// One process per GPU (this executable again, with the same arguments); their results per size, per rank.
std::map<std::int64_t, std::vector<RankResult>> run_processes(int gpus, char** argv) {
  std::map<std::int64_t, std::vector<RankResult>> out;
  for (const bench::Series& rank : bench::launch_ranks(gpus, argv))
    for (const auto& [key, named] : rank) out[std::stoll(key)].push_back(from_series(named));
  return out;
}

std::vector<RankResult> run_threads(std::vector<cp::Communicator>& comms, std::int64_t n, const Args& a) {
  std::vector<RankResult> results(comms.size());
  std::barrier<> sync(static_cast<std::ptrdiff_t>(comms.size()));
  std::vector<void*> ring_targets(comms.size(), nullptr);
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < comms.size(); ++r)
    threads.emplace_back([&, r] { results[r] = run_rank(comms[r], n, a, &sync, &ring_targets); });
  for (auto& t : threads) t.join();
  return results;
}

template <class Get>
double collect(const std::vector<RankResult>& results, Get get) {
  std::vector<std::vector<double>> v;
  for (const auto& r : results) v.push_back(get(r));
  return slowest_median(v);
}

// One table per size. `threads` or `procs` may be empty (that mode did not run); the ratios against the bare
// exchanges and cufftXt come from the thread run.
void report(std::int64_t n, int gpus, const Args& a, double single, double xt, const std::vector<RankResult>& threads,
            const std::vector<RankResult>& procs) {
  const std::vector<RankResult>& main_run = threads.empty() ? procs : threads;
  const double local = collect(main_run, [](const RankResult& r) { return r.local; });
  double a2a_bw = 0, ring_bw = 0;
  const double bytes = static_cast<double>(main_run[0].bytes_to_others);
  if (gpus > 1 && a.only.empty()) {
    a2a_bw = bytes / collect(main_run, [](const RankResult& r) { return r.a2a; }) / 1e6;
    if (!threads.empty()) ring_bw = bytes / collect(threads, [](const RankResult& r) { return r.ring; }) / 1e6;
  }
  std::printf(
      "n=%lld gpus=%d ranks as %s: single %.3f ms, local FFTs alone %.3f ms, cufftXt %.3f ms, bare a2a %.1f GB/s, "
      "bare ring %.1f GB/s\n",
      static_cast<long long>(n), gpus,
      threads.empty() ? "processes" : (procs.empty() ? "threads" : "threads (and processes, last two columns)"), single,
      local, xt, a2a_bw, ring_bw);
  std::printf("%-30s %10s %9s %10s %10s %10s %8s %10s %8s %9s\n", "config", "ms", "x single", "x cufftXt", "exch ms",
              "exch GB/s", "x bare", "procs ms", "x thr", "check");
  const auto list = configs(a, gpus);
  for (std::size_t c = 0; c < list.size(); ++c) {
    const double ms = collect(main_run, [c](const RankResult& r) { return r.runs[c]; });
    const double exch = std::max(ms - local, 1e-6);
    const double bw = bytes / exch / 1e6;
    const bool comparable = list[c].type == cp::FFTType::c2c && list[c].decomposition == cp::Decomposition::slab &&
                            list[c].layout == cp::ResultLayout::optimized && list[c].fields == 1 && gpus > 1 &&
                            a.only.empty();
    double check = -1;  // the worst rank's in-place check
    for (const RankResult& r : main_run)
      if (c < r.check.size()) check = std::max(check, r.check[c]);
    char check_text[32] = "-";
    if (check >= 0) std::snprintf(check_text, sizeof check_text, "%.2e", check);
    std::string procs_ms = "-", procs_ratio = "-";
    if (!threads.empty() && !procs.empty()) {
      const double p = collect(procs, [c](const RankResult& r) { return r.runs[c]; });
      procs_ms = std::to_string(p);
      procs_ratio = std::to_string(p / ms);
    }
    const double per_field = list[c].fields;  // F fields against F single-GPU transforms and F cufftXt calls
    std::printf("%-30s %10.3f %9.2f %10.2f %10s %10s %8s %10s %8s %9s\n", list[c].label.c_str(), ms,
                single * per_field / ms, xt > 0 ? xt * per_field / ms : 0.0,
                comparable ? std::to_string(exch).c_str() : "-", comparable ? std::to_string(bw).c_str() : "-",
                comparable ? std::to_string(bw / std::max(a2a_bw, ring_bw)).c_str() : "-", procs_ms.c_str(),
                procs_ratio.c_str(), check_text);
  }
  if (!threads.empty())
    for (std::size_t c = 0; c < list.size(); ++c)
      if (list[c].inplace || c + 1 == list.size()) std::printf("rank 0: %s\n", threads[0].described[c].c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row as it is measured, also into a file cut short by a timeout
  bench::ChildArgs child_args(argc, argv);   // parse() tokenises in place: keep the originals for the children
  const Args a = parse(argc, argv);
  if (const auto child = bench::child_rank()) return child_main(*child, a);
  if (!cp::cuda_available()) {
    std::printf("distributed_fft_bench: no CUDA device on this machine; nothing measured\n");
    return 77;
  }
  const int gpus = cp::cuda_device_count();
  std::printf("distributed FFT, %d GPU(s), median of %d after %d warm-up, the slowest rank per repetition\n", gpus,
              a.reps, a.warmup);
  // The processes run first: this process has not touched the GPUs' memory yet, and the children start fresh.
  std::map<std::int64_t, std::vector<RankResult>> procs;
  if (a.mode != "threads") procs = run_processes(gpus, child_args.argv());
  std::vector<cp::Communicator> comms;
  if (a.mode != "processes") {
    std::vector<int> devices;
    for (int d = 0; d < gpus; ++d) devices.push_back(d);
    comms = cp::Communicator::local_all(devices);
  }
  for (std::int64_t n : a.sizes) {
    const double single = a.only.empty() ? single_gpu(n, a) : 0.0;
    const std::vector<RankResult> threads = comms.empty() ? std::vector<RankResult>{} : run_threads(comms, n, a);
    const double xt = gpus > 1 && a.only.empty() ? cufftxt(n, gpus, a) : 0.0;
    report(n, gpus, a, single, xt, threads, procs.count(n) ? procs[n] : std::vector<RankResult>{});
  }
  return 0;
}
