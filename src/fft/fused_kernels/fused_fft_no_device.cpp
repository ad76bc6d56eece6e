// SPDX-License-Identifier: Apache-2.0
// The CPU-only build's fused FFT backend (CUPLAN_ENABLE_CUDA=OFF): no NVRTC, no device. The route never applies
// there (its rules refuse CPU execution); this answers any remaining call.

#include "base/cuda_check.hpp"
#include "fft/fused_kernels/fused_fft_kernel.hpp"

namespace cuplan::detail::fused_fft {

std::string kernel_source(const KernelSpec& /*spec*/) {
  throw_built_without_cuda("generating a fused FFT kernel");
}

std::shared_ptr<const CompiledKernel> compiled_kernel(const KernelSpec& /*spec*/) {
  throw_built_without_cuda("compiling a fused FFT kernel with NVRTC");
}

std::string headers_problem() {
  return "this build has no CUDA (CUPLAN_ENABLE_CUDA=OFF)";
}

bool is_native_length(DType /*precision*/, std::int64_t /*length*/) {
  return false;
}

std::string kernel_cache_directory() {
  return {};
}

void clear_process_cache_for_testing() {}

std::shared_ptr<const LoadedKernel> LoadedKernel::load(const std::shared_ptr<const CompiledKernel>& /*compiled*/,
                                                       int /*device*/) {
  throw_built_without_cuda("loading a fused FFT kernel");
}

void LoadedKernel::launch(Direction /*direction*/, const FusedFftRows& /*rows*/, cudaStream_t /*stream*/) const {
  throw_built_without_cuda("launching a fused FFT kernel");
}

}  // namespace cuplan::detail::fused_fft
