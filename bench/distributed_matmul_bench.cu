// SPDX-License-Identifier: Apache-2.0
// DistributedMatmul and Redistribute on 1, 2, 4 ... GPUs, ranks as threads of one process (Communicator::local_all)
// or as one process per GPU.
//
//   distributed_matmul_bench [--sizes 16384] [--gpus 1,2,4] [--reps 10] [--warmup 3] [--reference 8192]
//                            [--algorithms allgather_gemm,summa] [--redistribute 1024] [--single 1]
//                            [--mode threads|processes|both]
//
// Per square size n (bf16, random data in [-1, 1), median of the repetitions after warm-up; each repetition starts
// on every rank after one NCCL all-reduce and counts the slowest rank):
//  - single: cuplan's single-GPU Matmul of the whole n^3 product on GPU 0 (--single 0 skips it, e.g. where the
//    whole operands do not fit); --reference N adds the single-GPU rate at N^3 for the per-GPU comparison;
//  - per GPU count and algorithm: DistributedMatmul in the algorithm's native layouts (nothing redistributed):
//    time, TFLOP/s, TFLOP/s per GPU, speed-up = single / distributed;
//  - overlap (allgather_gemm): the same local GEMMs alone (per rank, P Matmuls of n/P x n by n x n/P, as the
//    all-gather steps run them) and the ring exchange alone (P-1 grouped ncclSend/ncclRecv of the n/P x n blocks), and
//    distributed / max(gemm alone, exchange alone), which is 1 for a perfect overlap. An algorithm named
//    "allgather_gemm:nccl" or "allgather_gemm:copy_engine" forces that exchange method (automatic otherwise: copy
//    engines where every rank reaches every other's memory).
// --redistribute N (0 skips): Redistribute of an N^3 c64 array from slabs (axis 0) to pencils (axes 1, 2) on each
// GPU count, against the bare exchange of the same bytes (the faster of grouped ncclSend/ncclRecv of contiguous
// per-peer buffers and copy-engine copies into the peers' buffers, one stream per peer), ratio = bare / Redistribute.
// --mode processes: per GPU count, the bench starts itself once per GPU (fork and exec: every rank starts CUDA and
// NCCL fresh, as under mpirun; support/rank_processes.hpp) and times the same DistributedMatmul and Redistribute
// calls on the same sizes and data; the bare copy-engine exchange needs peers in one process and is measured with
// threads only. --mode both runs the processes first, then the threads, and prints process time / thread time.

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
#include "support/distributed_matmul_setup.cuh"
#include "support/rank_processes.hpp"
#include "support/rank_timing.hpp"

namespace cp = cuplan;
using bench::Align;
using bench::median;
using bench::random_bf16;
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
  std::string mode = "threads";
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
    else if (key == "--mode")
      a.mode = bench::rank_mode(value);
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  return a;
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

struct Row {
  double dist = 0, gemm_alone = 0, exchange_alone = 0;
  std::string describe;
};

// One rank's series of one product: the DistributedMatmul, and for allgather_gemm its local GEMMs alone and its ring
// exchange alone.
struct ProductTimes {
  std::vector<double> dist, gemm, exchange;
  std::string describe;
};

