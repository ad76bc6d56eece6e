// SPDX-License-Identifier: Apache-2.0
// DistributedMatmul and Redistribute on 1, 2, 4 ... GPUs, ranks as threads of one process (Communicator::local_all).
//
//   distributed_matmul_bench [--sizes 16384] [--gpus 1,2,4] [--reps 10] [--warmup 3] [--reference 8192]
//                            [--algorithms allgather_gemm,summa] [--redistribute 1024] [--single 1]
//
// Per square size n (bf16, random data in [-1, 1), median of the repetitions after warm-up; each repetition starts
// on every rank after one NCCL all-reduce and counts the slowest rank):
//  - single: cuplan's single-GPU Matmul of the whole n^3 product on GPU 0 (--single 0 skips it, e.g. where the
//    whole operands do not fit); --reference N adds the single-GPU rate at N^3 for the per-GPU comparison;
//  - per GPU count and algorithm: DistributedMatmul in the algorithm's native layouts (nothing redistributed):
//    time, TFLOP/s, TFLOP/s per GPU, speed-up = single / distributed;
//  - overlap (allgather_gemm): the same local GEMMs alone (per rank, P Matmuls of n/P x n by n x n/P, as the
//    all-gather steps run them) and the ring exchange alone (P-1 grouped ncclSend/ncclRecv of the n/P x n blocks), and
//    distributed / max(gemm alone, exchange alone), which is 1 for a perfect overlap.
// --redistribute N (0 skips): Redistribute of an N^3 c64 array from slabs (axis 0) to pencils (axes 1, 2) on each
// GPU count, against the bare exchange of the same bytes (the faster of grouped ncclSend/ncclRecv of contiguous
// per-peer buffers and copy-engine copies into the peers' buffers, one stream per peer), ratio = bare / Redistribute.

#include <nccl.h>

#include <algorithm>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cuplan/cuplan.hpp>
#include <cuplan/distributed_matmul.hpp>
#include <cuplan/redistribute.hpp>

#include "support/bench_check.hpp"
#include "support/rank_timing.hpp"

namespace cp = cuplan;
using bench::Align;
using bench::median;
using bench::slowest_median;
using bench::time_on;

namespace {

struct Args {
  std::vector<std::int64_t> sizes{16384};
  std::vector<std::int64_t> gpus{1, 2, 4};
  std::vector<std::string> algorithms{"allgather_gemm", "summa"};
  int reps = 10;
  int warmup = 3;
  std::int64_t reference = 8192;
  std::int64_t redistribute = 1024;
  bool single = true;
};

template <class T>
std::vector<T> list(const std::string& text) {
  std::vector<T> out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ','))
    if constexpr (std::is_same_v<T, std::string>)
      out.push_back(item);
    else
      out.push_back(static_cast<T>(std::stoll(item)));
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--sizes")
      a.sizes = list<std::int64_t>(value);
    else if (key == "--gpus")
      a.gpus = list<std::int64_t>(value);
    else if (key == "--algorithms")
      a.algorithms = list<std::string>(value);
    else if (key == "--reps")
      a.reps = std::stoi(value);
    else if (key == "--warmup")
      a.warmup = std::stoi(value);
    else if (key == "--reference")
      a.reference = std::stoll(value);
    else if (key == "--redistribute")
      a.redistribute = std::stoll(value);
    else if (key == "--single")
      a.single = value != "0";
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  return a;
}

__global__ void fill_random(__nv_bfloat16* x, std::int64_t n, unsigned seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed * 40503u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    x[i] = __float2bfloat16(static_cast<float>(h & 0xFFFF) / 32768.0f - 1.0f);
  }
}

cp::Tensor random_bf16(const cp::Shape& shape, cp::Device device, cp::StreamRef stream, unsigned seed) {
  auto t = cp::Tensor::empty(shape, cp::bf16, device, stream);
  fill_random<<<1024, 256, 0, stream.native()>>>(static_cast<__nv_bfloat16*>(t.data()), t.numel(), seed);
  BENCH_CUDA_CHECK(cudaGetLastError());
  return t;
}

