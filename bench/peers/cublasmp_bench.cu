// SPDX-License-Identifier: Apache-2.0
// cuBLASMp beside cuplan's DistributedMatmul, in process mode (one process per GPU, as cuBLASMp runs), on the same
// problems: bf16 n x n x n products, fp32 accumulation, random data, the same GPUs, the same timing
// (support/rank_timing.hpp: ranks lined up per repetition, CUDA events, the slowest rank's median).
//
//   cublasmp_bench [--sizes 16384] [--reps 10] [--warmup 3] [--gpus N]       (N: all visible GPUs by default)
//
// Two distributions of the same work:
//  - all-gather + GEMM: cuBLASMp's tensor-parallel case (TN: A and B column-distributed on a 1 x P grid, D
//    row-distributed on P x 1; B is gathered) against cuplan's allgather_gemm in its native layouts (A row blocks, B
//    and D column blocks; A is gathered). Each rank gathers one n x n operand and multiplies n^3 / P.
//  - 2D grid: both on a process grid (2 x P/2, or 1 x P for fewer than 4 ranks) with one block per rank, cuBLASMp's
//    general PBLAS product against cuplan's SUMMA.
// Before timing, cuBLASMp multiplies all-ones operands and every rank checks its whole block of D against k (exact
// in bf16 for the sizes used), so that a wrong descriptor cannot pass as a fast one.
//
// Built only where CUPLAN_CUBLASMP_ROOT names an unpacked cuBLASMp (bench/CMakeLists.txt); cuBLASMp 0.7 needs
// NVSHMEM's host library at run time (LD_LIBRARY_PATH), NCCL 2.28.3 or later, and one process per GPU.

#include <cublasmp.h>
#include <cuda_bf16.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <cuplan/cuplan.hpp>
#include <cuplan/distributed_matmul.hpp>

#include "support/bench_check.hpp"
#include "support/distributed_matmul_setup.cuh"
#include "support/rank_processes.hpp"
#include "support/rank_timing.hpp"

namespace cp = cuplan;

