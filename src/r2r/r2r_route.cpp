// SPDX-License-Identifier: Apache-2.0
#include "r2r/r2r_route.hpp"

#include <fmt/format.h>

#include "cuplan/errors.hpp"

#include "r2r/routes/cpu_route.hpp"
#include "r2r/routes/cuda_route.hpp"

namespace cuplan::detail {

template <>
std::optional<Tensor> R2RRoute::given_result(const R2RCall& call) const {
  if (call.out != nullptr) return call.out->as_tensor();
  if (context_.decision.inplace) return call.operand.as_tensor();
  return std::nullopt;
}

std::unique_ptr<R2RRoute> make_r2r_route(const R2RRouteContext& context, const RealTransformOptions& options,
                                         const TensorView& operand) {
  if (options.route == FFTRoute::fused && !context.target.cuda)
    throw NotSupported(
        fmt::format("{}: route fused: the fused kernel runs CUDA execution, got CPU execution (FFTW)", context.who));
  if (!context.target.cuda) return std::make_unique<CpuR2RRoute>(context, options, operand);
  return std::make_unique<CudaR2RRoute>(context, options, operand);
}

}  // namespace cuplan::detail
