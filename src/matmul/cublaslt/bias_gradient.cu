// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuplan/errors.hpp"
#include "matmul/cublaslt/bias_gradient.hpp"

namespace cuplan::detail::mm {
namespace {

template <class T>
struct Accumulator {
  using type = float;
};
template <>
struct Accumulator<double> {
  using type = double;
};

template <class Acc>
__device__ void store(void* out, DTypeCode code, std::int64_t i, Acc v) {
  switch (code) {
    case DTypeCode::f16:
      static_cast<__half*>(out)[i] = __float2half(static_cast<float>(v));
      break;
    case DTypeCode::bf16:
      static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16(static_cast<float>(v));
      break;
    case DTypeCode::f32:
      static_cast<float*>(out)[i] = static_cast<float>(v);
      break;
    default:
      static_cast<double*>(out)[i] = static_cast<double>(v);
      break;
  }
}

/// One thread per output element: a strided sum over the reduced axis. Neighbouring threads read neighbouring
/// elements when stride_l is 1 (the common column-sum case); the inputs are small next to the product itself.
template <class T>
__global__ void bias_gradient_kernel(const T* x, void* out, DTypeCode out_code, std::int64_t batch_count,
                                     std::int64_t length, std::int64_t sum_length, std::int64_t stride_l,
                                     std::int64_t stride_s, std::int64_t batch_stride) {
  using Acc = typename Accumulator<T>::type;
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= batch_count * length) return;
  const std::int64_t b = i / length, l = i % length;
  const T* row = x + b * batch_stride + l * stride_l;
  Acc sum = 0;
  for (std::int64_t s = 0; s < sum_length; ++s) sum += static_cast<Acc>(row[s * stride_s]);
  store<Acc>(out, out_code, i, sum);
}

template <class T>
void launch(const BiasGradientReduction& r, cudaStream_t stream) {
  constexpr unsigned threads = 256;
  const auto blocks = static_cast<unsigned>((r.batch_count * r.length + threads - 1) / threads);
  bias_gradient_kernel<T><<<blocks, threads, 0, stream>>>(static_cast<const T*>(r.x), r.out, r.out_dtype.code(),
                                                          r.batch_count, r.length, r.sum_length, r.stride_l, r.stride_s,
                                                          r.batch_stride);
}

bool real_floating(DType t) noexcept {
  return t == f16 || t == bf16 || t == f32 || t == f64;
}

}  // namespace

bool bias_gradient_supported(DType x_dtype, DType out_dtype) noexcept {
  return real_floating(x_dtype) && real_floating(out_dtype);
}

void launch_bias_gradient(const BiasGradientReduction& r, cudaStream_t stream) {
  if (r.batch_count * r.length == 0) return;
  if (!bias_gradient_supported(r.x_dtype, r.out_dtype))
    throw NotSupported("bias gradient reduction: operand and result dtypes must be f16, bf16, f32 or f64");
  if (r.x_dtype == f16)
    launch<__half>(r, stream);
  else if (r.x_dtype == bf16)
    launch<__nv_bfloat16>(r, stream);
  else if (r.x_dtype == f32)
    launch<float>(r, stream);
  else
    launch<double>(r, stream);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    throw CudaError("CUDA runtime", "bias_gradient_kernel<<<>>>", static_cast<int>(status), cudaGetErrorName(status),
                    cudaGetErrorString(status));
}

}  // namespace cuplan::detail::mm
