// SPDX-License-Identifier: Apache-2.0
#pragma once
// The CPU route of a Matmul: BLAS gemm per batch entry and the epilog in C++. Operands in device memory are copied
// to the host and D back (blocking) on the stream the object's rule picks on their device; host operands need no
// stream.

#include "matmul/matmul_route.hpp"

namespace cuplan::detail {

class CpuMatmulRoute final : public MatmulRoute {
 public:
  explicit CpuMatmulRoute(const MatmulRouteContext& context) : MatmulRoute(context) {}

  MatmulRouteTraits traits() const noexcept override;
  mm::Problem adapt(mm::Problem problem) override;
  void plan(const MatmulPlanOptions& options, const EventList& after) override;
  std::vector<AlgorithmInfo> algorithms() const override;
  void autotune(const AutotuneOptions& options) override;
  MatmulResult execute(const MatmulExecuteOptions& options) override;
  void free() noexcept override;
  MatmulRouteDescription description() const override;
};

}  // namespace cuplan::detail