double tflops(std::int64_t m, std::int64_t n, std::int64_t k, double ms) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / (ms * 1e-3) / 1e12;
}

double single_gpu(std::int64_t n, const Args& a) {
  cp::DeviceScope scope(cp::Device::cuda(0));
  const cp::Stream stream(cp::Device::cuda(0));
  auto x = random_bf16({n, n}, cp::Device::cuda(0), stream.ref(), 1);
  auto y = random_bf16({n, n}, cp::Device::cuda(0), stream.ref(), 2);
  auto out = cp::Tensor::empty({n, n}, cp::bf16, cp::Device::cuda(0), stream.ref());
  cp::Matmul mm(x, y, {.stream = stream.ref()});
  mm.plan();
  const Align none(nullptr);
  const auto ms =
      time_on(stream.ref(), none, a.warmup, a.reps, [&] { mm.execute({.stream = stream.ref(), .out = out.view()}); });
  stream.synchronize();
  return median(ms);
}

// Runs fn(rank, comm) on one thread per communicator.
void on_ranks(std::vector<cp::Communicator>& comms, const std::function<void(int, cp::Communicator&)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < static_cast<int>(comms.size()); ++r)
    threads.emplace_back([&, r] {
      BENCH_CUDA_CHECK(cudaSetDevice(comms[static_cast<std::size_t>(r)].device().index()));
      fn(r, comms[static_cast<std::size_t>(r)]);
    });
  for (auto& t : threads) t.join();
}

cp::MatrixLayout native(cp::MatrixDistribution d) {
  return {d, {0, 0}, {0, 0}};
}

struct Row {
  double dist = 0, gemm_alone = 0, exchange_alone = 0;
  std::string describe;
};

