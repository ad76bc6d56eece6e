// SPDX-License-Identifier: Apache-2.0
// The separate-pass route's kernels (see convolution_kernels.hpp). One thread per element of the dense side, a
// grid-stride loop over 64-bit indices.

#include <cuComplex.h>

#include <algorithm>

#include "convolution/cuda/convolution_kernels.hpp"

namespace cuplan::detail {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t count) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((count + kThreads - 1) / kThreads, 1, 65535 * 8));
}

template <class T>
struct Complex;
template <>
struct Complex<float> {
  using type = float2;
};
template <>
struct Complex<double> {
  using type = double2;
};

template <class Dst, class Src>
__device__ Dst convert(Src value) {
  if constexpr (std::is_same_v<Dst, Src>)
    return value;
  else
    return Dst{value, 0};  // real into complex
}

__device__ std::int64_t batch_offset(const CanonicalWalk& w, std::int64_t b) {
  std::int64_t offset = 0;
  for (int i = w.batch_rank - 1; i >= 0; --i) {
    const std::int64_t e = w.batch_extent[i];
    offset += (b % e) * w.batch_stride[i];
    b /= e;
  }
  return offset;
}

// Element `e` of a dense [batch][n[0]][n[1]][n[2]] array as its batch entry and its three indices.
struct Element {
  std::int64_t batch;
  std::int64_t i[3];
};
__device__ Element unravel(std::int64_t e, const std::int64_t (&n)[3]) {
  Element element{};
  for (int k = 2; k >= 0; --k) {
    element.i[k] = e % n[k];
    e /= n[k];
  }
  element.batch = e;
  return element;
}

template <class Src, class Dst>
__global__ void pad_kernel(const Src* src, CanonicalWalk w, std::int64_t total, WorkDims d, Dst* dst) {
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const auto [b, i] = unravel(e, d.length);
    const std::int64_t i0 = i[0], i1 = i[1], i2 = i[2];
    Dst value{};
    if (i0 < w.extent[0] && i1 < w.extent[1] && i2 < w.extent[2])
      value = convert<Dst>(src[batch_offset(w, b) + i0 * w.stride[0] + i1 * w.stride[1] + i2 * w.stride[2]]);
    dst[e] = value;
  }
}

template <class C>
__global__ void multiply_kernel(C* spectrum, const C* kernel, std::int64_t total, std::int64_t entry,
                                CanonicalWalk map) {
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t b = e / entry;
    const C h = kernel[batch_offset(map, b) * entry + (e - b * entry)];
    const C x = spectrum[e];
    spectrum[e] = C{x.x * h.x - x.y * h.y, x.x * h.y + x.y * h.x};
  }
}

template <class T>
__global__ void crop_kernel(const T* src, WorkDims d, std::int64_t total, CanonicalWalk w, T* dst) {
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const auto [b, i] = unravel(e, w.extent);
    const std::int64_t i0 = i[0], i1 = i[1], i2 = i[2];
    const T value =
        src[b * d.entry + ((i0 + d.offset[0]) * d.length[1] + i1 + d.offset[1]) * d.length[2] + i2 + d.offset[2]];
    dst[batch_offset(w, b) + i0 * w.stride[0] + i1 * w.stride[1] + i2 * w.stride[2]] = value;
  }
}

template <class Src, class Dst>
cudaError_t launch_pad(const void* src, const CanonicalWalk& walk, std::int64_t entries, const WorkDims& dims,
                       void* dst, cudaStream_t stream) {
  const std::int64_t total = entries * dims.entry;
  pad_kernel<Src, Dst><<<blocks_for(total), kThreads, 0, stream>>>(static_cast<const Src*>(src), walk, total, dims,
                                                                   static_cast<Dst*>(dst));
  return cudaGetLastError();
}

template <class R>
cudaError_t pad_precision(const void* src, bool src_complex, const CanonicalWalk& walk, std::int64_t entries,
                          const WorkDims& dims, void* dst, bool dst_complex, cudaStream_t stream) {
  using C = typename Complex<R>::type;
  if (src_complex) return launch_pad<C, C>(src, walk, entries, dims, dst, stream);
  if (dst_complex) return launch_pad<R, C>(src, walk, entries, dims, dst, stream);
  return launch_pad<R, R>(src, walk, entries, dims, dst, stream);
}

}  // namespace

cudaError_t pad_device(const void* src, DType src_dtype, const CanonicalWalk& walk, std::int64_t entries,
                       const WorkDims& dims, void* dst, DType dst_dtype, cudaStream_t stream) {
  if (src_dtype.real() == f64)
    return pad_precision<double>(src, src_dtype.is_complex(), walk, entries, dims, dst, dst_dtype.is_complex(), stream);
  return pad_precision<float>(src, src_dtype.is_complex(), walk, entries, dims, dst, dst_dtype.is_complex(), stream);
}

cudaError_t multiply_device(void* spectrum, const void* kernel, DType dtype, std::int64_t entries, std::int64_t entry,
                            const CanonicalWalk& kernel_entries, cudaStream_t stream) {
  const std::int64_t total = entries * entry;
  if (dtype.real() == f64)
    multiply_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<double2*>(spectrum), static_cast<const double2*>(kernel), total, entry, kernel_entries);
  else
    multiply_kernel<<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<float2*>(spectrum), static_cast<const float2*>(kernel), total, entry, kernel_entries);
  return cudaGetLastError();
}

cudaError_t crop_device(const void* src, DType dtype, const WorkDims& dims, std::int64_t entries,
                        const CanonicalWalk& walk, void* dst, cudaStream_t stream) {
  const std::int64_t total = entries * walk.extent[0] * walk.extent[1] * walk.extent[2];
  if (total == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(total);
  if (dtype == c128)
    crop_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const double2*>(src), dims, total, walk,
                                                 static_cast<double2*>(dst));
  else if (dtype == c64)
    crop_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float2*>(src), dims, total, walk,
                                                 static_cast<float2*>(dst));
  else if (dtype == f64)
    crop_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const double*>(src), dims, total, walk,
                                                 static_cast<double*>(dst));
  else
    crop_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float*>(src), dims, total, walk,
                                                 static_cast<float*>(dst));
  return cudaGetLastError();
}

}  // namespace cuplan::detail
