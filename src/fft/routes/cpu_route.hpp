// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CPU route of an FFT: FFTW on the host. Operands in device memory are copied to the host and the result back
// (blocking) on the stream the object's rule picks on their device; host operands need no stream.

#include <memory>

#include "fft/fft_route.hpp"
#include "fft/fftw/fftw_backend.hpp"

namespace cuplan::detail {

class CpuFftRoute final : public FftRoute {
 public:
  CUPLAN_ROUTE_CLASS_MEMBERS(CpuFftRoute, FftRouteContext, FFTOptions, FftCall);

  void shape_request(LayoutRequest& request) const override;
  std::size_t required_alignment(DType dtype) const noexcept override;
  void check_supported(const LayoutDecision& decision) const override;
  std::size_t calls_per_execute() const noexcept override;
  CUPLAN_ROUTE_DESCRIPTIONS;

 private:
  Planning planning_;
  bool host_operand_;
  std::unique_ptr<FftwPlan> fftw_;
  Tensor host_in_stage_;
  Tensor host_out_stage_;
};

}  // namespace cuplan::detail
