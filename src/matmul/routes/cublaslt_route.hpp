// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the two CUDA routes of a Matmul (device and staged) share, as FFT's share CufftRoute: a cuBLASLt product
// (LtProduct), which plans, autotunes and names the route. Neither route derives from the other; each holds its
// own product, the staged route's made for host operands (its unsplit path).

#include "matmul/matmul_route.hpp"
#include "matmul/routes/lt_product.hpp"

namespace cuplan::detail {

class CublasLtRoute : public MatmulRoute {
 public:
  void plan(const MatmulPlanOptions& options, const EventList& after) override { product_.plan(options, after); }
  std::vector<AlgorithmInfo> algorithms() const override { return product_.algorithms(); }
  void autotune(const AutotuneOptions& options) override { product_.autotune(options); }
  void scalars_changed(std::complex<double> alpha, std::complex<double> beta) override {
    product_.scalars_changed(alpha, beta);
  }
  void operands_changed() noexcept override { product_.operands_changed(); }
  void free() noexcept override { product_.free(); }
  MatmulRouteDescription description() const override { return product_.description(); }
  std::size_t workspace_size() const noexcept override { return product_.workspace_size(); }
  std::size_t held_bytes() const noexcept override { return product_.held_bytes(); }
  void release_idle_memory() noexcept override { product_.release_idle_memory(); }

 protected:
  /// `host_operands`: the operands are in host memory, and the product copies them to the device (LtProduct).
  CublasLtRoute(const MatmulRouteContext& context, bool host_operands)
      : MatmulRoute(context), product_(context, host_operands) {}

  LtProduct product_;
};

}  // namespace cuplan::detail
