// SPDX-License-Identifier: Apache-2.0
// The staged route of a Matmul (see staged_route.hpp).

#include "matmul/routes/staged_route.hpp"

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "runtime/pinned_cache.hpp"

namespace cuplan::detail {

using enum mm::Slot;

StagedMatmulRoute::StagedMatmulRoute(const MatmulRouteContext& context) : CublasLtRoute(context, true) {}

StagedMatmulRoute::~StagedMatmulRoute() = default;

MatmulRouteTraits StagedMatmulRoute::traits() const noexcept {
  // D lives on the host, where the operands live, and is copied into: the element's alignment is enough. Aux is
  // cuBLASLt's, as the unsplit product and the tiles' inner products write it.
  return {.request = {.aux_layout = mm::AuxLayout::cublaslt},
          .result_device = context_.target.device,
          .result_alignment = 0};
}

mm::Problem StagedMatmulRoute::adapt(mm::Problem problem) {
  // Host operands are staged into dense device copies in their own orientation, so that the planned form (and D's
  // layout) stays the same; C goes to the device inside D.
  for (mm::MatrixLayout* m : {&problem.a, &problem.b})
    if (!m->needs_copy) mm::describe_dense_copy(*m, false, problem.batch_count);
  return problem;
}

StagedOperands StagedMatmulRoute::staged_operands() const {
  const mm::OperandSlots& operands = context_.operands;
  StagedOperands o{operands[slot_a].ref->view(), operands[slot_b].ref->view(), std::nullopt, std::nullopt};
  if (operands[slot_c].ref) o.c = operands[slot_c].ref->view();
  if (operands[slot_bias].ref) o.bias = operands[slot_bias].ref->view();
  return o;
}

void StagedMatmulRoute::require_unsplit_fits(const char* reason) const {
  const std::size_t limit = context_.options.device_memory_limit;
  if (limit == 0) return;  // the default limit: the unsplit staging runs as it always has
  const std::size_t need = product_.host_operands_bytes();
  if (need <= limit) return;
  throw NotSupported(fmt::format(
      "{}: device_memory_limit: {} bytes cannot hold this product unsplit ({} bytes of operands, result and "
      "workspace), and its host operands cannot be split: {} (epilog {}); the minimum limit for this product is {} "
      "bytes",
      context_.who, limit, need, reason, to_string(context_.problem.epilog), need));
}

MatmulResult StagedMatmulRoute::execute_staged(const MatmulExecuteOptions& options, const StagedOperands& operands) {
  const ExecutionTarget& target = context_.target;
  const mm::Problem& problem = context_.problem;
  Phase phase(context_.order, context_.streams, target, options.stream, options.after, "execute");
  const StreamRef stream = phase.stream();
  if (!staged_)
    staged_ = std::make_unique<StagedMatmul>(context_.options, problem, operands, target.device, context_.who);
  // A new D is pinned (docs/staging.md): the download DMAs into it, no fresh pageable pages to fault in.
  Tensor d = options.out ? options.out->as_tensor()
                         : empty_host_result(problem.result_shape, problem.result_strides, problem.result_dtype);
  staged_->execute(operands, d.view(), context_.options.alpha, context_.options.beta, stream);
  if (options.release_workspace) staged_->release();
  phase.close();
  if (target.blocking) finish_call(target, stream);
  return {.d = std::move(d), .aux = {}, .bias_gradient = {}};  // the tiles' epilogs have no extra outputs
}

MatmulResult StagedMatmulRoute::execute(const MatmulExecuteOptions& options) {
  // Chunk by chunk within device_memory_limit, unless the product cannot be split; then the unsplit product, when
  // it fits an explicit limit.
  const StagedOperands operands = staged_operands();
  const char* reason = StagedMatmul::unsplittable(context_.problem, operands);
  if (reason == nullptr) return execute_staged(options, operands);
  require_unsplit_fits(reason);
  return product_.execute(options);
}

// order_new_operands: the default, nothing to order; every execute returns when D is on the host.

std::size_t StagedMatmulRoute::held_bytes() const noexcept {
  return CublasLtRoute::held_bytes() + (staged_ ? staged_->held_bytes() : 0);
}

void StagedMatmulRoute::release_idle_memory() noexcept {
  // Between calls nothing is in flight (an execute returns once D is on the host).
  CublasLtRoute::release_idle_memory();
  if (staged_) staged_->release_idle_memory();
}

void StagedMatmulRoute::free() noexcept {
  staged_.reset();
  CublasLtRoute::free();
}

}  // namespace cuplan::detail
