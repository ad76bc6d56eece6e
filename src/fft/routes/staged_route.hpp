// SPDX-License-Identifier: Apache-2.0
#pragma once
// The staged route of an FFT: CUDA execution of an operand in host memory, chunk by chunk within the device memory
// limit through the staging engine (StagedFft, docs/staging.md); the call returns when the result is on the host.

#include <cstddef>
#include <memory>

#include "fft/routes/cufft_route.hpp"
#include "fft/routes/fft_staged.hpp"

namespace cuplan::detail {

class StagedFftRoute final : public CufftRoute {
 public:
  CUPLAN_ROUTE_CLASS_MEMBERS(StagedFftRoute, FftRouteContext, FFTOptions, FftCall);
  std::size_t held_bytes() const noexcept override { return staged_ ? staged_->held_bytes() : 0; }
  /// Between calls nothing is in flight (an execute returns once the result is on the host).
  void release_idle_memory() noexcept override {
    if (staged_) staged_->release();
  }

 private:
  Strides operand_strides_;  // the host operand's strides at construction
  Parity parity_;
  std::size_t device_memory_limit_;
  std::unique_ptr<StagedFft> staged_;  // planned by plan()
};

}  // namespace cuplan::detail
