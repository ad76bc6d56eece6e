// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "distributed/finish.hpp"

namespace cuplan::detail::dist {

namespace {

template <class Storage, class Compute, class Convert>
__global__ void finish_real(Storage* dst, const Storage* src, const Storage* c, Compute beta, const Storage* bias,
                            int act, std::int64_t rows, std::int64_t cols) {
  const std::int64_t total = rows * cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    Compute x = Convert::load(src[i]);
    if (c != nullptr) x += beta * Convert::load(c[i]);
    if (bias != nullptr) x += Convert::load(bias[i / cols]);
    if (act == 1) x = x > Compute(0) ? x : Compute(0);
    if (act == 2) {
      const Compute inner = Compute(0.7978845608028654) * (x + Compute(0.044715) * x * x * x);
      x = Compute(0.5) * x * (Compute(1) + tanh(inner));
    }
    dst[i] = Convert::store(x);
  }
}

struct HalfConvert {
  __device__ static float load(__half x) { return __half2float(x); }
  __device__ static __half store(float x) { return __float2half(x); }
};
struct Bf16Convert {
  __device__ static float load(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 store(float x) { return __float2bfloat16(x); }
};
template <class T>
struct Same {
  __device__ static T load(T x) { return x; }
  __device__ static T store(T x) { return x; }
};

// Complex values as (re, im) pairs of R.
template <class R>
__global__ void finish_complex(R* dst, const R* src, const R* c, R beta_re, R beta_im, const R* bias, std::int64_t rows,
                               std::int64_t cols) {
  const std::int64_t total = rows * cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    R re = src[2 * i], im = src[2 * i + 1];
    if (c != nullptr) {
      const R cr = c[2 * i], ci = c[2 * i + 1];
      re += beta_re * cr - beta_im * ci;
      im += beta_re * ci + beta_im * cr;
    }
    if (bias != nullptr) {
      re += bias[2 * (i / cols)];
      im += bias[2 * (i / cols) + 1];
    }
    dst[2 * i] = re;
    dst[2 * i + 1] = im;
  }
}

template <class Storage, class Compute, class Convert>
cudaError_t launch_real(void* dst, const void* src, const void* c, double beta, const void* bias, Activation act,
                        std::int64_t rows, std::int64_t cols, unsigned blocks, cudaStream_t stream) {
  finish_real<Storage, Compute, Convert><<<blocks, 256, 0, stream>>>(
      static_cast<Storage*>(dst), static_cast<const Storage*>(src), static_cast<const Storage*>(c),
      static_cast<Compute>(beta), static_cast<const Storage*>(bias), static_cast<int>(act), rows, cols);
  return cudaGetLastError();
}

}  // namespace

cudaError_t load_finish_kernels(DType dtype) {
  cudaFuncAttributes attributes{};
  switch (dtype.code()) {
    case DTypeCode::f16:
      return cudaFuncGetAttributes(&attributes, finish_real<__half, float, HalfConvert>);
    case DTypeCode::bf16:
      return cudaFuncGetAttributes(&attributes, finish_real<__nv_bfloat16, float, Bf16Convert>);
    case DTypeCode::f32:
      return cudaFuncGetAttributes(&attributes, finish_real<float, float, Same<float>>);
    case DTypeCode::f64:
      return cudaFuncGetAttributes(&attributes, finish_real<double, double, Same<double>>);
    case DTypeCode::c64:
      return cudaFuncGetAttributes(&attributes, finish_complex<float>);
    case DTypeCode::c128:
      return cudaFuncGetAttributes(&attributes, finish_complex<double>);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t finish(void* dst, const void* src, const void* c, std::complex<double> beta, const void* bias,
                   Activation act, std::int64_t rows, std::int64_t cols, DType dtype, cudaStream_t stream) {
  const std::int64_t total = rows * cols;
  if (total == 0) return cudaSuccess;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 4096));
  switch (dtype.code()) {
    case DTypeCode::f16:
      return launch_real<__half, float, HalfConvert>(dst, src, c, beta.real(), bias, act, rows, cols, blocks, stream);
    case DTypeCode::bf16:
      return launch_real<__nv_bfloat16, float, Bf16Convert>(dst, src, c, beta.real(), bias, act, rows, cols, blocks,
                                                            stream);
    case DTypeCode::f32:
      return launch_real<float, float, Same<float>>(dst, src, c, beta.real(), bias, act, rows, cols, blocks, stream);
    case DTypeCode::f64:
      return launch_real<double, double, Same<double>>(dst, src, c, beta.real(), bias, act, rows, cols, blocks, stream);
    case DTypeCode::c64:
      finish_complex<float><<<blocks, 256, 0, stream>>>(static_cast<float*>(dst), static_cast<const float*>(src),
                                                        static_cast<const float*>(c), static_cast<float>(beta.real()),
                                                        static_cast<float>(beta.imag()),
                                                        static_cast<const float*>(bias), rows, cols);
      return cudaGetLastError();
    case DTypeCode::c128:
      finish_complex<double><<<blocks, 256, 0, stream>>>(static_cast<double*>(dst), static_cast<const double*>(src),
                                                         static_cast<const double*>(c), beta.real(), beta.imag(),
                                                         static_cast<const double*>(bias), rows, cols);
      return cudaGetLastError();
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace cuplan::detail::dist
