// SPDX-License-Identifier: Apache-2.0
#include "fft/cufft/callback_info_kernel.hpp"

namespace cuplan::detail {
namespace {

__global__ void write_callback_info(fft_callback::Info* destination, fft_callback::Info value) {
  *destination = value;
}

}  // namespace

cudaError_t launch_write_callback_info(fft_callback::Info* destination, const fft_callback::Info& value,
                                       cudaStream_t stream) {
  write_callback_info<<<1, 1, 0, stream>>>(destination, value);
  return cudaGetLastError();
}

cudaError_t load_callback_info_kernel() noexcept {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, write_callback_info);
}

}  // namespace cuplan::detail
