// SPDX-License-Identifier: Apache-2.0
// The staging engine on the GPU: a pipelined run whose compute step throws mid-way (also while the next chunk is
// packed on the copy pool) drains, leaks no device memory and leaves the pipeline usable; the caller's stream is
// ordered before and after the internal streams; large pageable cuplan::copy round trips (the engine's path) are
// exact at chunk boundaries and odd sizes.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "cuplan/cuplan.hpp"
#include "plan/staging/pipeline.hpp"
#include "runtime/spin_kernel.cuh"
#include "runtime/storage.hpp"
#include "support/test_support.hpp"

namespace cuplan::detail::staging {
namespace {

using cuplan::testing::cycles_for_ms;
using cuplan::testing::spin_kernel;

__global__ void add_one(const std::int32_t* in, std::int32_t* out, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i] + 1;
}

// A run over `values` in chunks of `chunk` elements that adds one to each; the compute step throws at `fail_at`.
PipelineRun add_one_run(std::vector<std::int32_t>& in, std::vector<std::int32_t>& out, std::int64_t chunk,
                        StreamRef caller, std::int64_t fail_at = -1) {
  PipelineRun run;
  run.device = 0;
  run.caller = caller;
  const auto n = static_cast<std::int64_t>(in.size());
  run.chunks = (n + chunk - 1) / chunk;
  run.slots = 3;
  run.in_slot_bytes = run.out_slot_bytes = run.in_host_bytes = run.out_host_bytes =
      static_cast<std::size_t>(chunk) * sizeof(std::int32_t);
  auto size_of = [n, chunk](std::int64_t i) { return std::min(chunk, n - i * chunk); };
  run.parts = [&in, &out, chunk, size_of](std::int64_t i) {
    const Shape shape{size_of(i)};
    ChunkParts parts;
    parts.in = HostPart{TensorView(in.data() + i * chunk, shape), Strides{1}};
    parts.out = HostPart{TensorView(out.data() + i * chunk, shape), Strides{1}};
    return parts;
  };
  run.compute = [size_of, fail_at](std::int64_t i, void* d_in, void* d_out, cudaStream_t stream) {
    if (i == fail_at) throw std::runtime_error("compute step failed on purpose");
    const std::int64_t count = size_of(i);
    add_one<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(static_cast<const std::int32_t*>(d_in),
                                                                            static_cast<std::int32_t*>(d_out), count);
    CUPLAN_TEST_CUDA(cudaGetLastError());
  };
  return run;
}

TEST(StagingPipeline, ChunksWithARemainderRoundTrip) {
  CUPLAN_REQUIRE_GPU();
  std::vector<std::int32_t> in(100003), out(in.size(), -7);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::int32_t>(i * 3);
  Stream s;
  StagingPipeline pipeline;
  pipeline.run(add_one_run(in, out, 4096, s));
  for (std::size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], in[i] + 1) << i;
}

TEST(StagingPipeline, ExceptionMidPipelineLeaksNothingAndLeavesItUsable) {
  CUPLAN_REQUIRE_GPU();
  std::vector<std::int32_t> in(50000), out(in.size(), -7);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::int32_t>(i);
  Stream s;
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  const std::size_t before = pool_statistics(0).used;
  {
    StagingPipeline pipeline;
    EXPECT_THROW(pipeline.run(add_one_run(in, out, 1000, s, 7)), std::runtime_error);
    // Usable after the failure: the same object runs the whole operand.
    std::fill(out.begin(), out.end(), -7);
    pipeline.run(add_one_run(in, out, 1000, s));
    for (std::size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], in[i] + 1) << i;
    EXPECT_THROW(pipeline.run(add_one_run(in, out, 1000, s, 3)), std::runtime_error);
    pipeline.release();
    CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
    EXPECT_EQ(pool_statistics(0).used, before) << "device slots not given back by release()";
  }
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(pool_statistics(0).used, before);
}

