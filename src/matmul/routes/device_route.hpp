// SPDX-License-Identifier: Apache-2.0
#pragma once
// The device route of a Matmul: CUDA execution of device operands through its cuBLASLt product (LtProduct), which
// reads and writes the operands' own memory. Every phase orders itself on the object's stream rule; an execute
// returns once the product is enqueued.

#include "matmul/routes/cublaslt_route.hpp"

namespace cuplan::detail {

class DeviceMatmulRoute final : public CublasLtRoute {
 public:
  explicit DeviceMatmulRoute(const MatmulRouteContext& context) : CublasLtRoute(context, false) {}

  MatmulRouteTraits traits() const noexcept override;
  mm::Problem adapt(mm::Problem problem) override;
  MatmulResult execute(const MatmulExecuteOptions& options) override;
  void order_new_operands(const std::optional<StreamRef>& stream, const char* method) override;
};

}  // namespace cuplan::detail
