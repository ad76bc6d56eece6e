// SPDX-License-Identifier: Apache-2.0
#pragma once
// The staged route of a Matmul: CUDA execution of operands in host memory. The product is cut into tiles within
// MatmulOptions::device_memory_limit and run through the staging engine (StagedMatmul, docs/staging.md); a product
// that cannot be split runs unsplit as the device route runs it, with dense device copies of the operands, when it
// fits the limit. The call returns when D is on the host.

#include <memory>

#include "matmul/routes/device_route.hpp"
#include "matmul/routes/matmul_staged.hpp"

namespace cuplan::detail {

class StagedMatmulRoute final : public DeviceMatmulRoute {
 public:
  explicit StagedMatmulRoute(const MatmulRouteContext& context);
  ~StagedMatmulRoute() override;

  void adapt_problem(mm::Problem& problem) override;
  MatmulResultPlacement result_placement(DType dtype) const noexcept override;
  Tensor execute(const MatmulExecuteOptions& options) override;
  void order_new_operands(const std::optional<StreamRef>& stream, const char* method) override;
  void free() noexcept override;

 private:
  StagedOperands staged_operands() const;
  /// Host operands that cannot be split (`reason`) run unsplit: NotSupported naming the reason and the minimum
  /// limit when that needs more than an explicit device_memory_limit.
  void require_unsplit_fits(const char* reason) const;
  Tensor execute_staged(const MatmulExecuteOptions& options, const StagedOperands& operands);

  std::unique_ptr<StagedMatmul> staged_;  ///< the staging engine (made at the first execute)
};

}  // namespace cuplan::detail