TEST(StagingPipeline, ExceptionWhileTheNextChunkPacksOnThePoolLeavesItUsable) {
  CUPLAN_REQUIRE_GPU();
  // Chunks of 2 MiB are packed on the copy pool's threads while the caller enqueues the previous chunk's compute:
  // the compute step of chunk 4 throws while chunk 5 is being packed. The pack is joined before the exception
  // leaves, nothing leaks, and the next run (with an odd tail, unpacked with streaming stores) is exact.
  const std::int64_t chunk = std::int64_t{1} << 19;
  std::vector<std::int32_t> in(static_cast<std::size_t>(8 * chunk + 12345)), out(in.size(), -7);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::int32_t>(i * 7 + 3);
  Stream s;
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  const std::size_t before = pool_statistics(0).used;
  {
    StagingPipeline pipeline;
    EXPECT_THROW(pipeline.run(add_one_run(in, out, chunk, s, 4)), std::runtime_error);
    std::fill(out.begin(), out.end(), -7);
    pipeline.run(add_one_run(in, out, chunk, s));
    for (std::size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], in[i] + 1) << i;
    pipeline.release();
  }
  CUPLAN_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(pool_statistics(0).used, before);
}

TEST(StagingPipeline, StartsAfterTheCallersStreamAndReturnsOntoIt) {
  CUPLAN_REQUIRE_GPU();
  // The caller's stream writes the (pinned) operand after a long spin; the pipeline must read it only after that.
  const std::int64_t n = 1 << 20;
  std::int32_t* pinned = nullptr;
  CUPLAN_TEST_CUDA(cudaMallocHost(reinterpret_cast<void**>(&pinned), n * sizeof(std::int32_t)));
  std::vector<std::int32_t> expected(n);
  for (std::int64_t i = 0; i < n; ++i) expected[i] = static_cast<std::int32_t>(i * 5 + 1);
  Tensor source = Tensor::empty({n}, i32, Device::cuda(0));
  copy(TensorView(expected.data(), {n}), source.view());
  std::memset(pinned, 0, n * sizeof(std::int32_t));
  Stream s;
  spin_kernel<<<1, 1, 0, s.native()>>>(cycles_for_ms(100));
  CUPLAN_TEST_CUDA(
      cudaMemcpyAsync(pinned, source.data(), n * sizeof(std::int32_t), cudaMemcpyDeviceToHost, s.native()));
  std::vector<std::int32_t> out(n, -7);
  PipelineRun run;
  run.device = 0;
  run.caller = s;
  const std::int64_t chunk = 65536;
  run.chunks = n / chunk;
  run.slots = 3;
  run.in_slot_bytes = run.out_slot_bytes = run.in_host_bytes = run.out_host_bytes = chunk * sizeof(std::int32_t);
  run.parts = [&](std::int64_t i) {
    ChunkParts parts;
    parts.in =
        HostPart{TensorView(pinned + i * chunk, i32, Shape{chunk}, Strides{1}, Device::cpu(), MemorySpace::host_pinned),
                 Strides{1}};
    parts.out = HostPart{TensorView(out.data() + i * chunk, Shape{chunk}), Strides{1}};
    return parts;
  };
  run.compute = [&](std::int64_t, void* d_in, void* d_out, cudaStream_t stream) {
    CUPLAN_TEST_CUDA(cudaMemcpyAsync(d_out, d_in, chunk * sizeof(std::int32_t), cudaMemcpyDeviceToDevice, stream));
  };
  StagingPipeline pipeline;
  pipeline.run(run);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], expected[i]) << i;
  // Back onto the caller's stream: work enqueued there now runs after the pipeline (a query sees it done).
  CUPLAN_TEST_CUDA(cudaStreamSynchronize(s.native()));
  CUPLAN_TEST_CUDA(cudaFreeHost(pinned));
}

TEST(StagedCopy, LargePageableRoundTripsAtOddSizesAndOffsets) {
  CUPLAN_REQUIRE_GPU();
  for (std::int64_t n : {std::int64_t{1} << 20, (std::int64_t{48} << 20) / 4 + 3, (std::int64_t{100} << 20) / 4 + 1}) {
    SCOPED_TRACE(n);
    std::vector<std::int32_t> host(static_cast<std::size_t>(n) + 1), back(static_cast<std::size_t>(n) + 1, -7);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::int32_t>(i * 2654435761u);
    Tensor device = Tensor::empty({n}, i32, Device::cuda(0));
    copy(TensorView(host.data() + 1, {n}), device.view());  // host side at an odd element offset
    copy(device.view(), TensorView(back.data() + 1, {n}));
    EXPECT_EQ(back[0], -7);
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(back[static_cast<std::size_t>(i + 1)], host[i + 1]) << i;
  }
}

}  // namespace
}  // namespace cuplan::detail::staging
