// SPDX-License-Identifier: Apache-2.0
// The device strided copy: one thread per word, index decomposition over up to CopyGeometry::max_rank axes.
// Gathers (strided -> dense), scatters (dense -> strided) and strided -> strided copies all use it.

#include <cstdint>

#include "runtime/copy_kernels.hpp"

namespace cuplan::detail {

namespace {

template <class Word>
__global__ void strided_copy_kernel(StridedCopyArgs args) {
  const CopyGeometry& g = args.geometry;
  const Word* src = static_cast<const Word*>(args.src);
  Word* dst = static_cast<Word*>(args.dst);
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel; i += step) {
    std::int64_t rest = i, src_offset = 0, dst_offset = 0;
    for (int axis = g.rank - 1; axis >= 0; --axis) {
      const std::int64_t index = rest % g.shape[axis];
      rest /= g.shape[axis];
      src_offset += index * g.src_strides[axis];
      dst_offset += index * g.dst_strides[axis];
    }
    dst[dst_offset] = src[src_offset];
  }
}

template <class Word>
cudaError_t launch(const StridedCopyArgs& args, cudaStream_t stream) {
  constexpr int threads = 256;
  constexpr std::int64_t max_blocks = 1 << 20;  // grid-stride loop covers the rest
  const std::int64_t blocks = std::min<std::int64_t>((args.geometry.numel + threads - 1) / threads, max_blocks);
  strided_copy_kernel<Word><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_strided_copy(const StridedCopyArgs& args, cudaStream_t stream) noexcept {
  if (args.geometry.numel == 0) return cudaSuccess;
  switch (args.word_size) {
    case 1:
      return launch<std::uint8_t>(args, stream);
    case 2:
      return launch<std::uint16_t>(args, stream);
    case 4:
      return launch<std::uint32_t>(args, stream);
    case 8:
      return launch<std::uint64_t>(args, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t load_strided_copy_kernels() noexcept {
  cudaFuncAttributes attributes{};
  cudaError_t status = cudaFuncGetAttributes(&attributes, strided_copy_kernel<std::uint8_t>);
  if (status == cudaSuccess) status = cudaFuncGetAttributes(&attributes, strided_copy_kernel<std::uint16_t>);
  if (status == cudaSuccess) status = cudaFuncGetAttributes(&attributes, strided_copy_kernel<std::uint32_t>);
  if (status == cudaSuccess) status = cudaFuncGetAttributes(&attributes, strided_copy_kernel<std::uint64_t>);
  return status;
}

}  // namespace cuplan::detail
