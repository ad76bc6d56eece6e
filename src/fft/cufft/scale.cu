// SPDX-License-Identifier: Apache-2.0
// Normalisation of FFT results: one grid-stride kernel over the compute output's (extent, stride) walk.

#include <cuda_fp16.h>

#include <algorithm>

#include "fft/cufft/scale_kernel.hpp"

namespace cuplan::detail {
namespace {

constexpr int kMaxRank = 11;

struct WalkArgs {
  int rank;
  long long extent[kMaxRank];
  long long stride[kMaxRank];
};

template <class Real>
__global__ void scale_kernel(Real* data, WalkArgs walk, long long total, int components, Real scale) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long rest = i, offset = 0;
    for (int d = walk.rank - 1; d >= 0; --d) {
      offset += (rest % walk.extent[d]) * walk.stride[d];
      rest /= walk.extent[d];
    }
    for (int c = 0; c < components; ++c) data[offset * components + c] = data[offset * components + c] * scale;
  }
}

template <class Real>
cudaError_t launch(void* data, const WalkArgs& args, long long total, int components, Real scale, cudaStream_t stream) {
  constexpr int threads = 256;
  const long long blocks = std::min<long long>((total + threads - 1) / threads, 65536);
  scale_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(static_cast<Real*>(data), args, total, components,
                                                                      scale);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_scale(void* data, ScalePrecision precision, int components, int rank, const long long* extent,
                         const long long* stride, double scale, cudaStream_t stream) {
  if (rank > kMaxRank) return cudaErrorInvalidValue;
  WalkArgs args{rank, {}, {}};
  long long total = 1;
  for (int d = 0; d < rank; ++d) {
    args.extent[d] = extent[d];
    args.stride[d] = stride[d];
    total *= extent[d];
  }
  if (total == 0) return cudaSuccess;
  switch (precision) {
    case ScalePrecision::f32:
      return launch(data, args, total, components, static_cast<float>(scale), stream);
    case ScalePrecision::f64:
      return launch(data, args, total, components, scale, stream);
    case ScalePrecision::f16:
      return launch(data, args, total, components, __double2half(scale), stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t load_scale_kernels() noexcept {
  cudaFuncAttributes attributes{};
  cudaError_t status = cudaFuncGetAttributes(&attributes, scale_kernel<float>);
  if (status == cudaSuccess) status = cudaFuncGetAttributes(&attributes, scale_kernel<double>);
  if (status == cudaSuccess) status = cudaFuncGetAttributes(&attributes, scale_kernel<__half>);
  return status;
}

}  // namespace cuplan::detail
