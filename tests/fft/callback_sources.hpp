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

}  // namespace cuplan::testing
