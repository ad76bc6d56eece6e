// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The CUDA types the public API names, for both builds. With CUDA (CUPLAN_HAS_CUDA 1) they are the toolkit's own:
/// this header includes the CUDA runtime, libcu++'s cuda::stream_ref and the half-precision headers. In the CPU-only
/// build (CUPLAN_HAS_CUDA 0, no CUDA toolkit anywhere) it declares the handle types with the toolkit's exact
/// definitions (a program that also includes the CUDA runtime sees the same types) and defines the element types
/// cuplan::half, cuplan::bfloat16, cuplan::half2, cuplan::float8_e4m3 and cuplan::float8_e5m2 itself.
/// docs/getting-started.md ("CPU-only build") lists what differs.

#include "cuplan/config.hpp"

#if CUPLAN_HAS_CUDA
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <cuda/stream_ref>
#else
#include <bit>
#include <cmath>
#include <cstdint>
#endif

#if !CUPLAN_HAS_CUDA
// The CUDA runtime's handle types, declared exactly as its driver_types.h does, so that the two declarations agree
// where both are seen. In this build no handle but null and the two default-stream markers ever means anything.
/// A CUDA stream handle (the CPU-only build: only null and the two default-stream markers occur).
typedef struct CUstream_st* cudaStream_t;  // NOLINT(modernize-use-using): the toolkit's declaration
/// A CUDA event handle (the CPU-only build: never made; cuplan's events are host events there).
typedef struct CUevent_st* cudaEvent_t;  // NOLINT(modernize-use-using)
/// A CUDA memory pool handle (the CPU-only build: never made).
typedef struct CUmemPoolHandle_st* cudaMemPool_t;  // NOLINT(modernize-use-using)
#ifndef cudaStreamLegacy
/// The legacy default stream's handle, as the CUDA runtime defines it.
#define cudaStreamLegacy ((cudaStream_t)0x1)
#endif
#ifndef cudaStreamPerThread
/// The per-thread default stream's handle, as the CUDA runtime defines it.
#define cudaStreamPerThread ((cudaStream_t)0x2)
#endif
#endif

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

#if CUPLAN_HAS_CUDA
/// IEEE half precision, the element type of f16 (CUDA's `__half`).
using half = ::__half;
/// bfloat16, the element type of bf16 (CUDA's `__nv_bfloat16`).
using bfloat16 = ::__nv_bfloat16;
/// Complex half precision, the element type of c32 (CUDA's `__half2`: x real, y imaginary).
using half2 = ::__half2;
/// fp8 with 4 exponent and 3 mantissa bits, the element type of f8_e4m3 (CUDA's `__nv_fp8_e4m3`).
using float8_e4m3 = ::__nv_fp8_e4m3;
/// fp8 with 5 exponent and 2 mantissa bits, the element type of f8_e5m2 (CUDA's `__nv_fp8_e5m2`).
using float8_e5m2 = ::__nv_fp8_e5m2;
#else
/// IEEE half precision, the element type of f16: 16 bits of storage with conversions from and to float (rounding to
/// nearest even), as CUDA's `__half` converts on the host.
struct half {
  std::uint16_t bits = 0;  ///< the IEEE binary16 encoding
  /// Zero.
  constexpr half() = default;
  /// `value` rounded to the nearest half (ties to even); overflow gives infinity, NaN stays NaN.
  half(float value) noexcept : bits(encode(value)) {}  // NOLINT(google-explicit-constructor): like __half
  /// The value as float (exact).
  operator float() const noexcept {  // NOLINT(google-explicit-constructor): like __half
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1fu;
    const std::uint32_t mantissa = bits & 0x3ffu;
    if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal or zero
    return sign != 0 ? -magnitude : magnitude;
  }

 private:
  static std::uint16_t encode(float value) noexcept {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t magnitude = x & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);   // NaN
    if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to infinity
    if (magnitude < 0x38800000u) {  // below the smallest normal half: a multiple of 2^-24, ties to even
      const float scaled = std::nearbyint(std::ldexp(std::bit_cast<float>(magnitude), 24));
      return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(scaled));
    }
    // Normal: rebias the exponent, keep 10 mantissa bits, round the 13 dropped ones to nearest even.
    const std::uint32_t rebiased = magnitude - (112u << 23);
    const std::uint32_t rounded = rebiased + 0xfffu + ((rebiased >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | (rounded >> 13));
  }
};
/// bfloat16, the element type of bf16: the upper 16 bits of a float, converted from float by rounding to nearest
/// even, as CUDA's `__nv_bfloat16` converts on the host.
struct bfloat16 {
  std::uint16_t bits = 0;  ///< the upper half of the binary32 encoding
  /// Zero.
  constexpr bfloat16() = default;
  /// `value` rounded to the nearest bfloat16 (ties to even); NaN stays NaN.
  bfloat16(float value) noexcept : bits(encode(value)) {}  // NOLINT(google-explicit-constructor): like CUDA's
  /// The value as float (exact).
  operator float() const noexcept {  // NOLINT(google-explicit-constructor): like CUDA's
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
  }

 private:
  static std::uint16_t encode(float value) noexcept {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
    return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
};
/// Complex half precision, the element type of c32: `x` is the real part, `y` the imaginary part (CUDA's `__half2`).
struct half2 {
  half x;  ///< real part
  half y;  ///< imaginary part
  /// Zero.
  constexpr half2() = default;
  /// `real` + i `imaginary`.
  constexpr half2(half real, half imaginary) noexcept : x(real), y(imaginary) {}
};
/// fp8 e4m3 storage, the element type of f8_e4m3. Storage only in this build: no CPU path computes in fp8 (the
/// fp8 products are cuBLASLt's), so it carries the encoding and no arithmetic.
struct float8_e4m3 {
  std::uint8_t bits = 0;  ///< the e4m3 encoding
};
/// fp8 e5m2 storage, the element type of f8_e5m2 (storage only, like float8_e4m3).
struct float8_e5m2 {
  std::uint8_t bits = 0;  ///< the e5m2 encoding
};
static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2 && sizeof(half2) == 4 && sizeof(float8_e4m3) == 1 &&
              sizeof(float8_e5m2) == 1);
#endif

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
