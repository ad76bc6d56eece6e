// SPDX-License-Identifier: Apache-2.0
// A matrix product too large for one GPU's memory budget, on every visible GPU (one rank per GPU, ranks as threads
// of this process over Communicator::local_all). The budget is a per-GPU device_memory_limit (the option's meaning
// in MatmulOptions: the most device memory one call may hold), 256 MiB here or the first argument in MiB. The extents
// are chosen so that A, B and D together take more than the budget while each rank's share of them, with the
// buffers its DistributedMatmul holds, stays under it. A, B and D are f32 matrices on a 2D process grid (SUMMA,
// nothing redistributed); A and B are given by a formula, so that the host can compute any entry of D in float64,
// and 64 sampled entries are checked. Exits 0 on success, 1 on a wrong result or a rank over the budget, 77 with
// fewer than two GPUs.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <cuplan/distributed_matmul.hpp>

#include "sample_support.hpp"

namespace cp = cuplan;

namespace {

// Entries of A and B: small integers over 48, exact in f32, with no pattern that a wrong index could repeat.
__host__ __device__ float entry(std::int64_t i, std::int64_t j, int which) {
  const std::int64_t h = (i * 7919 + j * 104729 + which * 15485863) % 97;
  return static_cast<float>(h - 48) / 48.0f;
}

__global__ void fill_block(float* out, std::int64_t r0, std::int64_t c0, std::int64_t rows, std::int64_t cols,
                           int which) {
  const std::int64_t total = rows * cols;
  for (std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[t] = entry(r0 + t / cols, c0 + t % cols, which);
}

struct RankResult {
  std::size_t held = 0;  // bytes: local A, B, D and the object's buffers (device_memory_bytes)
  std::vector<double> got, want;
};

RankResult run_rank(cp::Communicator& comm, std::int64_t n) {
  const cp::Stream stream(comm.device());
  cp::DistributedMatmulOptions o;
  o.layout_a = o.layout_b = o.layout_d = {cp::MatrixDistribution::grid, {0, 0}, {0, 0}};
  o.stream = stream.ref();
  const auto blocks = cp::DistributedMatmul::blocks(comm, n, n, n, o);
  auto local = [&](const cp::DistributedMatrix& m, int which) {
    auto t = cp::Tensor::empty(m.local_shape, cp::f32, comm.device(), stream.ref());
    const auto& g = m.blocks.front().global;
    if (which >= 0)
      fill_block<<<1024, 256, 0, stream.native()>>>(t.data<float>(), g.offset[0], g.offset[1], g.extent[0], g.extent[1],
                                                    which);
    return t;
  };
  auto a = local(blocks.a, 0);
  auto b = local(blocks.b, 1);
  auto d = local(blocks.d, -1);
  if (cudaGetLastError() != cudaSuccess) throw std::runtime_error("fill_block did not launch");
  cp::DistributedMatmul mm(comm, n, n, n, a, b, o);
  mm.plan();
  mm.execute({.stream = stream.ref(), .after = {}, .release_workspace = false, .out = d.view()});
  RankResult r;
  r.held = static_cast<std::size_t>(a.numel() + b.numel() + d.numel()) * 4 + mm.device_memory_bytes();
  if (comm.rank() == 0) std::printf("rank 0: %s\n", mm.describe().c_str());
  const auto host = d.to(cp::Device::cpu(), stream.ref());
  // 64 entries of this rank's block, against the float64 sum on the host.
  const auto& g = blocks.d.blocks.front().global;
  std::mt19937_64 rng(static_cast<unsigned>(comm.rank()) + 1);
  for (int s = 0; s < 64 && g.extent[0] > 0 && g.extent[1] > 0; ++s) {
    const std::int64_t i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(g.extent[0]));
    const std::int64_t j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(g.extent[1]));
    double want = 0;
    for (std::int64_t k = 0; k < n; ++k)
      want += static_cast<double>(entry(g.offset[0] + i, k, 0)) * static_cast<double>(entry(k, g.offset[1] + j, 1));
    r.got.push_back(host.data<float>()[i * g.extent[1] + j]);
    r.want.push_back(want);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  sample::require_gpu("distributed_matmul");
  const int gpus = cp::cuda_device_count();
  if (gpus < 2) {
    std::printf("distributed_matmul: needs 2 GPUs to split a product over, found %d; skipped\n", gpus);
    return sample::skip_code;
  }
  const std::size_t budget = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256) << 20;
  // Per rank on a rows x cols grid: its blocks of A, B, D and SUMMA's sum (4 n^2 / P floats) and two panel slots of
  // at most n/8 columns of A and rows of B (2 (n/rows + n/cols) n/8 floats). Largest n whose share fits 90 % of the
  // budget (the local products' cuBLASLt workspaces come on top).
  const auto grid = [&] {
    int rows = static_cast<int>(std::sqrt(static_cast<double>(gpus)));
    while (gpus % rows != 0) --rows;
    return std::array<int, 2>{rows, gpus / rows};
  }();
  const double per_n2 = 4.0 / gpus + 2.0 * (1.0 / grid[0] + 1.0 / grid[1]) / 8.0;
  const auto n = static_cast<std::int64_t>(std::sqrt(0.9 * static_cast<double>(budget) / 4.0 / per_n2)) / 64 * 64;
  const std::size_t whole = static_cast<std::size_t>(3 * n * n) * 4;
  std::printf("%lld^3 f32 product on %d GPUs (%dx%d grid): A, B and D take %.0f MiB, the per-GPU budget is %zu MiB\n",
              static_cast<long long>(n), gpus, grid[0], grid[1], static_cast<double>(whole) / (1 << 20), budget >> 20);
  sample::check(whole > budget, "the whole product does not fit one GPU's budget");

  std::vector<int> devices;
  for (int i = 0; i < gpus; ++i) devices.push_back(i);
  auto comms = cp::Communicator::local_all(devices);
  std::vector<RankResult> results(comms.size());
  // One thread per rank, each on its rank's GPU.
  const bool all_ranks_ran = sample::run_rank_threads(comms.size(), [&](std::size_t r) {
    comms[r].device().use();
    results[r] = run_rank(comms[r], n);
  });
  if (!all_ranks_ran) return 1;
  double worst = 0;
  std::size_t held = 0;
  for (const RankResult& r : results) {
    held = std::max(held, r.held);
    for (std::size_t s = 0; s < r.got.size(); ++s)
      worst = std::max(worst, std::abs(r.got[s] - r.want[s]) / std::sqrt(static_cast<double>(n)));
  }
  std::printf("largest rank holds %.0f MiB; worst sampled error %.3e (relative to sqrt(n))\n",
              static_cast<double>(held) / (1 << 20), worst);
  sample::check(held <= budget, "every rank's share stays within the per-GPU budget");
  sample::check(worst < 1e-4, "sampled entries of D match the float64 product");
  return 0;
}
