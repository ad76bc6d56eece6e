// SPDX-License-Identifier: Apache-2.0
// An FFT prolog built into LTO-IR by cuplan_add_fft_callback (tests/CMakeLists.txt), as a user's nvcc -dlto build
// would: multiplies each loaded c64 element by the float the user data points to.

#include <cuplan/fft_callback_device.hpp>

__device__ float2 cuplan_test_scale(void* in, unsigned long long offset, void* info, void*) {
  const float s = *cuplan::fft_callback::user_data<const float>(info);
  const float2 v = static_cast<const float2*>(in)[offset];
  return make_float2(v.x * s, v.y * s);
}
