#include <algorithm>
#include <stdexcept>

#include "distributed/cuda_status.hpp"
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

// blockIdx.y picks the piece; threads stride over its elements with the last axis fastest, which is contiguous on
// both sides, so reads and writes coalesce along it.
template <class T>
__global__ void copy_boxes_kernel(PieceTable table) {
  const BoxCopy& c = table.copy[blockIdx.y];
  const std::int64_t plane = c.n[1] * c.n[2];
  const std::int64_t total = c.n[0] * plane;
  const auto* src = static_cast<const T*>(c.src);
  auto* dst = static_cast<T*>(c.dst);
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = e / plane;
    const std::int64_t r = e - i * plane;
    const std::int64_t j = r / c.n[2];
    const std::int64_t k = r - j * c.n[2];
    dst[i * c.dst_stride[0] + j * c.dst_stride[1] + k * c.dst_stride[2]] =
        src[i * c.src_stride[0] + j * c.src_stride[1] + k * c.src_stride[2]];
  }
}

}  // namespace

void copy_boxes(std::span<const BoxCopy> copies, std::size_t element_bytes, cudaStream_t stream) {
  if (element_bytes != 8 && element_bytes != 16) throw std::logic_error("copy_boxes: elements of 8 or 16 bytes only");
  for (std::size_t first = 0; first < copies.size(); first += max_pieces) {
    const std::size_t count = std::min<std::size_t>(max_pieces, copies.size() - first);
    PieceTable table{};
    std::int64_t largest = 0;
    for (std::size_t p = 0; p < count; ++p) {
      table.copy[p] = copies[first + p];
      largest = std::max(largest, table.copy[p].n[0] * table.copy[p].n[1] * table.copy[p].n[2]);
    }
    if (largest == 0) continue;
    constexpr int threads = 256;
    // Enough blocks to fill the GPU for the largest piece; smaller pieces leave some idle.
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((largest + threads - 1) / threads, 4096));
    const dim3 grid(blocks, static_cast<unsigned>(count));
    if (element_bytes == 8)
      copy_boxes_kernel<unsigned long long><<<grid, threads, 0, stream>>>(table);
    else
      copy_boxes_kernel<Bytes16><<<grid, threads, 0, stream>>>(table);
    CUPLAN_DIST_CUDA(cudaGetLastError());
  }
}

}  // namespace cuplan::detail::dist
