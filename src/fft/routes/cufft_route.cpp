// SPDX-License-Identifier: Apache-2.0
// What the CUDA routes of an FFT share (see cufft_route.hpp).

#include "fft/routes/cufft_route.hpp"

#include <fmt/format.h>

#include "base/cuda_check.hpp"
#include "base/log.hpp"
#include "fft/cufft/cufft_backend.hpp"
#include "fft/cufft/scale_kernel.hpp"
#include "runtime/copy_kernels.hpp"

namespace cuplan::detail {

void CufftRoute::check_supported(const LayoutDecision& decision) const {
  check_cufft_supports(decision);
}

CufftRoute::CufftRoute(const FftRouteContext& context, const FFTOptions& options, bool operand_memory)
    : FftRoute(context),
      normalization_(options.normalization),
      operand_memory_(operand_memory),
      single_call_(options.prolog || options.epilog) {}

void CufftRoute::shape_request(LayoutRequest& request) const {
  request.stage_input = !operand_memory_;  // host operand memory is not the execution's memory
  request.stage_output = !operand_memory_;
  request.loop_is_costly = true;
  request.aligned_real_calls = true;
  request.single_call = single_call_;
}

std::size_t CufftRoute::required_alignment(DType dtype) const noexcept {
  // cuFFT reads and writes real data of R2C/C2R in pairs: device memory it touches directly must be aligned to the
  // complex type (e.g. 16 bytes for f64). Memory staged to the GPU needs the element alignment only.
  return operand_memory_ ? dtype.complex().size() : dtype.alignment();
}

void CufftRoute::load_kernels() const {
  const LayoutDecision& decision = context_.decision;
  const TargetDeviceScope device_scope(context_.target);
  if (normalization_ != Normalization::none) CUPLAN_CUDA_CHECK(load_scale_kernels());
  if (decision.input_copy || decision.output_copy || decision.layout.rank == 0)
    CUPLAN_CUDA_CHECK(load_strided_copy_kernels());
}

void CufftRoute::wait_for_last_phase() const noexcept {
  try {
    context_.order.synchronize();
  } catch (const std::exception& e) {
    log(LogLevel::warning, "FFT::free: waiting for the last phase failed: {}", e.what());
  }
}

std::size_t CufftRoute::calls_per_execute() const noexcept {
  return context_.decision.layout.loop_in_offsets.size();
}

std::string CufftRoute::execution() const {
  return fmt::format("cuFFT execution on cuda:{}", context_.target.device);
}

std::string CufftRoute::location() const {
  return fmt::format("cuda:{} (cuFFT)", context_.target.device);
}

}  // namespace cuplan::detail
