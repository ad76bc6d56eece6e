// SPDX-License-Identifier: Apache-2.0
// DistributedMatmul's stream contract on 1 to 4 GPUs, ranks as threads: planned on one stream and executed on
// another behind a busy kernel, an execute only enqueues and the product is right once the stream gets to it; the
// copy-engine all-gather refuses a stream that is capturing a CUDA graph, on every rank, and runs on after it.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <string>

#include "cuplan/distributed_matmul.hpp"
#include "distributed/busy_stream.cuh"
#include "distributed/distributed_matmul_cases.cuh"
#include "distributed/rank_harness.hpp"

namespace {

using namespace cuplan::testing::distributed_matmul;
using cuplan::testing::local_comms;
using cuplan::testing::on_ranks;

// The stream contract: planned on one stream, executed on another behind a busy kernel, execute returns before
// that kernel ends (it only enqueues), and the product is right once the stream gets to it.
TEST(DistributedMatmulStreams, ExecuteBehindABusyKernelDoesNotBlock) {
  CUPLAN_REQUIRE_GPUS(1);
  auto comms = local_comms(std::min(cuplan::cuda_device_count(), 4));
  for (const Case& c : {Case{.la = L(MatrixDistribution::row_blocks),
                       .lb = L(MatrixDistribution::column_blocks),
                       .ld = L(MatrixDistribution::column_blocks),
                       .name = "allgather"},
                        Case{.la = L(MatrixDistribution::grid),
                        .lb = L(MatrixDistribution::grid),
                        .ld = L(MatrixDistribution::block_cyclic, {0, 0}, {4, 4}),
                        .epilog = Epilog::gelu,
                        .name = "summa into block-cyclic"}}) {
    SCOPED_TRACE(c.name);
    const Operands ops = make_operands(c, 7);
    const Matrix want = reference(c, ops.a, ops.b, ops.c, ops.bias);
    Matrix got{c.m, c.n, std::vector<cplx>(want.v.size(), cplx(std::nan(""), 0))};
    std::mutex m;
    on_ranks(comms, [&](int, Communicator& comm) {
      const cuplan::Stream planning(comm.device()), running(comm.device());
      DistributedMatmulOptions o = options_of(c);
      o.stream = planning.ref();
      const auto blocks = DistributedMatmul::blocks(comm, c.m, c.n, c.k, o);
      const auto [a, b] = upload_operands(c, ops.a, ops.b, blocks, comm, planning);
      DistributedMatmul mm(comm, c.m, c.n, c.k, a, b, o);
      const auto d = cuplan::testing::plan_and_execute_behind_busy_kernel(mm, planning, running);
      const auto host = d.to(cuplan::Device::cpu(), running.ref());
      std::vector<unsigned char> bytes(static_cast<const unsigned char*>(host.data()),
                                       static_cast<const unsigned char*>(host.data()) + host.numel() * 8);
      std::lock_guard lock(m);
      gather(blocks.d, bytes, c.dtype, got);
    });
    EXPECT_LT(cuplan::testing::relative_error(got.v, want.v), tolerance(c.dtype, c.epilog));
  }
}

// The copy-engine all-gather counts executes in flags: an execute on a stream that captures a CUDA graph raises
// NotSupported on every rank before it enqueues anything, and the object runs on after it.
TEST(DistributedMatmulStreams, CopyEngineAllGatherRefusesACapturingStream) {
  CUPLAN_REQUIRE_GPUS(2);
  if (!cuplan::testing::peers_reachable(2)) GTEST_SKIP() << "GPUs 0 and 1 have no peer access";
  auto comms = local_comms(2);
  const Case c{.la = L(MatrixDistribution::row_blocks),
               .lb = L(MatrixDistribution::column_blocks),
               .ld = L(MatrixDistribution::column_blocks),
               .name = "allgather"};
  const Operands ops = make_operands(c, 11);
  const Matrix want = reference(c, ops.a, ops.b, ops.c, ops.bias);
  Matrix got{c.m, c.n, std::vector<cplx>(want.v.size(), cplx(std::nan(""), 0))};
  std::mutex m;
  std::atomic<int> refused{0};
  on_ranks(comms, [&](int, Communicator& comm) {
    const cuplan::Stream s(comm.device());
    DistributedMatmulOptions o = options_of(c);
    o.stream = s.ref();
    const auto blocks = DistributedMatmul::blocks(comm, c.m, c.n, c.k, o);
    const auto [a, b] = upload_operands(c, ops.a, ops.b, blocks, comm, s);
    DistributedMatmul mm(comm, c.m, c.n, c.k, a, b, o);
    mm.plan();
    EXPECT_EQ(mm.exchange_method(), cuplan::ExchangeMethod::copy_engine);
    CUPLAN_HARNESS_CUDA(cudaStreamSynchronize(s));
    CUPLAN_HARNESS_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    try {
      (void)mm.execute({.stream = s.ref()});
    } catch (const cuplan::NotSupported& e) {
      if (std::string(e.what()).find("capturing") != std::string::npos) refused.fetch_add(1);
    }
    cudaGraph_t graph = nullptr;
    CUPLAN_HARNESS_CUDA(cudaStreamEndCapture(s, &graph));
    if (graph != nullptr) CUPLAN_HARNESS_CUDA(cudaGraphDestroy(graph));
    const auto d = mm.execute({.stream = s.ref()});
    std::vector<unsigned char> host(static_cast<std::size_t>(d.numel()) * c.dtype.size());
    CUPLAN_HARNESS_CUDA(cudaMemcpyAsync(host.data(), d.data(), host.size(), cudaMemcpyDeviceToHost, s));
    CUPLAN_HARNESS_CUDA(cudaStreamSynchronize(s));
    std::lock_guard lock(m);
    gather(blocks.d, host, c.dtype, got);
  });
  EXPECT_EQ(refused.load(), 2);
  EXPECT_LT(cuplan::testing::relative_error(got.v, want.v), tolerance(c.dtype, c.epilog));
}

}  // namespace