#define BENCH_CUBLASMP_CHECK(expr)                                                                               \
  do {                                                                                                           \
    const cublasMpStatus_t bench_status_ = (expr);                                                               \
    if (bench_status_ != CUBLASMP_STATUS_SUCCESS)                                                                \
      ::bench::fail("cuBLASMp", #expr, static_cast<int>(bench_status_), "cublasMpStatus_t", __FILE__, __LINE__); \
  } while (0)

namespace {

struct Args {
  std::vector<std::int64_t> sizes{16384};
  int reps = 10;
  int warmup = 3;
  int gpus = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--sizes") {
      a.sizes.clear();
      std::stringstream s(value);
      std::string item;
      while (std::getline(s, item, ',')) a.sizes.push_back(std::stoll(item));
    } else if (key == "--reps") {
      a.reps = std::stoi(value);
    } else if (key == "--warmup") {
      a.warmup = std::stoi(value);
    } else if (key == "--gpus") {
      a.gpus = std::stoi(value);
    } else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  return a;
}

std::array<int, 2> grid_of(int ranks) {
  return ranks >= 4 && ranks % 2 == 0 ? std::array<int, 2>{2, ranks / 2} : std::array<int, 2>{1, ranks};
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// One cuBLASMp product D = op(A) op(B) on this rank, its descriptors and workspaces, made once and run many times.
class CublasMpProduct {
 public:
  // `all_gather`: TN on 1 x P (A, B) and P x 1 (D); else NN on the 2D grid with one block per rank.
  CublasMpProduct(cp::Communicator& comm, cudaStream_t stream, std::int64_t n, bool all_gather) : n_(n) {
    const int p = comm.size(), r = comm.rank();
    BENCH_CUBLASMP_CHECK(cublasMpCreate(&handle_, stream));
    std::int64_t a_rows, a_cols, a_mb, a_nb, b_rows, b_cols, b_mb, b_nb, d_mb, d_nb;
    if (all_gather) {
      BENCH_CUBLASMP_CHECK(cublasMpGridCreate(1, p, CUBLASMP_GRID_LAYOUT_COL_MAJOR, comm.native(), &grid_ab_));
      BENCH_CUBLASMP_CHECK(cublasMpGridCreate(p, 1, CUBLASMP_GRID_LAYOUT_COL_MAJOR, comm.native(), &grid_d_));
      a_mb = b_mb = n;               // A and B: k x n, whole columns on each rank
      a_nb = b_nb = ceil_div(n, p);  // columns split over the P ranks
      d_mb = ceil_div(n, p);         // D: rows split over the P ranks
      d_nb = n;
      a_rows = b_rows = n;
      a_cols = b_cols = cublasMpNumroc(n, a_nb, static_cast<std::uint32_t>(r), 0, static_cast<std::uint32_t>(p));
      d_rows_ = cublasMpNumroc(n, d_mb, static_cast<std::uint32_t>(r), 0, static_cast<std::uint32_t>(p));
      d_cols_ = n;
      trans_a_ = CUBLAS_OP_T;
    } else {
      const auto g = grid_of(p);
      const auto row = static_cast<std::uint32_t>(r % g[0]), col = static_cast<std::uint32_t>(r / g[0]);
      BENCH_CUBLASMP_CHECK(cublasMpGridCreate(g[0], g[1], CUBLASMP_GRID_LAYOUT_COL_MAJOR, comm.native(), &grid_ab_));
      grid_d_ = grid_ab_;
      shared_grid_ = true;
      a_mb = b_mb = d_mb = ceil_div(n, g[0]);
      a_nb = b_nb = d_nb = ceil_div(n, g[1]);
      const auto rows = cublasMpNumroc(n, a_mb, row, 0, static_cast<std::uint32_t>(g[0]));
      const auto cols = cublasMpNumroc(n, a_nb, col, 0, static_cast<std::uint32_t>(g[1]));
      a_rows = b_rows = d_rows_ = rows;
      a_cols = b_cols = d_cols_ = cols;
      trans_a_ = CUBLAS_OP_N;
    }
    const cp::Device device = comm.device();
    const cp::StreamRef ref(stream);
    a_ = bench::random_bf16({a_cols, a_rows}, device, ref,
                            11u + static_cast<unsigned>(r));  // column-major a_rows x a_cols
    b_ = bench::random_bf16({b_cols, b_rows}, device, ref, 13u + static_cast<unsigned>(r));
    d_ = cp::Tensor::empty({d_cols_, d_rows_}, cp::bf16, device, ref);
    BENCH_CUBLASMP_CHECK(cublasMpMatrixDescriptorCreate(n, n, a_mb, a_nb, 0, 0, std::max<std::int64_t>(1, a_rows),
                                                        CUDA_R_16BF, grid_ab_, &desc_a_));
    BENCH_CUBLASMP_CHECK(cublasMpMatrixDescriptorCreate(n, n, b_mb, b_nb, 0, 0, std::max<std::int64_t>(1, b_rows),
                                                        CUDA_R_16BF, grid_ab_, &desc_b_));
    BENCH_CUBLASMP_CHECK(cublasMpMatrixDescriptorCreate(n, n, d_mb, d_nb, 0, 0, std::max<std::int64_t>(1, d_rows_),
                                                        CUDA_R_16BF, grid_d_, &desc_d_));
    BENCH_CUBLASMP_CHECK(cublasMpMatmulDescriptorCreate(&matmul_, CUBLAS_COMPUTE_32F));
    BENCH_CUBLASMP_CHECK(cublasMpMatmulDescriptorAttributeSet(matmul_, CUBLASMP_MATMUL_DESCRIPTOR_ATTRIBUTE_TRANSA,
                                                              &trans_a_, sizeof trans_a_));
    const cublasOperation_t trans_b = CUBLAS_OP_N;
    BENCH_CUBLASMP_CHECK(cublasMpMatmulDescriptorAttributeSet(matmul_, CUBLASMP_MATMUL_DESCRIPTOR_ATTRIBUTE_TRANSB,
                                                              &trans_b, sizeof trans_b));
    BENCH_CUBLASMP_CHECK(cublasMpMatmul_bufferSize(handle_, matmul_, n, n, n, &alpha_, a_.data(), 1, 1, desc_a_,
                                                   b_.data(), 1, 1, desc_b_, &beta_, d_.data(), 1, 1, desc_d_,
                                                   d_.data(), 1, 1, desc_d_, &device_bytes_, &host_bytes_));
    if (device_bytes_ > 0) BENCH_CUDA_CHECK(cudaMalloc(&device_work_, device_bytes_));
    host_work_.resize(host_bytes_);
  }
  CublasMpProduct(const CublasMpProduct&) = delete;
  CublasMpProduct& operator=(const CublasMpProduct&) = delete;
  ~CublasMpProduct() {
    (void)cudaDeviceSynchronize();
    if (device_work_ != nullptr) (void)cudaFree(device_work_);
    (void)cublasMpMatmulDescriptorDestroy(matmul_);
    (void)cublasMpMatrixDescriptorDestroy(desc_d_);
    (void)cublasMpMatrixDescriptorDestroy(desc_b_);
    (void)cublasMpMatrixDescriptorDestroy(desc_a_);
    if (!shared_grid_) (void)cublasMpGridDestroy(grid_d_);
    (void)cublasMpGridDestroy(grid_ab_);
    (void)cublasMpDestroy(handle_);
  }

  void run() {
    BENCH_CUBLASMP_CHECK(cublasMpMatmul(handle_, matmul_, n_, n_, n_, &alpha_, a_.data(), 1, 1, desc_a_, b_.data(), 1,
                                        1, desc_b_, &beta_, d_.data(), 1, 1, desc_d_, d_.data(), 1, 1, desc_d_,
                                        device_work_, device_bytes_, host_work_.data(), host_bytes_));
  }

  // Runs once on all-ones A and B and returns how many of this rank's entries of D differ from n (then restores
  // random operands).
  std::int64_t wrong_entries_of_ones(cudaStream_t stream, int rank) {
    const __nv_bfloat16 one = __float2bfloat16(1.0f);
    std::vector<__nv_bfloat16> ones(static_cast<std::size_t>(std::max(a_.numel(), b_.numel())), one);
    BENCH_CUDA_CHECK(cudaMemcpyAsync(a_.data(), ones.data(), static_cast<std::size_t>(a_.numel()) * 2,
                                     cudaMemcpyHostToDevice, stream));
    BENCH_CUDA_CHECK(cudaMemcpyAsync(b_.data(), ones.data(), static_cast<std::size_t>(b_.numel()) * 2,
                                     cudaMemcpyHostToDevice, stream));
    BENCH_CUDA_CHECK(cudaMemsetAsync(d_.data(), 0xFF, static_cast<std::size_t>(d_.numel()) * 2, stream));  // NaN
    run();
    std::vector<__nv_bfloat16> got(static_cast<std::size_t>(d_.numel()));
    BENCH_CUDA_CHECK(cudaMemcpyAsync(got.data(), d_.data(), got.size() * 2, cudaMemcpyDeviceToHost, stream));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::int64_t wrong = 0;
    for (const __nv_bfloat16 v : got)
      if (__bfloat162float(v) != static_cast<float>(n_)) ++wrong;
    const cp::Device device = cp::Device::cuda(rank);
    const cp::StreamRef ref(stream);
    a_ = bench::random_bf16(a_.shape(), device, ref, 17u + static_cast<unsigned>(rank));
    b_ = bench::random_bf16(b_.shape(), device, ref, 19u + static_cast<unsigned>(rank));
    return wrong;
  }

 private:
  std::int64_t n_;
  cublasMpHandle_t handle_ = nullptr;
  cublasMpGrid_t grid_ab_ = nullptr, grid_d_ = nullptr;
  bool shared_grid_ = false;
  cublasMpMatrixDescriptor_t desc_a_ = nullptr, desc_b_ = nullptr, desc_d_ = nullptr;
  cublasMpMatmulDescriptor_t matmul_ = nullptr;
  cublasOperation_t trans_a_ = CUBLAS_OP_N;
  std::int64_t d_rows_ = 0, d_cols_ = 0;
  cp::Tensor a_, b_, d_;
  float alpha_ = 1.0f, beta_ = 0.0f;
  std::size_t device_bytes_ = 0, host_bytes_ = 0;
  void* device_work_ = nullptr;
  std::vector<char> host_work_;
};

// cuplan's DistributedMatmul of the same problem: allgather_gemm in its native layouts, or SUMMA on the grid.
std::vector<double> time_cuplan(cp::Communicator& comm, const cp::Stream& stream, std::int64_t n, bool all_gather,
                                const Args& a) {
  const cp::DistributedMatmulOptions o = bench::native_options(all_gather, stream.ref());
  const auto blocks = cp::DistributedMatmul::blocks(comm, n, n, n, o);
  const auto r = static_cast<unsigned>(comm.rank());
  auto x = bench::random_bf16(blocks.a.local_shape, comm.device(), stream.ref(), 3u + r);
  auto y = bench::random_bf16(blocks.b.local_shape, comm.device(), stream.ref(), 5u + r);
  auto d = cp::Tensor::empty(blocks.d.local_shape, cp::bf16, comm.device(), stream.ref());
  cp::DistributedMatmul mm(comm, n, n, n, x, y, o);
  mm.plan();
  const bench::Align align(&comm);
  auto ms = bench::time_on(stream.ref(), align, a.warmup, a.reps, [&] {
    mm.execute({.stream = stream.ref(), .after = {}, .release_workspace = false, .out = d.view()});
  });
  stream.synchronize();
  return ms;
}

// A rank: both distributions, cuplan then cuBLASMp, per size; the series go to the parent.
int child_main(const bench::ChildRank& child, const Args& a) {
  cp::Communicator comm = bench::join_children(child);
  BENCH_CUDA_CHECK(cudaSetDevice(comm.device().index()));
  const cp::Stream stream(comm.device());
  bench::Series series;
  for (std::int64_t n : a.sizes)
    for (const bool all_gather : {true, false}) {
      const std::string key = std::to_string(n) + (all_gather ? ":allgather" : ":grid");
      series[key]["cuplan"] = time_cuplan(comm, stream, n, all_gather, a);
      CublasMpProduct product(comm, stream.native(), n, all_gather);
      series[key]["wrong"] = {static_cast<double>(product.wrong_entries_of_ones(stream.native(), comm.rank()))};
      const bench::Align align(&comm);
      series[key]["cublasmp"] = bench::time_on(stream.ref(), align, a.warmup, a.reps, [&] { product.run(); });
    }
  return bench::write_series(child, series) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  bench::ChildArgs child_args(argc, argv);
  const Args a = parse(argc, argv);
  if (const auto child = bench::child_rank()) return child_main(*child, a);
  if (!cp::cuda_available()) {
    std::printf("cublasmp_bench: no CUDA device; nothing measured\n");
    return 77;
  }
  int version = 0;
  BENCH_CUBLASMP_CHECK(cublasMpGetVersion(&version));
  const int gpus = a.gpus > 0 ? std::min(a.gpus, cp::cuda_device_count()) : cp::cuda_device_count();
  std::printf(
      "cuBLASMp %d beside cuplan DistributedMatmul, bf16, %d process(es), median of %d after %d warm-up, "
      "the slowest rank per repetition\n",
      version, gpus, a.reps, a.warmup);
  const std::vector<bench::Series> ranks = bench::launch_ranks(gpus, child_args.argv());
  int status = 0;
  for (const auto& [key, named] : ranks[0]) {
    std::vector<std::vector<double>> ours, theirs;
    double wrong = 0;
    for (const bench::Series& rank : ranks) {
      ours.push_back(rank.at(key).at("cuplan"));
      theirs.push_back(rank.at(key).at("cublasmp"));
      wrong += rank.at(key).at("wrong").at(0);
    }
    const double t_ours = bench::slowest_median(ours), t_theirs = bench::slowest_median(theirs);
    const std::int64_t n = std::stoll(key.substr(0, key.find(':')));
    const double tflop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / 1e12;
    std::printf("%-18s cuplan %9.3f ms (%6.1f TFLOP/s)  cuBLASMp %9.3f ms (%6.1f TFLOP/s)  cuBLASMp / cuplan %.2f%s\n",
                key.c_str(), t_ours, tflop / (t_ours * 1e-3), t_theirs, tflop / (t_theirs * 1e-3), t_theirs / t_ours,
                wrong > 0 ? "  (cuBLASMp check FAILED)" : "");
    if (wrong > 0) {
      std::fprintf(stderr, "%s: cuBLASMp's all-ones product has %.0f wrong entries\n", key.c_str(), wrong);
      status = 1;
    }
  }
  return status;
}
