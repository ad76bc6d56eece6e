// SPDX-License-Identifier: Apache-2.0
#pragma once
// The staged route of a Matmul: CUDA execution of operands in host memory. The product is cut into tiles within
// MatmulOptions::device_memory_limit and run through the staging engine (StagedMatmul, docs/staging.md); a product
// that cannot be split runs unsplit through a cuBLASLt product of its own made for host operands (LtProduct: dense
// device copies of the operands in, D copied back), when it fits the limit. The call returns when D is on the host.

#include <memory>

#include "matmul/routes/cublaslt_route.hpp"
#include "matmul/routes/matmul_staged.hpp"

namespace cuplan::detail {

/// Its product (CublasLtRoute::product_) is made for host operands: the unsplit path, planned by plan().
class StagedMatmulRoute final : public CublasLtRoute {
 public:
  explicit StagedMatmulRoute(const MatmulRouteContext& context);
  ~StagedMatmulRoute() override;

  MatmulRouteTraits traits() const noexcept override;
  mm::Problem adapt(mm::Problem problem) override;
  MatmulResult execute(const MatmulExecuteOptions& options) override;
  void free() noexcept override;
  std::size_t held_bytes() const noexcept override;
  void release_idle_memory() noexcept override;

 private:
  StagedOperands staged_operands() const;
  /// Host operands that cannot be split (`reason`) run unsplit: NotSupported naming the reason and the minimum
  /// limit when that needs more than an explicit device_memory_limit.
  void require_unsplit_fits(const char* reason) const;
  MatmulResult execute_staged(const MatmulExecuteOptions& options, const StagedOperands& operands);

  std::unique_ptr<StagedMatmul> staged_;  ///< the staging engine (made at the first execute)
};

}  // namespace cuplan::detail
