// SPDX-License-Identifier: Apache-2.0
// The CPU-only build's cuFFT backend (CUPLAN_ENABLE_CUDA=OFF): the interface of cufft_backend.hpp, scale.hpp and
// scale_kernel.hpp with no cuFFT behind it. An FFT picks CUDA execution only when a device is available, which is
// never the case in this build, and an explicit Execution::cuda is refused before planning; these definitions
// answer any remaining call with the typed error, and the kernel entry points as a runtime without a device does.

#include "base/cuda_check.hpp"
#include "fft/cufft/cufft_backend.hpp"
#include "fft/cufft/scale.hpp"
#include "fft/cufft/scale_kernel.hpp"

namespace cuplan::detail {

std::size_t cufft_workspace_size(const LayoutDecision& /*decision*/, int /*device*/) {
  throw_built_without_cuda("a cuFFT plan");
}

CufftPlan::CufftPlan(const LayoutDecision& /*decision*/, int /*device*/, const CallbackSet* /*callbacks*/,
                     std::optional<StreamRef> /*stream*/) {
  throw_built_without_cuda("a cuFFT plan");
}
CufftPlan::~CufftPlan() = default;

void CufftPlan::order_setup_before(cudaStream_t /*stream*/) {
  throw_built_without_cuda("a cuFFT plan");
}
void CufftPlan::bind(cudaStream_t /*stream*/, void* /*workspace*/) {
  throw_built_without_cuda("a cuFFT plan");
}
void CufftPlan::execute(Direction /*direction*/, const void* /*in*/, void* /*out*/) {
  throw_built_without_cuda("a cuFFT transform");
}
void CufftPlan::update_callbacks(const CallbackSet& /*callbacks*/, cudaStream_t /*stream*/) {
  throw_built_without_cuda("a cuFFT plan");
}

void scale_device(void* /*data*/, DType /*dtype*/, const OutputWalk& /*walk*/, double /*scale*/,
                  cudaStream_t /*stream*/) {
  throw_built_without_cuda("normalising on the device");
}

cudaError_t launch_scale(void* /*data*/, ScalePrecision /*precision*/, int /*components*/, int /*rank*/,
                         const long long* /*extent*/, const long long* /*stride*/, double /*scale*/,
                         cudaStream_t /*stream*/) {
  return cudaErrorNoDevice;
}

cudaError_t load_scale_kernels() noexcept {
  return cudaErrorNoDevice;
}

}  // namespace cuplan::detail
