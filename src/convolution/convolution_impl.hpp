// SPDX-License-Identifier: Apache-2.0
#pragma once
// The object behind the class form Convolution and fftconvolve's cached plans: the geometry, the operands, the
// lifecycle and the stream contract (PhaseOrder) of one planned convolution. How it runs is its runner's business
// (convolution_runner.hpp), chosen once at construction.

#include <memory>
#include <optional>
#include <string>

#include "convolution/convolution_runner.hpp"
#include "convolution/planner.hpp"
#include "cuplan/convolution.hpp"
#include "plan/cache/operand_signature.hpp"
#include "plan/cache/plan_cache.hpp"
#include "plan/operation/planned_operation.hpp"
#include "plan/stateful.hpp"

namespace cuplan::detail {

/// InvalidArgument naming `op` and the option for an out-of-range enum, thread count or axis count (every path,
/// before a plan key is built).
void validate_convolution_options(const ConvolutionOptions& options, const char* op);

class ConvolutionImpl final : public PlannedOperation {
 public:
  ConvolutionImpl(TensorRef operand, TensorRef kernel, const ConvolutionOptions& options);
  ~ConvolutionImpl() override;

  CUPLAN_PLANNED_OPERATION_PHASES(ConvolutionExecuteOptions);
  /// Runs a call already known to be valid (planned, operand present, `out` of the planned signature).
  Tensor execute_validated(const std::optional<StreamRef>& stream, const EventList& after, const TensorRef* out,
                           bool release_workspace);
  /// `after`: events the phase waits for (the function form's; the class form has none of its own).
  void reset_kernel(TensorRef kernel, std::optional<StreamRef> stream, const EventList& after = {});
  /// Before the first plan: the kernel whose spectrum it makes, replaced by one of the same view without a phase
  /// (a borrowed view, when the call ordered the kernel's producers itself).
  void adopt_kernel(TensorRef&& kernel);

  const ConvolutionGeometry& geometry() const noexcept { return geometry_; }
  cuplan::ConvolutionRoute route() const noexcept { return runner_->kind(); }
  std::size_t workspace_size() const noexcept { return runner_->workspace_size(); }
  /// The library work area as planned: exactly what WorkAreaPolicy::external needs (0 before plan()).
  std::size_t work_area_size() const noexcept { return runner_->work_area_size(); }
  /// What work_area_size() reports once planned, without planning.
  std::size_t estimate_work_area_size() const;
  std::string describe() const override;
  std::string error_context() const override;

 private:
  OperationRoute& memory_route() const noexcept override { return *runner_; }
  ConvolutionGeometry geometry_;
  TensorRef kernel_;  // until plan() has its spectrum
  bool kernel_held_ = true;
  OperandSignature kernel_signature_;
  std::string not_fused_;  // why the fused kernel does not run this convolution (CUDA), for describe()
  std::unique_ptr<ConvolutionRunner> runner_;
};

}  // namespace cuplan::detail
