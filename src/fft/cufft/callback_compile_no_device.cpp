// SPDX-License-Identifier: Apache-2.0
// The CPU-only build's callback compilation (CUPLAN_ENABLE_CUDA=OFF): no NVRTC or nvJitLink. GPU callbacks are
// refused before planning (CPU execution runs host callables only); this answers any remaining call.

#include "base/cuda_check.hpp"
#include "fft/cufft/callback_compile.hpp"
#include "fft/cufft/callback_info_kernel.hpp"

namespace cuplan::detail {

std::shared_ptr<const LtoCallback> lto_callback(const FFTCallback& /*callback*/, CallbackRole /*role*/,
                                                DType /*element*/, int /*sm*/) {
  throw_built_without_cuda("compiling an FFT callback with NVRTC");
}

const char* callback_device_header_text() noexcept {
  return "";
}

cudaError_t launch_write_callback_info(fft_callback::Info* /*destination*/, const fft_callback::Info& /*value*/,
                                       cudaStream_t /*stream*/) {
  return cudaErrorNoDevice;
}

void write_callback_blocks(const CallbackSet& /*callbacks*/, void* const (&/*blocks*/)[2], std::uint64_t& /*written*/,
                           cudaStream_t /*stream*/) {
  throw_built_without_cuda("writing an FFT callback's caller_info block");
}

cudaError_t load_callback_info_kernel() noexcept {
  return cudaErrorNoDevice;
}

}  // namespace cuplan::detail