ProductTimes time_product(cp::Communicator& comm, std::int64_t n, const std::string& algorithm, const Args& a) {
  const int r = comm.rank();
  const bool ag = algorithm.starts_with("allgather_gemm");
  ProductTimes out;
  const cp::Stream stream(comm.device());
  cp::DistributedMatmulOptions o = bench::native_options(ag, stream.ref());
  // "<algorithm>:nccl" or "<algorithm>:copy_engine" forces the exchange method.
  if (algorithm.ends_with(":nccl")) o.exchange = cp::ExchangeMethod::nccl;
  if (algorithm.ends_with(":copy_engine")) o.exchange = cp::ExchangeMethod::copy_engine;
  const auto blocks = cp::DistributedMatmul::blocks(comm, n, n, n, o);
  auto x = random_bf16(blocks.a.local_shape, comm.device(), stream.ref(), 3u + static_cast<unsigned>(r));
  auto y = random_bf16(blocks.b.local_shape, comm.device(), stream.ref(), 5u + static_cast<unsigned>(r));
  auto d = cp::Tensor::empty(blocks.d.local_shape, cp::bf16, comm.device(), stream.ref());
  cp::DistributedMatmul mm(comm, n, n, n, x, y, o);
  mm.plan();
  const Align align(&comm);
  out.dist = time_on(stream.ref(), align, a.warmup, a.reps, [&] {
    mm.execute({.stream = stream.ref(), .after = {}, .release_workspace = false, .out = d.view()});
  });
  out.describe = mm.describe();
  if (ag && comm.size() > 1) {
    // The same local GEMMs alone: one per block of A's rows (as the all-gather steps run them), into D's rows.
    const std::int64_t cols = blocks.b.local_shape[1];
    auto whole_a = random_bf16({n, n}, comm.device(), stream.ref(), 7);
    auto product = cp::Tensor::empty({n, cols}, cp::bf16, comm.device(), stream.ref());
    std::vector<cp::Matmul> steps;
    std::vector<cp::TensorView> outs;
    for (std::int64_t q = 0, first = 0; q < comm.size(); ++q) {
      const std::int64_t rows = n / comm.size() + (q < n % comm.size() ? 1 : 0);
      const cp::TensorView block(static_cast<const char*>(whole_a.data()) + static_cast<std::size_t>(first * n) * 2,
                                 cp::bf16, {rows, n}, cp::Strides{n, 1}, comm.device(), cp::MemorySpace::device);
      outs.emplace_back(static_cast<const char*>(product.data()) + static_cast<std::size_t>(first * cols) * 2, cp::bf16,
                        cp::Shape{rows, cols}, cp::Strides{cols, 1}, comm.device(), cp::MemorySpace::device);
      steps.emplace_back(block, y, cp::MatmulOptions{.stream = stream.ref()});
      steps.back().plan();
      first += rows;
    }
    out.gemm = time_on(stream.ref(), align, a.warmup, a.reps, [&] {
      for (std::size_t q = 0; q < steps.size(); ++q) steps[q].execute({.stream = stream.ref(), .out = outs[q]});
    });
    // The ring alone: P - 1 steps, each passing one n/P x n block on and receiving the next.
    const std::size_t bytes = static_cast<std::size_t>(x.numel()) * 2;
    auto bufs = cp::Tensor::empty({2 * x.numel()}, cp::bf16, comm.device(), stream.ref());
    auto* base = static_cast<char*>(bufs.data());
    const int next = (comm.rank() + 1) % comm.size(), prev = (comm.rank() - 1 + comm.size()) % comm.size();
    out.exchange = time_on(stream.ref(), align, a.warmup, a.reps, [&] {
      for (int s = 0; s + 1 < comm.size(); ++s) {
        BENCH_NCCL_CHECK(ncclGroupStart());
        BENCH_NCCL_CHECK(ncclSend(base + (s % 2) * bytes, bytes, ncclUint8, next, comm.native(), stream.native()));
        BENCH_NCCL_CHECK(
            ncclRecv(base + ((s + 1) % 2) * bytes, bytes, ncclUint8, prev, comm.native(), stream.native()));
        BENCH_NCCL_CHECK(ncclGroupEnd());
      }
    });
  }
  stream.synchronize();
  return out;
}

// The row of one product from every rank's series: the slowest rank per repetition, the median over repetitions.
Row row_of(const std::vector<ProductTimes>& ranks) {
  std::vector<std::vector<double>> dist, gemm, exchange;
  for (const ProductTimes& t : ranks) {
    dist.push_back(t.dist);
    gemm.push_back(t.gemm);
    exchange.push_back(t.exchange);
  }
  Row row;
  row.dist = slowest_median(dist);
  row.gemm_alone = slowest_median(gemm);
  row.exchange_alone = slowest_median(exchange);
  if (!ranks.empty()) row.describe = ranks[0].describe;
  return row;
}