Row distributed(std::vector<cp::Communicator>& comms, std::int64_t n, const std::string& algorithm, const Args& a) {
  const auto ranks = static_cast<std::size_t>(comms.size());
  std::vector<std::vector<double>> dist(ranks), gemm(ranks), exchange(ranks);
  Row row;
  std::mutex m;
  const bool ag = algorithm == "allgather_gemm";
  on_ranks(comms, [&](int r, cp::Communicator& comm) {
    const cp::Stream stream(comm.device());
    cp::DistributedMatmulOptions o;
    o.stream = stream.ref();
    if (ag) {
      o.layout_a = native(cp::MatrixDistribution::row_blocks);
      o.layout_b = o.layout_d = native(cp::MatrixDistribution::column_blocks);
      o.algorithm = cp::DistributedMatmulAlgorithm::allgather_gemm;
    } else {
      o.layout_a = o.layout_b = o.layout_d = native(cp::MatrixDistribution::grid);
      o.algorithm = cp::DistributedMatmulAlgorithm::summa;
    }
    const auto blocks = cp::DistributedMatmul::blocks(comm, n, n, n, o);
    auto x = random_bf16(blocks.a.local_shape, comm.device(), stream.ref(), 3u + static_cast<unsigned>(r));
    auto y = random_bf16(blocks.b.local_shape, comm.device(), stream.ref(), 5u + static_cast<unsigned>(r));
    auto d = cp::Tensor::empty(blocks.d.local_shape, cp::bf16, comm.device(), stream.ref());
    cp::DistributedMatmul mm(comm, n, n, n, x, y, o);
    mm.plan();
    const Align align(&comm);
    auto times = time_on(stream.ref(), align, a.warmup, a.reps, [&] {
      mm.execute({.stream = stream.ref(), .after = {}, .release_workspace = false, .out = d.view()});
    });
    std::vector<double> g, e;
    if (ag && comm.size() > 1) {
      // The same local GEMMs alone: one per block of A's rows (as the all-gather steps run them), into D's rows.
      const std::int64_t cols = blocks.b.local_shape[1];
      auto whole_a = random_bf16({n, n}, comm.device(), stream.ref(), 7);
      auto out = cp::Tensor::empty({n, cols}, cp::bf16, comm.device(), stream.ref());
      std::vector<cp::Matmul> steps;
      std::vector<cp::TensorView> outs;
      for (std::int64_t q = 0, first = 0; q < comm.size(); ++q) {
        const std::int64_t rows = n / comm.size() + (q < n % comm.size() ? 1 : 0);
        const cp::TensorView block(static_cast<const char*>(whole_a.data()) + static_cast<std::size_t>(first * n) * 2,
                                   cp::bf16, {rows, n}, cp::Strides{n, 1}, comm.device(), cp::MemorySpace::device);
        outs.emplace_back(static_cast<const char*>(out.data()) + static_cast<std::size_t>(first * cols) * 2, cp::bf16,
                          cp::Shape{rows, cols}, cp::Strides{cols, 1}, comm.device(), cp::MemorySpace::device);
        steps.emplace_back(block, y, cp::MatmulOptions{.stream = stream.ref()});
        steps.back().plan();
        first += rows;
      }
      g = time_on(stream.ref(), align, a.warmup, a.reps, [&] {
        for (std::size_t q = 0; q < steps.size(); ++q) steps[q].execute({.stream = stream.ref(), .out = outs[q]});
      });
      // The ring alone: P - 1 steps, each passing one n/P x n block on and receiving the next.
      const std::size_t bytes = static_cast<std::size_t>(x.numel()) * 2;
      auto bufs = cp::Tensor::empty({2 * x.numel()}, cp::bf16, comm.device(), stream.ref());
      auto* base = static_cast<char*>(bufs.data());
      const int next = (comm.rank() + 1) % comm.size(), prev = (comm.rank() - 1 + comm.size()) % comm.size();
      e = time_on(stream.ref(), align, a.warmup, a.reps, [&] {
        for (int s = 0; s + 1 < comm.size(); ++s) {
          BENCH_NCCL_CHECK(ncclGroupStart());
          BENCH_NCCL_CHECK(ncclSend(base + (s % 2) * bytes, bytes, ncclUint8, next, comm.native(), stream.native()));
          BENCH_NCCL_CHECK(
              ncclRecv(base + ((s + 1) % 2) * bytes, bytes, ncclUint8, prev, comm.native(), stream.native()));
          BENCH_NCCL_CHECK(ncclGroupEnd());
        }
      });
    }
    std::lock_guard lock(m);
    dist[static_cast<std::size_t>(r)] = times;
    gemm[static_cast<std::size_t>(r)] = g;
    exchange[static_cast<std::size_t>(r)] = e;
    if (r == 0) row.describe = mm.describe();
  });
  row.dist = slowest_median(dist);
  if (!gemm[0].empty()) {
    row.gemm_alone = slowest_median(gemm);
    row.exchange_alone = slowest_median(exchange);
  }
  return row;
}

