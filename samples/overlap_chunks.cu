// SPDX-License-Identifier: Apache-2.0
// Overlapping copy-in, compute and copy-out over several streams by cutting the work into chunks.
//
// On one stream the GPU copies all input in, computes, then copies all output back: the copy engines and the SMs
// take turns. Cut into chunks spread over several streams, chunk k+1 is copied in while chunk k is computed and
// chunk k-1 is copied out. That needs pinned host memory (pageable memory cannot be copied asynchronously) and
// asynchronous copies: cuplan::copy with host memory follows the blocking rule (it returns when the data is there),
// so the pipeline enqueues cudaMemcpyAsync on each stream itself. The measured speed-up is printed; it depends on
// the GPU and its link, so it is not checked. The results are checked exactly.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sample_support.hpp"

namespace cp = cuplan;

// Integer hash rounds: exact on host and device, and enough work per element to compare with the copies.
constexpr int hash_rounds = 400;
__host__ __device__ std::uint32_t hash(std::uint32_t x) {
  for (int r = 0; r < hash_rounds; ++r) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
  }
  return x;
}

__global__ void hash_kernel(const std::uint32_t* in, std::uint32_t* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = hash(in[i]);
}

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "overlap_chunks: %s failed: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

// Copy in, compute, copy out `n` elements as `chunks` chunks, chunk k on streams[k % streams.size()]. Returns the
// elapsed milliseconds from an event before the first chunk to an event after the last.
float run_pipeline(const std::uint32_t* host_in, std::uint32_t* host_out, std::uint32_t* dev_in, std::uint32_t* dev_out,
                   std::int64_t n, int chunks, const std::vector<cp::Stream>& streams) {
  const cp::Stream& first = streams.front();
  cp::Event start(true), stop(true);
  start.record(first);
  for (std::size_t i = 1; i < streams.size(); ++i) streams[i].wait(start);  // all start after `start`

  const std::int64_t chunk = (n + chunks - 1) / chunks;
  for (int k = 0; k < chunks; ++k) {
    const std::int64_t begin = k * chunk;
    const std::int64_t count = std::min(chunk, n - begin);
    if (count <= 0) break;
    const cp::Stream& s = streams[static_cast<std::size_t>(k) % streams.size()];
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(std::uint32_t);
    check_cuda(cudaMemcpyAsync(dev_in + begin, host_in + begin, bytes, cudaMemcpyHostToDevice, s), "copy in");
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((count + 255) / 256, 4096));
    hash_kernel<<<blocks, 256, 0, s>>>(dev_in + begin, dev_out + begin, count);
    check_cuda(cudaGetLastError(), "hash_kernel launch");
    check_cuda(cudaMemcpyAsync(host_out + begin, dev_out + begin, bytes, cudaMemcpyDeviceToHost, s), "copy out");
  }
  for (std::size_t i = 1; i < streams.size(); ++i) first.wait(streams[i]);  // `stop` comes after every last chunk
  stop.record(first);
  stop.synchronize();
  return cp::Event::elapsed_ms(start, stop);
}

int main() {
  sample::require_gpu("overlap_chunks");
  return sample::run("overlap_chunks", [] {
    constexpr std::int64_t n = std::int64_t{1} << 25;  // 128 MiB in, 128 MiB out
    constexpr int num_streams = 4, chunks = 32;

    // Pinned host memory: the copy engines read and write it directly, asynchronously.
    auto in = cp::Tensor::empty({n}, cp::i32, cp::Device::cpu(), {}, cp::HostMemory::pinned);
    auto out_one = cp::Tensor::empty({n}, cp::i32, cp::Device::cpu(), {}, cp::HostMemory::pinned);
    auto out_many = cp::Tensor::empty({n}, cp::i32, cp::Device::cpu(), {}, cp::HostMemory::pinned);
    auto* host_in = static_cast<std::uint32_t*>(in.data());
    for (std::int64_t i = 0; i < n; ++i) host_in[i] = static_cast<std::uint32_t>(i) * 2654435761u;

    std::vector<cp::Stream> streams(num_streams);
    auto dev_in = cp::Tensor::empty({n}, cp::i32, cp::Device::cuda(0), streams[0]);
    auto dev_out = cp::Tensor::empty({n}, cp::i32, cp::Device::cuda(0), streams[0]);
    // The chunks are used on every stream by our own copies and kernels: declare those uses.
    for (const cp::Stream& s : streams) {
      dev_in.record_stream(s);
      dev_out.record_stream(s);
    }
    auto* d_in = static_cast<std::uint32_t*>(dev_in.data());
    auto* d_out = static_cast<std::uint32_t*>(dev_out.data());
    auto* h_one = static_cast<std::uint32_t*>(out_one.data());
    auto* h_many = static_cast<std::uint32_t*>(out_many.data());

    // The baseline: the same pipeline as one chunk on one stream of its own.
    std::vector<cp::Stream> single;
    single.emplace_back(streams[0].device());
    dev_in.record_stream(single.front());
    dev_out.record_stream(single.front());
    single.front().wait(streams[0]);  // the allocations above were made on streams[0]

    run_pipeline(host_in, h_many, d_in, d_out, n, chunks, streams);  // warm-up: first launches, page mappings
    const float one_ms = run_pipeline(host_in, h_one, d_in, d_out, n, 1, single);
    std::memset(h_many, 0, static_cast<std::size_t>(n) * sizeof(std::uint32_t));
    const float many_ms = run_pipeline(host_in, h_many, d_in, d_out, n, chunks, streams);
    std::printf("one stream, one chunk:   %8.3f ms\n", one_ms);
    std::printf("%d streams, %d chunks:   %8.3f ms\n", num_streams, chunks, many_ms);
    std::printf("speed-up from overlap:   %8.2fx\n", one_ms / many_ms);

    sample::check(std::memcmp(h_one, h_many, static_cast<std::size_t>(n) * sizeof(std::uint32_t)) == 0,
                  "chunked multi-stream result equals the one-stream result");
    bool all_right = true;
    for (std::int64_t i = 0; i < n; i += 997) all_right = all_right && h_many[i] == hash(host_in[i]);
    sample::check(all_right, "results match the host computation (every 997th element)");
  });
}
