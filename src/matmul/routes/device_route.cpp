// SPDX-License-Identifier: Apache-2.0
// The device route of a Matmul (see device_route.hpp).

#include "matmul/routes/device_route.hpp"

namespace cuplan::detail {

MatmulRouteTraits DeviceMatmulRoute::traits() const noexcept {
  // D is written by the planned algorithms, chosen for 16-byte aligned D; aux in cuBLASLt's layout.
  return {.request = {.aux_layout = mm::AuxLayout::cublaslt},
          .result_device = context_.target.device,
          .result_alignment = 16};
}

mm::Problem DeviceMatmulRoute::adapt(mm::Problem problem) {
  return problem;  // operands the planning marked needs_copy are copied as it describes them
}

MatmulResult DeviceMatmulRoute::execute(const MatmulExecuteOptions& options) {
  return product_.execute(options);
}

void DeviceMatmulRoute::order_new_operands(const std::optional<StreamRef>& stream, const char* method) {
  // New operands may be written by work on the stream (by the object's rule): order it after the last phase.
  Phase phase(context_.order, context_.streams, context_.target, stream, EventList{}, method);
  phase.close();
}

}  // namespace cuplan::detail