// Redistribute slab (axis 0) -> pencil (axes 1, 2) of an n^3 c64 array, and the bare exchange of the same bytes.
void redistribute(std::vector<cp::Communicator>& comms, std::int64_t n, const Args& a) {
  const int ranks = static_cast<int>(comms.size());
  const cp::Shape shape{n, n, n};
  const std::array<int, 2> grid = ranks >= 4 ? std::array<int, 2>{2, ranks / 2} : std::array<int, 2>{1, ranks};
  std::vector<std::vector<double>> rd(comms.size()), nccl(comms.size()), ce(comms.size());
  std::string method;
  std::mutex m;
  std::vector<void*> ce_buffers(comms.size(), nullptr);
  std::barrier<> sync(ranks);
  on_ranks(comms, [&](int r, cp::Communicator& comm) {
    const cp::Stream stream(comm.device());
    const auto in = cp::slab_box(shape, 0, ranks, r), out = cp::pencil_box(shape, {1, 2}, grid, r);
    auto x = cp::Tensor::empty(in.shape(), cp::c64, comm.device(), stream.ref());
    BENCH_CUDA_CHECK(cudaMemsetAsync(x.data(), 1, static_cast<std::size_t>(x.numel()) * 8, stream.native()));
    auto y = cp::Tensor::empty(out.shape(), cp::c64, comm.device(), stream.ref());
    cp::Redistribute op(comm, shape, in, out, x, {.stream = stream.ref()});
    op.plan();
    const Align align(&comm);
    auto t = time_on(stream.ref(), align, a.warmup, a.reps,
                     [&] { op.execute({.stream = stream.ref(), .after = {}, .out = y.view()}); });
    // Bytes rank p sends rank q: p's slab inside q's pencil.
    auto bytes = [&](int p, int q) {
      const auto from_box = cp::slab_box(shape, 0, ranks, p), to_box = cp::pencil_box(shape, {1, 2}, grid, q);
      std::size_t count = 8;
      for (std::size_t d = 0; d < 3; ++d) {
        const std::int64_t lo = std::max(from_box.offset[d], to_box.offset[d]);
        const std::int64_t hi = std::min(from_box.offset[d] + from_box.extent[d], to_box.offset[d] + to_box.extent[d]);
        count *= static_cast<std::size_t>(std::max<std::int64_t>(0, hi - lo));
      }
      return count;
    };
    std::vector<std::size_t> to(static_cast<std::size_t>(ranks)), from(static_cast<std::size_t>(ranks)),
        landing(static_cast<std::size_t>(ranks));
    for (int q = 0; q < ranks; ++q) {
      to[static_cast<std::size_t>(q)] = bytes(r, q);
      from[static_cast<std::size_t>(q)] = bytes(q, r);
      for (int p = 0; p < r; ++p) landing[static_cast<std::size_t>(q)] += bytes(p, q);  // where r's piece lands in q
    }
    auto* send = static_cast<char*>(x.data());
    auto* recv = static_cast<char*>(y.data());
    auto bare_nccl = time_on(stream.ref(), align, a.warmup, a.reps, [&] {
      std::size_t so = 0, ro = 0;
      BENCH_NCCL_CHECK(ncclGroupStart());
      for (int q = 0; q < ranks; ++q) {
        const auto qi = static_cast<std::size_t>(q);
        if (q != r) {
          BENCH_NCCL_CHECK(ncclSend(send + so, to[qi], ncclUint8, q, comm.native(), stream.native()));
          BENCH_NCCL_CHECK(ncclRecv(recv + ro, from[qi], ncclUint8, q, comm.native(), stream.native()));
        }
        so += to[qi];
        ro += from[qi];
      }
      BENCH_NCCL_CHECK(ncclGroupEnd());
    });
    // Copy engines: every rank's receive array is visible to every other (one process, peer access).
    ce_buffers[static_cast<std::size_t>(r)] = y.data();
    bool reachable = true;
    for (int q = 0; q < ranks; ++q)
      if (q != r) {
        int can = 0;
        BENCH_CUDA_CHECK(
            cudaDeviceCanAccessPeer(&can, comm.device().index(), comms[static_cast<std::size_t>(q)].device().index()));
        if (!can) {
          reachable = false;
          continue;
        }
        const cudaError_t status = cudaDeviceEnablePeerAccess(comms[static_cast<std::size_t>(q)].device().index(), 0);
        if (status != cudaErrorPeerAccessAlreadyEnabled) BENCH_CUDA_CHECK(status);
        (void)cudaGetLastError();
      }
    sync.arrive_and_wait();
    std::vector<cp::Stream> side;
    for (int q = 0; q < ranks; ++q) side.emplace_back(comm.device());
    cp::Event fork, joined;
    auto bare_ce = !reachable ? std::vector<double>(static_cast<std::size_t>(a.reps), 1e30)
                              : time_on(stream.ref(), align, a.warmup, a.reps, [&] {
                                  fork.record(stream.ref());
                                  std::size_t so = 0;
                                  for (int q = 0; q < ranks; ++q) {
                                    const auto qi = static_cast<std::size_t>(q);
                                    if (q != r) {
                                      side[qi].wait(fork);
                                      // Into the peer's array, packed in sender order (the bytes a Redistribute moves,
                                      // without its layout).
                                      BENCH_CUDA_CHECK(cudaMemcpyPeerAsync(
                                          static_cast<char*>(ce_buffers[qi]) + landing[qi], comms[qi].device().index(),
                                          send + so, comm.device().index(), to[qi], side[qi].native()));
                                      joined.record(side[qi].ref());
                                      stream.wait(joined);
                                    }
                                    so += to[qi];
                                  }
                                });
    sync.arrive_and_wait();  // no rank frees its array while a peer may still copy into it
    std::lock_guard lock(m);
    rd[static_cast<std::size_t>(r)] = t;
    nccl[static_cast<std::size_t>(r)] = bare_nccl;
    ce[static_cast<std::size_t>(r)] = bare_ce;
    if (r == 0) method = std::string(cp::to_string(op.exchange_method()));
  });
  const double t_rd = slowest_median(rd), t_nccl = slowest_median(nccl), t_ce = slowest_median(ce);
  const double bare = std::min(t_nccl, t_ce);
  std::printf(
      "redistribute %lld^3 c64 slab->pencil %dx%d on %d GPU(s) by %s: %.3f ms; bare NCCL %.3f ms, bare copy "
      "engine %.3f ms; bare / Redistribute = %.2f\n",
      static_cast<long long>(n), grid[0], grid[1], ranks, method.c_str(), t_rd, t_nccl, t_ce, bare / t_rd);
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  if (!cp::cuda_available()) {
    std::printf("distributed_matmul_bench: no CUDA device; nothing to measure\n");
    return 0;
  }
  const int available = cp::cuda_device_count();
  if (a.reference > 0) {
    const double ms = single_gpu(a.reference, a);
    std::printf("reference single GPU bf16 %lld^3: %.3f ms, %.1f TFLOP/s\n", static_cast<long long>(a.reference), ms,
                tflops(a.reference, a.reference, a.reference, ms));
  }
  for (std::int64_t n : a.sizes) {
    double single = 0;
    if (a.single) {
      single = single_gpu(n, a);
      std::printf("single GPU bf16 %lld^3: %.3f ms, %.1f TFLOP/s\n", static_cast<long long>(n), single,
                  tflops(n, n, n, single));
    }
    for (std::int64_t g : a.gpus) {
      if (g > available) {
        std::printf("%lld GPUs: only %d here, skipped\n", static_cast<long long>(g), available);
        continue;
      }
      std::vector<int> devices;
      for (int i = 0; i < g; ++i) devices.push_back(i);
      auto comms = cp::Communicator::local_all(devices);
      for (const std::string& algorithm : a.algorithms) {
        const Row row = distributed(comms, n, algorithm, a);
        const double rate = tflops(n, n, n, row.dist);
        std::printf("%s bf16 %lld^3 on %lld GPU(s): %.3f ms, %.1f TFLOP/s, %.1f per GPU", algorithm.c_str(),
                    static_cast<long long>(n), static_cast<long long>(g), row.dist, rate,
                    rate / static_cast<double>(g));
        if (single > 0) std::printf(", speed-up %.2fx", single / row.dist);
        if (row.gemm_alone > 0)
          std::printf("; GEMMs alone %.3f ms, exchange alone %.3f ms, overlap ratio %.2f", row.gemm_alone,
                      row.exchange_alone, row.dist / std::max(row.gemm_alone, row.exchange_alone));
        std::printf("\n  %s\n", row.describe.c_str());
      }
      if (a.redistribute > 0 && n == a.sizes.front()) redistribute(comms, a.redistribute, a);
    }
  }
  return 0;
}
