// SPDX-License-Identifier: Apache-2.0
// Choosing an FFT's route, and what every route shares.

#include "fft/fft_route.hpp"

#include <fmt/format.h>

#include "cuplan/errors.hpp"

#include "fft/routes/cpu_route.hpp"
#include "fft/routes/device_route.hpp"
#include "fft/routes/staged_route.hpp"

namespace cuplan::detail {

template <>
std::optional<Tensor> TransformRoute<FftRouteContext, FftCall>::given_result(const FftCall& call) const {
  if (call.out != nullptr) return call.out->as_tensor();
  if (!context_.inplace) return std::nullopt;
  const LayoutDecision& d = context_.decision;
  if (d.type == FFTType::c2c) return call.operand.as_tensor();  // the result is the operand
  // R2C/C2R in place: the operand's memory seen with the result's dtype, shape and strides, sharing its owner (if
  // any) so that the result keeps that memory alive after the operand is dropped. The memory space is the operand's
  // own: a plan serves pageable and pinned host memory alike.
  const TensorView& x = call.operand.view();
  return Tensor::alias(call.operand,
                       TensorView(x.data(), d.out_dtype, d.out_shape, d.out_strides, x.device(), x.memory_space()));
}

std::unique_ptr<FftRoute> make_fft_route(const FftRouteContext& context, const FFTOptions& options,
                                         const TensorView& operand) {
  const ExecutionTarget& target = context.target;
  if (options.route == FFTRoute::fused && (!target.cuda || target.host_operands))
    throw NotSupported(fmt::format("FFT: route fused: the fused kernel runs CUDA execution of device operands, got {}",
                                   !target.cuda ? "CPU execution (FFTW)" : "a host operand with CUDA execution"));
  if (!target.cuda) return std::make_unique<CpuFftRoute>(context, options, operand);
  // CUDA execution of host memory: the operand is not in the execution's memory and goes through the staging engine.
  if (target.host_operands) return std::make_unique<StagedFftRoute>(context, options, operand);
  return std::make_unique<DeviceFftRoute>(context, options, operand);
}

}  // namespace cuplan::detail
