// SPDX-License-Identifier: Apache-2.0
// Redistribute on 1, 2 and 4 GPUs, ranks as threads and as processes: slab to pencil, pencil to slab, a transpose of
// the slab axis, gather to one rank and scatter back, for c64, f64 and bf16 on extents that do not divide, by copy
// engine and by NCCL. Random global arrays, outputs poisoned first; every rank's output must equal its box of the
// global array bit for bit. Mismatched shapes and boxes raise InvalidArgument on every rank.
#include <gtest/gtest.h>

#include <atomic>
#include <random>

#include "cuplan/redistribute.hpp"
#include "distributed/busy_stream.cuh"
#include "distributed/rank_harness.hpp"

namespace {

using cuplan::Communicator;
using cuplan::DistributedBox;
using cuplan::ExchangeMethod;
using cuplan::InvalidArgument;
using cuplan::Redistribute;
using cuplan::Shape;
using cuplan::testing::box_bytes;
using cuplan::testing::local_comms;
using cuplan::testing::on_ranks;

using BoxRule = std::function<DistributedBox(const Shape&, int rank, int size)>;

struct Move {
  const char* name;
  BoxRule from;
  BoxRule to;
};

std::vector<Move> moves() {
  return {
      {"slab0 to pencil12", [](const Shape& s, int r, int n) { return cuplan::slab_box(s, 0, n, r); },
       [](const Shape& s, int r, int n) {
         return cuplan::pencil_box(s, {1, 2}, {n >= 4 ? 2 : 1, n >= 4 ? n / 2 : n}, r);
       }},
      {"pencil12 to slab0",
       [](const Shape& s, int r, int n) {
         return cuplan::pencil_box(s, {1, 2}, {n >= 4 ? 2 : 1, n >= 4 ? n / 2 : n}, r);
       },
       [](const Shape& s, int r, int n) { return cuplan::slab_box(s, 0, n, r); }},
      {"slab0 to slab1", [](const Shape& s, int r, int n) { return cuplan::slab_box(s, 0, n, r); },
       [](const Shape& s, int r, int n) { return cuplan::slab_box(s, 1, n, r); }},
      {"gather to last rank", [](const Shape& s, int r, int n) { return cuplan::slab_box(s, 1, n, r); },
       [](const Shape& s, int r, int n) { return cuplan::root_box(s, n - 1, r); }},
      {"scatter from rank 0", [](const Shape& s, int r, int) { return cuplan::root_box(s, 0, r); },
       [](const Shape& s, int r, int n) { return cuplan::slab_box(s, 2, n, r); }},
  };
}

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

// One rank: scatter its input box, move into a poisoned output, check its output box against the global array.
void run_rank(Communicator& comm, const Move& mv, const std::vector<std::int64_t>& shape, cuplan::DType dtype,
              ExchangeMethod method, const std::vector<unsigned char>& global) {
  const Shape s{std::span<const std::int64_t>(shape)};
  const int r = comm.rank(), n = comm.size();
  const DistributedBox in = mv.from(s, r, n), out = mv.to(s, r, n);
  const cuplan::Stream stream(comm.device());
  const std::size_t es = dtype.size();
  std::vector<unsigned char> local(static_cast<std::size_t>(in.numel()) * es);
  box_bytes(in, shape, es, global.data(), local.data(), true);
  auto operand = cuplan::Tensor::empty(in.shape(), dtype, comm.device(), stream.ref());
  if (!local.empty())  // a gather's or scatter's empty boxes have nothing to copy
    CUPLAN_HARNESS_CUDA(cudaMemcpyAsync(operand.data(), local.data(), local.size(), cudaMemcpyHostToDevice, stream));
  Redistribute redistribute(comm, s, in, out, operand, {.exchange = method, .stream = stream.ref()});
  redistribute.plan();
  if (n > 1 && method != ExchangeMethod::automatic) EXPECT_EQ(redistribute.exchange_method(), method);
  EXPECT_NE(redistribute.describe().find("Redistribute"), std::string::npos);
  auto result = cuplan::Tensor::empty(out.shape(), dtype, comm.device(), stream.ref());
  for (int round = 0; round < 2; ++round) {  // a second execute reuses the plan and the buffers
    if (out.numel() > 0)
      CUPLAN_HARNESS_CUDA(cudaMemsetAsync(result.data(), 0xFF, static_cast<std::size_t>(out.numel()) * es, stream));
    redistribute.execute({.stream = stream.ref(), .after = {}, .out = result.view()});
    std::vector<unsigned char> got(static_cast<std::size_t>(out.numel()) * es), want(got.size());
    if (!got.empty())
      CUPLAN_HARNESS_CUDA(cudaMemcpyAsync(got.data(), result.data(), got.size(), cudaMemcpyDeviceToHost, stream));
    CUPLAN_HARNESS_CUDA(cudaStreamSynchronize(stream));
    box_bytes(out, shape, es, global.data(), want.data(), true);
    EXPECT_TRUE(got == want) << mv.name << " rank " << r << " of " << n << " round " << round << " by "
                             << cuplan::to_string(redistribute.exchange_method());
  }
}

void check_all_moves(int ranks) {
  auto comms = local_comms(ranks);
  std::vector<ExchangeMethod> methods{ExchangeMethod::automatic, ExchangeMethod::nccl};
  if (ranks > 1 && cuplan::testing::peers_reachable(ranks)) methods.push_back(ExchangeMethod::copy_engine);
  unsigned seed = 26;
  for (const Move& mv : moves())
    for (const cuplan::DType dtype : {cuplan::c64, cuplan::f64, cuplan::bf16})
      for (const ExchangeMethod method : methods) {
        const std::vector<std::int64_t> shape{9, 10, 7};
        const auto global = random_bytes(9 * 10 * 7 * dtype.size(), ++seed);
        SCOPED_TRACE(testing::Message() << mv.name << " " << dtype.name() << " " << cuplan::to_string(method));
        on_ranks(comms, [&](int, Communicator& comm) { run_rank(comm, mv, shape, dtype, method, global); });
      }
}

TEST(Redistribute, MovesEveryElementOn1Rank) {
  CUPLAN_REQUIRE_GPUS(1);
  check_all_moves(1);
}

TEST(Redistribute, MovesEveryElementOn2Ranks) {
  CUPLAN_REQUIRE_GPUS(2);
  check_all_moves(2);
}

TEST(Redistribute, MovesEveryElementOn4Ranks) {
  CUPLAN_REQUIRE_GPUS(4);
  check_all_moves(4);
}

TEST(Redistribute, LargeSlabToPencilByEveryRouteOn4Ranks) {
  CUPLAN_REQUIRE_GPUS(4);
  auto comms = local_comms(4);
  const std::vector<std::int64_t> shape{128, 96, 80};
  const auto global = random_bytes(128 * 96 * 80 * 8, 7);
  for (const ExchangeMethod method : {ExchangeMethod::automatic, ExchangeMethod::nccl})
    on_ranks(comms, [&](int, Communicator& comm) { run_rank(comm, moves()[0], shape, cuplan::c64, method, global); });
}

// Planned on one stream, executed on another behind a busy kernel: execute only enqueues, and the move is right.
TEST(RedistributeStreams, ExecuteBehindABusyKernelDoesNotBlock) {
  CUPLAN_REQUIRE_GPUS(1);
  auto comms = local_comms(std::min(cuplan::cuda_device_count(), 4));
  const std::vector<std::int64_t> shape{12, 10, 9};
  const auto global = random_bytes(12 * 10 * 9 * 8, 3);
  on_ranks(comms, [&](int, Communicator& comm) {
    const Shape s{std::span<const std::int64_t>(shape)};
    const int r = comm.rank(), n = comm.size();
    const DistributedBox in = cuplan::slab_box(s, 0, n, r), out = cuplan::slab_box(s, 1, n, r);
    const cuplan::Stream planning(comm.device()), running(comm.device());
    std::vector<unsigned char> local(static_cast<std::size_t>(in.numel()) * 8);
    box_bytes(in, shape, 8, global.data(), local.data(), true);
    auto operand = cuplan::Tensor::empty(in.shape(), cuplan::f64, comm.device(), planning.ref());
    CUPLAN_HARNESS_CUDA(
        cudaMemcpyAsync(operand.data(), local.data(), local.size(), cudaMemcpyHostToDevice, planning.native()));
    Redistribute rd(comm, s, in, out, operand, {.stream = planning.ref()});
    const auto moved = cuplan::testing::plan_and_execute_behind_busy_kernel(rd, planning, running);
    const auto host = moved.to(cuplan::Device::cpu(), running.ref());
    std::vector<unsigned char> want(static_cast<std::size_t>(out.numel()) * 8);
    box_bytes(out, shape, 8, global.data(), want.data(), true);
    EXPECT_EQ(std::memcmp(host.data(), want.data(), want.size()), 0) << "rank " << r;
  });
}

// A rank whose global shape differs, and ranks whose boxes overlap: InvalidArgument on every rank, never a hang.
TEST(RedistributeErrors, DisagreementAndBadTilingRaiseOnEveryRank) {
  CUPLAN_REQUIRE_GPUS(2);
  auto comms = local_comms(2);
  std::atomic<int> shape_errors{0}, tiling_errors{0};
  on_ranks(comms, [&](int r, Communicator& comm) {
    const Shape s = r == 0 ? Shape{8, 6} : Shape{8, 7};
    const DistributedBox in = cuplan::slab_box(s, 0, 2, r), out = cuplan::slab_box(s, 1, 2, r);
    auto x = cuplan::Tensor::empty(in.shape(), cuplan::f32, comm.device());
    Redistribute rd(comm, s, in, out, x);
    try {
      rd.plan();
    } catch (const InvalidArgument& e) {
      if (std::string(e.what()).find("global_shape[1]") != std::string::npos) ++shape_errors;
    }
  });
  EXPECT_EQ(shape_errors.load(), 2);
  on_ranks(comms, [&](int r, Communicator& comm) {
    const Shape s{8, 6};
    DistributedBox in = cuplan::slab_box(s, 0, 2, r);
    if (r == 1) {  // overlaps rank 0's rows 0..3
      in.offset[0] = 3;
      in.extent[0] = 5;
    }
    auto x = cuplan::Tensor::empty(in.shape(), cuplan::f32, comm.device());
    Redistribute rd(comm, s, in, cuplan::slab_box(s, 1, 2, r), x);
    try {
      rd.plan();
    } catch (const InvalidArgument& e) {
      if (std::string(e.what()).find("overlaps") != std::string::npos) ++tiling_errors;
    }
  });
  EXPECT_EQ(tiling_errors.load(), 2);
}

TEST(RedistributeErrors, LocalArgumentsAreCheckedInTheConstructor) {
  CUPLAN_REQUIRE_GPUS(1);
  auto comms = local_comms(1);
  const Shape s{4, 5};
  const DistributedBox whole = cuplan::slab_box(s, 0, 1, 0);
  auto x = cuplan::Tensor::empty({4, 5}, cuplan::f32, comms[0].device());
  auto wrong = cuplan::Tensor::empty({5, 4}, cuplan::f32, comms[0].device());
  EXPECT_THROW(Redistribute(comms[0], s, whole, whole, wrong), InvalidArgument);
  DistributedBox three_axes{{0, 0, 0}, {4, 5, 1}};
  EXPECT_THROW(Redistribute(comms[0], s, three_axes, whole, x), InvalidArgument);
  Redistribute rd(comms[0], s, whole, whole, x);
  try {  // an execute never plans (planning is collective and may block): StateError, naming plan()
    (void)rd.execute();
    ADD_FAILURE() << "an execute before plan() ran";
  } catch (const cuplan::StateError& e) {
    EXPECT_NE(std::string(e.what()).find("call plan() first"), std::string::npos) << e.what();
  }
  rd.free();
  EXPECT_THROW(rd.execute(), cuplan::StateError);
  EXPECT_THROW(cuplan::slab_box(s, 2, 1, 0), InvalidArgument);
  EXPECT_THROW(cuplan::pencil_box(s, {0, 0}, {1, 1}, 0), InvalidArgument);
}

// Ranks as processes: copy engines through CUDA IPC handles, and NCCL.
TEST(RedistributeChild, Rank) {
  auto comm = cuplan::testing::child_communicator();
  if (!comm) GTEST_SKIP() << "runs only as a child of RedistributeProcesses (CUPLAN_DIST_RANK unset)";
  const std::vector<std::int64_t> shape{33, 20, 18};
  const auto global = random_bytes(33 * 20 * 18 * 8, 11);  // the same bytes in every process
  for (const Move& mv : moves())
    for (const ExchangeMethod method : {ExchangeMethod::automatic, ExchangeMethod::nccl})
      run_rank(*comm, mv, shape, cuplan::c64, method, global);
}

TEST(RedistributeProcesses, RanksAsProcesses) {
  CUPLAN_REQUIRE_GPUS(2);
  cuplan::testing::run_as_processes("RedistributeChild.Rank", std::min(cuplan::cuda_device_count(), 4));
}

}  // namespace
