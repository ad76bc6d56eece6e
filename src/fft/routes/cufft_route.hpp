// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the two CUDA routes of an FFT (device and staged) share: cuFFT on one device, cuplan's own kernels loaded
// when planning, and a last phase to wait for before their plans go.

#include "fft/fft_route.hpp"

namespace cuplan::detail {

class CufftRoute : public FftRoute {
 public:
  void shape_request(LayoutRequest& request) const override;
  /// cuFFT's limits (check_cufft_supports).
  void check_supported(const LayoutDecision& decision) const override;
  std::size_t required_alignment(DType dtype) const noexcept override;
  std::size_t calls_per_execute() const noexcept override;
  CUPLAN_ROUTE_DESCRIPTIONS;

 protected:
  /// `operand_memory`: cuFFT reads and writes the operand's memory itself (the device route); else the operand is
  /// staged to and from device buffers (the staged route).
  CufftRoute(const FftRouteContext& context, const FFTOptions& options, bool operand_memory);
  /// Loads the kernels of cuplan's own that an execute may launch (scaling, strided copies): under lazy module
  /// loading a first launch loads its module, which can wait for work already running on the device and so block a
  /// planned execute.
  void load_kernels() const;
  /// Blocks until the object's last phase is done (a failure is logged): cuFFT does not document that destroying
  /// a plan waits for the transforms enqueued with it.
  void wait_for_last_phase() const noexcept;

 private:
  Normalization normalization_;
  bool operand_memory_;
  bool single_call_;  // prolog or epilog: their offsets count from each call's pointers, so one call per execute
};

}  // namespace cuplan::detail
