// SPDX-License-Identifier: Apache-2.0
// The CPU-only build's CUDA backend of RealTransform (CUPLAN_ENABLE_CUDA=OFF): the interface of cufft_r2r.hpp with
// no cuFFT behind it. A RealTransform picks CUDA execution only when a device is available, never the case in this
// build; any remaining call gets the typed error.

#include "base/cuda_check.hpp"
#include "r2r/cufft/cufft_r2r.hpp"

namespace cuplan::detail {

CufftR2R::CufftR2R(const R2RDecision& decision, int device, FFTRoute route, const Strides& /*first_source_strides*/,
                   const char* who)
    : decision_(decision), device_(device), route_(route), who_(who) {
  throw_built_without_cuda("a cuFFT real-to-real transform");
}
CufftR2R::~CufftR2R() = default;
void CufftR2R::plan() {
  throw_built_without_cuda("a cuFFT real-to-real transform");
}
void CufftR2R::execute(Direction /*direction*/, const void* /*in*/, const Strides& /*in_strides*/, void* /*out*/,
                       void* /*workspace*/, cudaStream_t /*stream*/) {
  throw_built_without_cuda("a cuFFT real-to-real transform");
}
std::size_t CufftR2R::workspace_size() const noexcept {
  return 0;
}
CufftR2R::FusedRefusal CufftR2R::prepare_fused(const AxisPlan& /*p*/) const {
  throw_built_without_cuda("a cuFFT real-to-real transform");
}
std::string CufftR2R::shared_memory_refusal(const AxisPlan& /*p*/) const {
  throw_built_without_cuda("a cuFFT real-to-real transform");
}
void CufftR2R::use_passes(AxisPlan& /*p*/, std::size_t /*i*/, std::string /*not_fused*/) {
  throw_built_without_cuda("a cuFFT real-to-real transform");
}
std::string CufftR2R::algorithms(Direction /*direction*/) const {
  return {};
}

}  // namespace cuplan::detail
