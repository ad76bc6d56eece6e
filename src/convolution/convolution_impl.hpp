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
#include "plan/stateful.hpp"

namespace cuplan::detail {

/// InvalidArgument naming `op` and the option for an out-of-range enum, thread count or axis count (every path,
/// before a plan key is built).
void validate_convolution_options(const ConvolutionOptions& options, const char* op);

class ConvolutionImpl final : public CachedPlan {
 public:
  ConvolutionImpl(TensorRef operand, TensorRef kernel, const ConvolutionOptions& options);
  ~ConvolutionImpl() override;

  void plan(std::optional<StreamRef> stream);
  /// Validates the call (`out`) and runs it.
  Tensor execute(const ConvolutionExecuteOptions& options);
  /// Runs a call already known to be valid (planned, operand present, `out` of the planned signature).
  Tensor execute_validated(const std::optional<StreamRef>& stream, const EventList& after, const TensorRef* out,
                           bool release_workspace);
  void reset_operand(TensorRef operand, std::optional<StreamRef> stream);
  /// `after`: events the phase waits for (the function form's; the class form has none of its own).
  void reset_kernel(TensorRef kernel, std::optional<StreamRef> stream, const EventList& after = {});
  /// Before the first plan: the kernel whose spectrum it makes, replaced by one of the same view without a phase
  /// (a borrowed view, when the call ordered the kernel's producers itself).
  void adopt_kernel(TensorRef&& kernel);
  /// reset_operand without its own phase and checks, for an operand of the planned signature (a plan-cache hit).
  void adopt_operand(TensorRef&& operand);
  void release_operand();
  void free() noexcept;

  const ConvolutionGeometry& geometry() const noexcept { return geometry_; }
  const ExecutionTarget& target() const noexcept { return target_; }
  cuplan::ConvolutionRoute route() const noexcept { return runner_->kind(); }
  const OperandSignature& out_signature() const noexcept { return out_signature_; }
  std::size_t workspace_size() const noexcept { return runner_->workspace_size(); }
  std::string describe() const;
  std::string error_context() const;
  void require_alive(const char* method) const { state_.require_alive(method); }

 private:
  ConvolutionGeometry geometry_;
  ExecutionTarget target_;
  ObjectState state_{"Convolution"};
  PhaseOrder order_;
  PhaseStreams streams_;
  TensorRef operand_;
  TensorRef kernel_;  // until plan() has its spectrum
  bool kernel_held_ = true;
  OperandSignature operand_signature_;
  OperandSignature kernel_signature_;
  OperandSignature out_signature_;
  EventList pending_after_;
  std::string not_fused_;  // why the fused kernel does not run this convolution (CUDA), for describe()
  std::unique_ptr<ConvolutionRunner> runner_;
};

}  // namespace cuplan::detail