Row distributed(std::vector<cp::Communicator>& comms, std::int64_t n, const std::string& algorithm, const Args& a) {
  std::vector<ProductTimes> ranks(comms.size());
  on_ranks(comms, [&](int r, cp::Communicator& comm) {
    ranks[static_cast<std::size_t>(r)] = time_product(comm, n, algorithm, a);
  });
  return row_of(ranks);
}

// Redistribute slab (axis 0) -> pencil (axes 1, 2) of an n^3 c64 array on `ranks` ranks: the pencil grid.
std::array<int, 2> pencil_grid(int ranks) {
  return ranks >= 4 ? std::array<int, 2>{2, ranks / 2} : std::array<int, 2>{1, ranks};
}

// One rank's series of the Redistribute, of the bare NCCL exchange of the same bytes and, where the ranks are
// threads of this process (`peers`), of the bare copy-engine exchange.
struct MoveTimes {
  std::vector<double> redistribute, nccl, copy_engine;
  std::string method;
};

// The ranks as threads: their communicators, each rank's receive array and a barrier, for the copy engines.
struct ThreadPeers {
  const std::vector<cp::Communicator>& comms;
  std::vector<void*>& buffers;
  std::barrier<>& sync;
};

MoveTimes time_move(cp::Communicator& comm, std::int64_t n, const Args& a, ThreadPeers* peers) {
  const int ranks = comm.size(), r = comm.rank();
  const cp::Shape shape{n, n, n};
  const std::array<int, 2> grid = pencil_grid(ranks);
  MoveTimes out;
  const cp::Stream stream(comm.device());
  const auto in = cp::slab_box(shape, 0, ranks, r), to_box = cp::pencil_box(shape, {1, 2}, grid, r);
  auto x = cp::Tensor::empty(in.shape(), cp::c64, comm.device(), stream.ref());
  BENCH_CUDA_CHECK(cudaMemsetAsync(x.data(), 1, static_cast<std::size_t>(x.numel()) * 8, stream.native()));
  auto y = cp::Tensor::empty(to_box.shape(), cp::c64, comm.device(), stream.ref());
  cp::Redistribute op(comm, shape, in, to_box, x, {.stream = stream.ref()});
  op.plan();
  out.method = std::string(cp::to_string(op.exchange_method()));
  const Align align(&comm);
  out.redistribute = time_on(stream.ref(), align, a.warmup, a.reps,
                             [&] { op.execute({.stream = stream.ref(), .after = {}, .out = y.view()}); });
  // Bytes rank p sends rank q: p's slab inside q's pencil.
  auto bytes = [&](int p, int q) {
    const auto from_box = cp::slab_box(shape, 0, ranks, p), into = cp::pencil_box(shape, {1, 2}, grid, q);
    std::size_t count = 8;
    for (std::size_t d = 0; d < 3; ++d) {
      const std::int64_t lo = std::max(from_box.offset[d], into.offset[d]);
      const std::int64_t hi = std::min(from_box.offset[d] + from_box.extent[d], into.offset[d] + into.extent[d]);
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
  out.nccl = time_on(stream.ref(), align, a.warmup, a.reps, [&] {
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
  if (peers == nullptr) {
    stream.synchronize();
    return out;
  }
  // Copy engines: every rank's receive array is visible to every other (one process, peer access). The array is a
  // plain cudaMalloc allocation: memory of a stream-ordered pool is not mapped for peers by peer access, and copies
  // into it take a staged path at a small fraction of the link's rate.
  const auto& comms = peers->comms;
  void* landing_array = nullptr;
  BENCH_CUDA_CHECK(cudaMalloc(&landing_array, static_cast<std::size_t>(y.numel()) * 8));
  peers->buffers[static_cast<std::size_t>(r)] = landing_array;
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
  peers->sync.arrive_and_wait();
  std::vector<cp::Stream> side;
  for (int q = 0; q < ranks; ++q) side.emplace_back(comm.device());
  cp::Event fork, joined;
  if (reachable)
    out.copy_engine = time_on(stream.ref(), align, a.warmup, a.reps, [&] {
      fork.record(stream.ref());
      std::size_t so = 0;
      for (int q = 0; q < ranks; ++q) {
        const auto qi = static_cast<std::size_t>(q);
        if (q != r) {
          side[qi].wait(fork);
          // Into the peer's array, packed in sender order (the bytes a Redistribute moves, without its layout).
          BENCH_CUDA_CHECK(cudaMemcpyPeerAsync(static_cast<char*>(peers->buffers[qi]) + landing[qi],
                                               comms[qi].device().index(), send + so, comm.device().index(), to[qi],
                                               side[qi].native()));
          joined.record(side[qi].ref());
          stream.wait(joined);
        }
        so += to[qi];
      }
    });
  stream.synchronize();
  peers->sync.arrive_and_wait();  // no rank frees its array while a peer may still copy into it
  BENCH_CUDA_CHECK(cudaFree(landing_array));
  return out;
}

// The Redistribute line from every rank's series (`threads` or `processes` may be empty: that mode did not run).
void report_move(std::int64_t n, int ranks, const std::vector<MoveTimes>& threads,
                 const std::vector<MoveTimes>& processes) {
  auto slowest = [](const std::vector<MoveTimes>& all, auto member) {
    std::vector<std::vector<double>> v;
    for (const MoveTimes& t : all) v.push_back(t.*member);
    return slowest_median(v);
  };
  const std::array<int, 2> grid = pencil_grid(ranks);
  const std::vector<MoveTimes>& any = threads.empty() ? processes : threads;
  std::printf("redistribute %lld^3 c64 slab->pencil %dx%d on %d GPU(s) by %s:", static_cast<long long>(n), grid[0],
              grid[1], ranks, any.empty() ? "-" : any[0].method.c_str());
  if (!threads.empty()) {
    const double t = slowest(threads, &MoveTimes::redistribute), nccl = slowest(threads, &MoveTimes::nccl);
    const double ce = slowest(threads, &MoveTimes::copy_engine);
    const double bare = ce > 0 ? std::min(nccl, ce) : nccl;
    std::printf(" threads %.3f ms; bare NCCL %.3f ms, bare copy engine ", t, nccl);
    if (ce > 0)
      std::printf("%.3f ms", ce);
    else
      std::printf("-");
    std::printf("; bare / Redistribute = %.2f", bare / t);
  }
  if (!processes.empty()) {
    const double p = slowest(processes, &MoveTimes::redistribute);
    std::printf("%s processes %.3f ms, bare NCCL %.3f ms", threads.empty() ? "" : ";", p,
                slowest(processes, &MoveTimes::nccl));
    if (!threads.empty()) std::printf(", process / thread time %.3f", p / slowest(threads, &MoveTimes::redistribute));
  }
  std::printf("\n");
}

std::vector<MoveTimes> move_on_threads(std::vector<cp::Communicator>& comms, std::int64_t n, const Args& a) {
  std::vector<MoveTimes> ranks(comms.size());
  std::vector<void*> buffers(comms.size(), nullptr);
  std::barrier<> sync(static_cast<std::ptrdiff_t>(comms.size()));
  ThreadPeers peers{comms, buffers, sync};
  on_ranks(comms,
           [&](int r, cp::Communicator& comm) { ranks[static_cast<std::size_t>(r)] = time_move(comm, n, a, &peers); });
  return ranks;
}

// Process mode: each rank's series keyed "<n>:<algorithm>" (dist, gemm, exchange; the description is not carried)
// and "move:<n>" (redistribute, nccl).
bench::Series to_series(const std::map<std::string, ProductTimes>& products,
                        const std::map<std::int64_t, MoveTimes>& moves) {
  bench::Series out;
  for (const auto& [key, t] : products) out[key] = {{"dist", t.dist}, {"gemm", t.gemm}, {"exchange", t.exchange}};
  for (const auto& [n, t] : moves)
    out["move:" + std::to_string(n)] = {{"redistribute", t.redistribute}, {"nccl", t.nccl}};
  return out;
}

std::string product_key(std::int64_t n, const std::string& algorithm) {
  return std::to_string(n) + ":" + algorithm;
}

// A rank started by launch_ranks: the same products and moves as the threads run, written for the parent.
int child_main(const bench::ChildRank& child, const Args& a) {
  cp::Communicator comm = bench::join_children(child);
  BENCH_CUDA_CHECK(cudaSetDevice(comm.device().index()));  // the bench's own kernels run on the rank's GPU
  std::map<std::string, ProductTimes> products;
  std::map<std::int64_t, MoveTimes> moves;
  for (std::int64_t n : a.sizes)
    for (const std::string& algorithm : a.algorithms)
      products[product_key(n, algorithm)] = time_product(comm, n, algorithm, a);
  if (a.redistribute > 0) moves[a.redistribute] = time_move(comm, a.redistribute, a, nullptr);
  return bench::write_series(child, to_series(products, moves)) ? 0 : 1;
}

// Every rank's results of one process launch on `ranks` GPUs.
struct ProcessRun {
  std::map<std::string, std::vector<ProductTimes>> products;
  std::vector<MoveTimes> moves;
};

ProcessRun run_processes(int ranks, std::int64_t redistribute_n, char** argv) {
  ProcessRun run;
  for (const bench::Series& rank : bench::launch_ranks(ranks, argv))
    for (const auto& [key, named] : rank) {
      auto get = [&](const char* name) { return named.count(name) ? named.at(name) : std::vector<double>{}; };
      if (key == "move:" + std::to_string(redistribute_n))
        run.moves.push_back({get("redistribute"), get("nccl"), {}, ""});
      else
        run.products[key].push_back({get("dist"), get("gemm"), get("exchange"), ""});
    }
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row as it is measured, also into a file cut short by a timeout
  bench::ChildArgs child_args(argc, argv);
  const Args a = parse(argc, argv);
  if (const auto child = bench::child_rank()) return child_main(*child, a);
  if (!cp::cuda_available()) {
    std::printf("distributed_matmul_bench: no CUDA device; nothing to measure\n");
    return 0;
  }
  const int available = cp::cuda_device_count();
  // The processes run first, per GPU count: this process has not touched the GPUs yet, and the children start fresh.
  std::map<std::int64_t, ProcessRun> processes;
  if (a.mode != "threads")
    for (std::int64_t g : a.gpus)
      if (g <= available) processes[g] = run_processes(static_cast<int>(g), a.redistribute, child_args.argv());
  const bool threads = a.mode != "processes";
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
      std::vector<cp::Communicator> comms;
      if (threads) {
        std::vector<int> devices;
        for (int i = 0; i < g; ++i) devices.push_back(i);
        comms = cp::Communicator::local_all(devices);
      }
      for (const std::string& algorithm : a.algorithms) {
        const auto from_processes =
            processes.count(g) ? processes[g].products[product_key(n, algorithm)] : std::vector<ProductTimes>{};
        const Row row = threads ? distributed(comms, n, algorithm, a) : row_of(from_processes);
        const double rate = tflops(n, n, n, row.dist);
        std::printf("%s bf16 %lld^3 on %lld GPU(s)%s: %.3f ms, %.1f TFLOP/s, %.1f per GPU", algorithm.c_str(),
                    static_cast<long long>(n), static_cast<long long>(g), threads ? "" : " (processes)", row.dist, rate,
                    rate / static_cast<double>(g));
        if (single > 0) std::printf(", speed-up %.2fx", single / row.dist);
        if (row.gemm_alone > 0)
          std::printf("; GEMMs alone %.3f ms, exchange alone %.3f ms, overlap ratio %.2f", row.gemm_alone,
                      row.exchange_alone, row.dist / std::max(row.gemm_alone, row.exchange_alone));
        if (threads && !from_processes.empty()) {
          const double p = row_of(from_processes).dist;
          std::printf("; processes %.3f ms, process / thread time %.3f", p, p / row.dist);
        }
        if (threads) std::printf("\n  %s", row.describe.c_str());
        std::printf("\n");
      }
      if (a.redistribute > 0 && n == a.sizes.front())
        report_move(a.redistribute, static_cast<int>(g),
                    threads ? move_on_threads(comms, a.redistribute, a) : std::vector<MoveTimes>{},
                    processes.count(g) ? processes[g].moves : std::vector<MoveTimes>{});
    }
  }
  return 0;
}
