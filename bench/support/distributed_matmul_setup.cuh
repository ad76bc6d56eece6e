// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the distributed matrix benchmarks set up alike: random bf16 operands (values in [-1, 1) from a hash of the
// index and a seed, made on the GPU: no host copy of a large operand) and DistributedMatmul's options for an
// algorithm in its native layouts.

#include <cuda_bf16.h>

#include <cstdint>

#include <cuplan/cuplan.hpp>
#include <cuplan/distributed_matmul.hpp>

#include "support/bench_check.hpp"

namespace bench {

__global__ inline void fill_random_bf16(__nv_bfloat16* x, std::int64_t n, unsigned seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed * 40503u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    x[i] = __float2bfloat16(static_cast<float>(h & 0xFFFF) / 32768.0f - 1.0f);
  }
}

/// A new bf16 tensor of `shape` on `device`, filled on `stream`.
inline cuplan::Tensor random_bf16(const cuplan::Shape& shape, cuplan::Device device, cuplan::StreamRef stream,
                                  unsigned seed) {
  auto t = cuplan::Tensor::empty(shape, cuplan::bf16, device, stream);
  fill_random_bf16<<<1024, 256, 0, stream.native()>>>(static_cast<__nv_bfloat16*>(t.data()), t.numel(), seed);
  BENCH_CUDA_CHECK(cudaGetLastError());
  return t;
}

/// DistributedMatmul on `stream` by all-gather + GEMM in its native layouts (A row blocks, B and D column blocks), or
/// by SUMMA with every operand in blocks of the 2D process grid.
inline cuplan::DistributedMatmulOptions native_options(bool all_gather, cuplan::StreamRef stream) {
  auto native = [](cuplan::MatrixDistribution d) { return cuplan::MatrixLayout{d, {0, 0}, {0, 0}}; };
  cuplan::DistributedMatmulOptions o;
  o.stream = stream;
  if (all_gather) {
    o.layout_a = native(cuplan::MatrixDistribution::row_blocks);
    o.layout_b = o.layout_d = native(cuplan::MatrixDistribution::column_blocks);
    o.algorithm = cuplan::DistributedMatmulAlgorithm::allgather_gemm;
  } else {
    o.layout_a = o.layout_b = o.layout_d = native(cuplan::MatrixDistribution::grid);
    o.algorithm = cuplan::DistributedMatmulAlgorithm::summa;
  }
  return o;
}

}  // namespace bench
