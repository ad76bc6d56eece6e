// SPDX-License-Identifier: Apache-2.0
#pragma once
// CUDA sources of FFT callbacks that several callback tests compile.

namespace cuplan::testing {

/// A C2C prolog `scale_by` that multiplies every input element by the float its user data points to.
inline constexpr const char* kScaleSource = R"(
#include <cuplan/fft_callback_device.hpp>
__device__ float2 scale_by(void* in, unsigned long long offset, void* info, void*) {
  const float s = *cuplan::fft_callback::user_data<const float>(info);
  const float2 v = static_cast<const float2*>(in)[offset];
  return make_float2(v.x * s, v.y * s);
}
)";

/// An R2C epilog `conv::multiply` (a namespaced symbol) that multiplies every spectrum value by the filter value of
/// its frequency (axis 1), the filter's spectrum being its user data.
inline constexpr const char* kFilterSource = R"(
#include <cuplan/fft_callback_device.hpp>
namespace conv {
__device__ void multiply(void* out, unsigned long long offset, float2 v, void* info, void*) {
  const float2* h = cuplan::fft_callback::user_data<const float2>(info);
  const float2 k = h[cuplan::fft_callback::index(offset, info, 1)];
  static_cast<float2*>(out)[offset] = make_float2(v.x * k.x - v.y * k.y, v.x * k.y + v.y * k.x);
}
}  // namespace conv
)";

}  // namespace cuplan::testing
