// SPDX-License-Identifier: Apache-2.0
// DistributedMatmul on 1, 2 and 4 GPUs, ranks as threads and as processes: for every layout (row blocks, column
// blocks, 2D grid, 2D block-cyclic), every algorithm (all-gather + GEMM, GEMM + reduce-scatter, SUMMA, chosen or
// asked for, with and without redistributions), transposes, beta C and the epilogs, on extents that do not divide by
// the grid, each rank's D (poisoned first) is gathered and compared with the float64 product of the whole operands
// on the CPU (inputs rounded to the operand dtype first). One rank is the single-GPU Matmul. Ranks that disagree
// raise InvalidArgument on every rank.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <complex>
#include <mutex>
#include <random>

#include "cuplan/distributed_matmul.hpp"
#include "distributed/distributed_matmul_cases.cuh"
#include "distributed/rank_harness.hpp"

namespace {

using namespace cuplan::testing::distributed_matmul;
using cuplan::testing::local_comms;
using cuplan::testing::on_ranks;

// One rank: scatter, plan, execute twice into a poisoned D, gather its blocks into `got`.
void run_rank(const Case& c, const Operands& ops, Communicator& comm, Matrix& got, std::mutex& m) {
  const cuplan::Stream s(comm.device());
  DistributedMatmulOptions o = options_of(c);
  o.stream = s.ref();
  const auto blocks = DistributedMatmul::blocks(comm, c.m, c.n, c.k, o);
  const auto [a, b] = upload_operands(c, ops.a, ops.b, blocks, comm, s);
  auto cc = upload(scatter(blocks.c, ops.c, c.dtype), blocks.c.local_shape, c.dtype, comm, s);
  // The bias of this rank's local rows of D, in local order.
  std::vector<unsigned char> bias_host(static_cast<std::size_t>(blocks.bias_length) * c.dtype.size());
  for (const auto& blk : blocks.d.blocks)
    for (std::int64_t i = 0; i < blk.global.extent[0]; ++i)
      store(c.dtype, ops.bias[static_cast<std::size_t>(blk.global.offset[0] + i)],
            bias_host.data() + static_cast<std::size_t>(blk.local_offset[0] + i) * c.dtype.size());
  auto bias = upload(bias_host, {blocks.bias_length}, c.dtype, comm, s);
  if (c.beta != 0) o.c = cc;
  const bool has_bias = c.epilog == Epilog::bias || c.epilog == Epilog::relu_bias || c.epilog == Epilog::gelu_bias;
  if (has_bias) o.bias = bias;
  DistributedMatmul mm(comm, c.m, c.n, c.k, a, b, o);
  EXPECT_EQ(mm.algorithm(), blocks.algorithm);
  if (comm.size() == 1)
    EXPECT_EQ(mm.algorithm(), DistributedMatmulAlgorithm::local);
  else if (c.algorithm != DistributedMatmulAlgorithm::automatic)
    EXPECT_EQ(mm.algorithm(), c.algorithm);
  mm.plan();
  EXPECT_NE(mm.describe().find("DistributedMatmul"), std::string::npos);
  if (c.name == "summa native") mm.autotune({.iterations = 1});  // local products keep their fastest candidates
  auto d = cuplan::Tensor::empty(blocks.d.local_shape, c.dtype, comm.device(), s.ref());
  std::vector<unsigned char> host(static_cast<std::size_t>(d.numel()) * c.dtype.size());
  for (int round = 0; round < 2; ++round) {  // the second execute reuses plans, buffers and connections
    CUPLAN_HARNESS_CUDA(cudaMemsetAsync(d.data(), 0xFF, host.size(), s));
    mm.execute({.stream = s.ref(), .after = {}, .release_workspace = false, .out = d.view()});
  }
  if (!host.empty())
    CUPLAN_HARNESS_CUDA(cudaMemcpyAsync(host.data(), d.data(), host.size(), cudaMemcpyDeviceToHost, s));
  CUPLAN_HARNESS_CUDA(cudaStreamSynchronize(s));
  std::lock_guard lock(m);
  gather(blocks.d, host, c.dtype, got);
}

void check(const Case& c, std::vector<Communicator>& comms) {
  SCOPED_TRACE(testing::Message() << c.name << " on " << comms.size() << " ranks");
  const Operands ops = make_operands(c, 2026);
  const Matrix want = reference(c, ops.a, ops.b, ops.c, ops.bias);
  Matrix got{c.m, c.n, std::vector<cplx>(want.v.size(), cplx(std::nan(""), 0))};
  std::mutex m;
  on_ranks(comms, [&](int, Communicator& comm) { run_rank(c, ops, comm, got, m); });
  const double err = cuplan::testing::relative_error(got.v, want.v);
  EXPECT_LT(err, tolerance(c.dtype, c.epilog)) << c.name;  // NaN (an element left poisoned) fails too
}

std::vector<Case> cases() {
  using MD = MatrixDistribution;
  using A = DistributedMatmulAlgorithm;
  std::vector<Case> v;
  auto add = [&](Case c) { v.push_back(std::move(c)); };
  add({.la = L(MD::row_blocks), .lb = L(MD::column_blocks), .ld = L(MD::column_blocks), .name = "allgather native"});
  // Inside a node the automatic all-gather runs on copy engines; the NCCL ring it takes elsewhere, forced here.
  add({.la = L(MD::row_blocks),
       .lb = L(MD::column_blocks),
       .ld = L(MD::column_blocks),
       .exchange = cuplan::ExchangeMethod::nccl,
       .name = "allgather native over NCCL"});
  add({.m = 70,
       .n = 44,
       .k = 31,
       .dtype = cuplan::f32,
       .ta = true,
       .la = L(MD::column_blocks),
       .lb = L(MD::column_blocks),
       .ld = L(MD::column_blocks),
       .algorithm = A::allgather_gemm,
       .exchange = cuplan::ExchangeMethod::nccl,
       .name = "allgather A^T over NCCL"});
  add({.la = L(MD::column_blocks), .lb = L(MD::row_blocks), .ld = L(MD::row_blocks), .name = "reduce_scatter native"});
  add({.la = L(MD::grid), .lb = L(MD::grid), .ld = L(MD::grid), .name = "summa native"});
  add({.la = L(MD::block_cyclic, {0, 0}, {8, 5}),
       .lb = L(MD::block_cyclic, {0, 0}, {4, 6}),
       .ld = L(MD::block_cyclic, {0, 0}, {8, 6}),
       .name = "block-cyclic"});
  add({.la = L(MD::block_cyclic, {0, 0}, {3, 3}),
       .lb = L(MD::row_blocks),
       .ld = L(MD::column_blocks),
       .name = "mixed layouts"});
  add({.ta = true,
       .tb = true,
       .la = L(MD::column_blocks),
       .lb = L(MD::row_blocks),
       .ld = L(MD::column_blocks),
       .name = "allgather transposes"});
  add({.ta = true, .la = L(MD::grid), .lb = L(MD::grid), .ld = L(MD::grid), .name = "summa A^T"});
  add({.tb = true, .la = L(MD::grid), .lb = L(MD::grid), .ld = L(MD::grid), .name = "summa B^T"});
  add({.ta = true,
       .tb = true,
       .la = L(MD::row_blocks),
       .lb = L(MD::column_blocks),
       .ld = L(MD::row_blocks),
       .algorithm = A::gemm_reduce_scatter,
       .name = "reduce_scatter transposes"});
  add({.la = L(MD::row_blocks),
       .lb = L(MD::column_blocks),
       .ld = L(MD::row_blocks),
       .algorithm = A::allgather_gemm,
       .epilog = Epilog::gelu_bias,
       .beta = 0.5,
       .name = "allgather gelu_bias beta C, D redistributed"});
  add({.la = L(MD::row_blocks),
       .lb = L(MD::column_blocks),
       .ld = L(MD::column_blocks),
       .epilog = Epilog::relu,
       .beta = -0.75,
       .name = "allgather relu beta C folded"});
  add({.la = L(MD::row_blocks),
       .lb = L(MD::column_blocks),
       .ld = L(MD::column_blocks),
       .epilog = Epilog::bias,
       .name = "allgather bias"});
  add({.la = L(MD::column_blocks),
       .lb = L(MD::row_blocks),
       .ld = L(MD::row_blocks),
       .epilog = Epilog::relu_bias,
       .beta = 1.0,
       .name = "reduce_scatter relu_bias beta C"});
  add({.la = L(MD::grid),
       .lb = L(MD::grid),
       .ld = L(MD::block_cyclic, {0, 0}, {5, 4}),
       .epilog = Epilog::gelu,
       .beta = 0.25,
       .name = "summa gelu beta C into block-cyclic D"});
  add({.dtype = cuplan::bf16,
       .la = L(MD::row_blocks),
       .lb = L(MD::column_blocks),
       .ld = L(MD::column_blocks),
       .name = "bf16 allgather"});
  add({.dtype = cuplan::f16,
       .la = L(MD::column_blocks),
       .lb = L(MD::row_blocks),
       .ld = L(MD::row_blocks),
       .name = "f16 reduce_scatter"});
  add({.dtype = cuplan::f32,
       .la = L(MD::grid),
       .lb = L(MD::grid),
       .ld = L(MD::grid),
       .epilog = Epilog::bias,
       .beta = 0.5,
       .name = "f32 summa bias beta C"});
  add({.dtype = cuplan::c64,
       .la = L(MD::grid),
       .lb = L(MD::row_blocks),
       .ld = L(MD::column_blocks),
       .epilog = Epilog::bias,
       .beta = 0.5,
       .name = "c64 mixed bias"});
  add({.dtype = cuplan::c128,
       .la = L(MD::column_blocks),
       .lb = L(MD::row_blocks),
       .ld = L(MD::row_blocks),
       .name = "c128 reduce_scatter"});
  add({.la = L(MD::block_cyclic, {0, 0}, {8, 5}),
       .lb = L(MD::grid),
       .ld = L(MD::grid),
       .exchange = cuplan::ExchangeMethod::nccl,
       .name = "redistribution by NCCL"});
  return v;
}

void check_all(int ranks) {
  auto comms = local_comms(ranks);
  for (const Case& c : cases()) check(c, comms);
}

TEST(DistributedMatmul, MatchesTheFloat64ProductOn1Rank) {
  CUPLAN_REQUIRE_GPUS(1);
  check_all(1);
}

TEST(DistributedMatmul, MatchesTheFloat64ProductOn2Ranks) {
  CUPLAN_REQUIRE_GPUS(2);
  check_all(2);
}

TEST(DistributedMatmul, MatchesTheFloat64ProductOn4Ranks) {
  CUPLAN_REQUIRE_GPUS(4);
  check_all(4);
}

// Every algorithm asked for by name on 4 ranks, whatever the layouts, and a larger product whose blocks and panels
// carry MiBs.
TEST(DistributedMatmul, EveryAlgorithmByNameOn4Ranks) {
  CUPLAN_REQUIRE_GPUS(4);
  auto comms = local_comms(4);
  for (auto algo : {DistributedMatmulAlgorithm::allgather_gemm, DistributedMatmulAlgorithm::gemm_reduce_scatter,
                    DistributedMatmulAlgorithm::summa}) {
    Case c{.m = 515,
           .n = 387,
           .k = 301,
           .dtype = cuplan::f32,
           .la = L(MatrixDistribution::row_blocks),
           .lb = L(MatrixDistribution::row_blocks),
           .ld = L(MatrixDistribution::row_blocks),
           .algorithm = algo,
           .beta = 0.5,
           .name = std::string(cuplan::to_string(algo))};
    check(c, comms);
  }
}

TEST(DistributedMatmul, ResetOperandThenExecuteUsesTheNewOperand) {
  CUPLAN_REQUIRE_GPUS(2);
  auto comms = local_comms(2);
  Case c{.la = L(MatrixDistribution::grid),
         .lb = L(MatrixDistribution::grid),
         .ld = L(MatrixDistribution::grid),
         .name = "reset b"};
  const Operands first = make_operands(c, 1), second = make_operands(c, 2);
  const Matrix want = reference(c, first.a, second.b, first.c, first.bias);
  Matrix got{c.m, c.n, std::vector<cplx>(want.v.size(), cplx(std::nan(""), 0))};
  std::mutex m;
  on_ranks(comms, [&](int, Communicator& comm) {
    const cuplan::Stream s(comm.device());
    DistributedMatmulOptions o = options_of(c);
    o.stream = s.ref();
    const auto blocks = DistributedMatmul::blocks(comm, c.m, c.n, c.k, o);
    const auto [a, b1] = upload_operands(c, first.a, first.b, blocks, comm, s);
    auto b2 = upload(scatter(blocks.b, second.b, c.dtype), blocks.b.local_shape, c.dtype, comm, s);
    DistributedMatmul mm(comm, c.m, c.n, c.k, a, b1, o);
    EXPECT_THROW((void)mm.execute(), cuplan::StateError);  // never plans: planning is collective and may block
    mm.plan();
    (void)mm.execute();
    mm.reset_operand(cuplan::MatmulOperand::b, b2);
    const auto d = mm.execute().to(cuplan::Device::cpu(), s.ref());
    std::vector<unsigned char> host(static_cast<const unsigned char*>(d.data()),
                                    static_cast<const unsigned char*>(d.data()) + d.numel() * 8);
    std::lock_guard lock(m);
    gather(blocks.d, host, c.dtype, got);
  });
  EXPECT_LT(cuplan::testing::relative_error(got.v, want.v), 1e-12);
}

// A rank whose m differs: InvalidArgument naming the field on every rank, never a hang.
TEST(DistributedMatmulErrors, RanksThatDisagreeRaiseOnEveryRankInPlan) {
  CUPLAN_REQUIRE_GPUS(2);
  auto comms = local_comms(2);
  std::atomic<int> raised{0};
  on_ranks(comms, [&](int r, Communicator& comm) {
    const std::int64_t m = r == 0 ? 16 : 18;
    DistributedMatmulOptions o;
    o.layout_a = L(MatrixDistribution::row_blocks);
    o.layout_b = o.layout_d = L(MatrixDistribution::column_blocks);
    const auto blocks = DistributedMatmul::blocks(comm, m, 8, 8, o);
    auto a = cuplan::Tensor::empty(blocks.a.local_shape, cuplan::f32, comm.device());
    auto b = cuplan::Tensor::empty(blocks.b.local_shape, cuplan::f32, comm.device());
    DistributedMatmul mm(comm, m, 8, 8, a, b, o);
    try {
      mm.plan();
    } catch (const cuplan::InvalidArgument& e) {
      if (std::string(e.what()).find("rank 1 has m = 18, rank 0 has 16") != std::string::npos) ++raised;
    }
  });
  EXPECT_EQ(raised.load(), 2);
  // The same extents, but rank 1 holds D in row blocks.
  std::atomic<int> layouts{0};
  on_ranks(comms, [&](int r, Communicator& comm) {
    DistributedMatmulOptions o;
    o.layout_a = L(MatrixDistribution::row_blocks);
    o.layout_b = L(MatrixDistribution::column_blocks);
    o.layout_d = L(r == 0 ? MatrixDistribution::column_blocks : MatrixDistribution::row_blocks);
    const auto blocks = DistributedMatmul::blocks(comm, 16, 8, 8, o);
    auto a = cuplan::Tensor::empty(blocks.a.local_shape, cuplan::f32, comm.device());
    auto b = cuplan::Tensor::empty(blocks.b.local_shape, cuplan::f32, comm.device());
    DistributedMatmul mm(comm, 16, 8, 8, a, b, o);
    try {
      mm.plan();
    } catch (const cuplan::InvalidArgument& e) {
      if (std::string(e.what()).find("layout_d") != std::string::npos) ++layouts;
    }
  });
  EXPECT_EQ(layouts.load(), 2);
}

TEST(DistributedMatmulErrors, LocalArgumentsAreCheckedInTheConstructor) {
  CUPLAN_REQUIRE_GPUS(1);
  auto comms = local_comms(1);
  auto a = cuplan::Tensor::empty({4, 3}, cuplan::f32, comms[0].device());
  auto b = cuplan::Tensor::empty({3, 5}, cuplan::f32, comms[0].device());
  auto wrong = cuplan::Tensor::empty({5, 3}, cuplan::f32, comms[0].device());
  EXPECT_THROW(DistributedMatmul(comms[0], 4, 5, 3, a, wrong), cuplan::InvalidArgument);
  EXPECT_THROW(DistributedMatmul(comms[0], 4, 5, 3, a, b, {.epilog = Epilog::bias}), cuplan::InvalidArgument);
  EXPECT_THROW(DistributedMatmul(comms[0], 4, 5, 3, a, b, {.epilog = Epilog::drelu}), cuplan::NotSupported);
  EXPECT_THROW(DistributedMatmul(comms[0], 0, 5, 3, a, b), cuplan::InvalidArgument);
  EXPECT_THROW(DistributedMatmul(comms[0], 4, 5, 3, a, b, {.beta = 1.0}), cuplan::InvalidArgument);  // no c
  EXPECT_THROW(DistributedMatmul(comms[0], 4, 5, 3, a, b, {.alpha = {1.0, 2.0}}), cuplan::InvalidArgument);
  DistributedMatmulOptions wide;
  wide.result_dtype = cuplan::f64;
  EXPECT_THROW(DistributedMatmul(comms[0], 4, 5, 3, a, b, wide), cuplan::InvalidArgument);
  DistributedMatmulOptions bad_grid;
  bad_grid.layout_d = L(MatrixDistribution::grid, {2, 2});
  EXPECT_THROW(DistributedMatmul::blocks(comms[0], 4, 5, 3, bad_grid), cuplan::InvalidArgument);
  DistributedMatmul mm(comms[0], 4, 5, 3, a, b);
  mm.free();
  EXPECT_THROW(mm.execute(), cuplan::StateError);
}

// Ranks as processes (one GPU each): copy engines through CUDA IPC and NCCL for the redistributions, NCCL for the
// algorithms.
TEST(DistributedMatmulChild, Rank) {
  auto comm = cuplan::testing::child_communicator();
  if (!comm) GTEST_SKIP() << "runs only as a child of DistributedMatmulProcesses (CUPLAN_DIST_RANK unset)";
  std::vector<Communicator> one{*comm};
  for (const Case& c : cases()) {
    // Every process computes the same reference and checks only its own blocks.
    SCOPED_TRACE(c.name);
    const Operands ops = make_operands(c, 2026);
    const Matrix want = reference(c, ops.a, ops.b, ops.c, ops.bias);
    Matrix got{c.m, c.n, want.v};
    std::mutex m;
    const auto blocks = DistributedMatmul::blocks(*comm, c.m, c.n, c.k, options_of(c));
    for (const auto& blk : blocks.d.blocks)
      for (std::int64_t i = 0; i < blk.global.extent[0]; ++i)
        for (std::int64_t j = 0; j < blk.global.extent[1]; ++j)
          got.v[static_cast<std::size_t>((blk.global.offset[0] + i) * c.n + blk.global.offset[1] + j)] = std::nan("");
    run_rank(c, ops, one[0], got, m);
    EXPECT_LT(cuplan::testing::relative_error(got.v, want.v), tolerance(c.dtype)) << c.name;
  }
}

TEST(DistributedMatmulProcesses, RanksAsProcesses) {
  CUPLAN_REQUIRE_GPUS(2);
  cuplan::testing::run_as_processes("DistributedMatmulChild.Rank", std::min(cuplan::cuda_device_count(), 4));
}

}  // namespace
