// SPDX-License-Identifier: Apache-2.0
// An FFT prolog built into LTO-IR by the installed package's cuplan_add_fft_callback: doubles each loaded element.

#include <cuplan/fft_callback_device.hpp>

__device__ float2 consumer_double(void* in, unsigned long long offset, void* info, void*) {
  (void)cuplan::fft_callback::flat_index(offset, info);
  const float2 v = static_cast<const float2*>(in)[offset];
  return make_float2(2.0F * v.x, 2.0F * v.y);
}
