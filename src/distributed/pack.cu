// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <stdexcept>

#include "distributed/exchange/cuda_status.hpp"
#include "distributed/pack.hpp"

namespace cuplan::detail::dist {

namespace {

constexpr int max_pieces = 32;  // keeps the kernel parameters well under the 4 KiB limit

struct alignas(16) Bytes16 {
  unsigned long long lo, hi;
};

struct PieceTable {
  BoxCopy copy[max_pieces];
};

// blockIdx.y picks the piece. Each block row of blockDim.x threads copies whole rows of the last axis, which is
// contiguous on both sides, so loads and stores coalesce and the index arithmetic is one division per row.
template <class T>
__global__ void copy_boxes_kernel(PieceTable table) {
  const BoxCopy& c = table.copy[blockIdx.y];
  const std::int64_t rows = c.n[0] * c.n[1];
  const auto* src = static_cast<const T*>(c.src);
  auto* dst = static_cast<T*>(c.dst);
  for (std::int64_t row = blockIdx.x * static_cast<std::int64_t>(blockDim.y) + threadIdx.y; row < rows;
       row += static_cast<std::int64_t>(gridDim.x) * blockDim.y) {
    const std::int64_t i = row / c.n[1];
    const std::int64_t j = row - i * c.n[1];
    const T* s = src + i * c.src_stride[0] + j * c.src_stride[1];
    T* d = dst + i * c.dst_stride[0] + j * c.dst_stride[1];
    for (std::int64_t k = threadIdx.x; k < c.n[2]; k += blockDim.x) d[k * c.dst_stride[2]] = s[k * c.src_stride[2]];
  }
}

}  // namespace

cudaError_t load_copy_boxes_kernels() noexcept {
  cudaFuncAttributes attributes{};
  cudaError_t status = cudaFuncGetAttributes(&attributes, copy_boxes_kernel<unsigned long long>);
  if (status == cudaSuccess) status = cudaFuncGetAttributes(&attributes, copy_boxes_kernel<Bytes16>);
  return status;
}

void copy_boxes(std::span<const BoxCopy> copies, std::size_t element_bytes, cudaStream_t stream) {
  if (element_bytes != 8 && element_bytes != 16) throw std::logic_error("copy_boxes: elements of 8 or 16 bytes only");
  for (std::size_t first = 0; first < copies.size(); first += max_pieces) {
    const std::size_t count = std::min<std::size_t>(max_pieces, copies.size() - first);
    PieceTable table{};
    std::int64_t rows = 0;
    std::int64_t row_length = 1;
    for (std::size_t p = 0; p < count; ++p) {
      table.copy[p] = copies[first + p];
      const BoxCopy& c = table.copy[p];
      if (c.n[0] * c.n[1] * c.n[2] == 0) continue;
      rows = std::max(rows, c.n[0] * c.n[1]);
      row_length = std::max(row_length, c.n[2]);
    }
    if (rows == 0) continue;
    // 256 threads per block: as many along a row as it has elements (a warp at least), the rest over rows.
    const unsigned tx = row_length >= 256 ? 256u : row_length > 64 ? 128u : row_length > 32 ? 64u : 32u;
    const dim3 block(tx, 256u / tx);
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((rows + block.y - 1) / block.y, 8192));
    const dim3 grid(blocks, static_cast<unsigned>(count));
    if (element_bytes == 8)
      copy_boxes_kernel<unsigned long long><<<grid, block, 0, stream>>>(table);
    else
      copy_boxes_kernel<Bytes16><<<grid, block, 0, stream>>>(table);
    CUPLAN_DIST_CUDA(cudaGetLastError());
  }
}

}  // namespace cuplan::detail::dist
