// SPDX-License-Identifier: Apache-2.0
// Choosing a Matmul's route.

#include "matmul/matmul_route.hpp"

#include "matmul/routes/cpu_route.hpp"
#include "matmul/routes/device_route.hpp"
#include "matmul/routes/staged_route.hpp"

namespace cuplan::detail {

std::unique_ptr<MatmulRoute> make_matmul_route(const MatmulRouteContext& context) {
  const ExecutionTarget& target = context.target;
  if (!target.cuda) return std::make_unique<CpuMatmulRoute>(context);
  // CUDA execution of host memory: the operands are not in the execution's memory and go through staging.
  if (target.host_operands) return std::make_unique<StagedMatmulRoute>(context);
  return std::make_unique<DeviceMatmulRoute>(context);
}

}  // namespace cuplan::detail
