// SPDX-License-Identifier: Apache-2.0
#include "fft/cufft/callback_info_kernel.hpp"

#include <type_traits>

namespace cuplan::detail {
namespace {

// The block is a kernel parameter, copied by value (kernel parameters hold 4 KiB at most).
static_assert(std::is_trivially_copyable_v<fft_callback::Info>, "fft_callback::Info is copied as bytes");
static_assert(sizeof(fft_callback::Info) <= 1024, "fft_callback::Info is a kernel parameter");

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
