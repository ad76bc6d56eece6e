// SPDX-License-Identifier: Apache-2.0
// Function forms: matmul and matmul_with_aux on the shared plan cache.
#include <fmt/format.h>

#include <utility>

#include "cuplan/errors.hpp"
#include "matmul/matmul_impl.hpp"
#include "matmul/matmul_validate.hpp"
#include "plan/planning/planned_call.hpp"
#include "plan/work_area.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
namespace {

/// Alignment (up to 16 bytes) the plan's algorithms were chosen for; a cached plan only serves operands as aligned.
void add_optional(detail::PlanKey& key, const std::optional<TensorRef>& ref) {
  key.add(static_cast<std::int64_t>(ref.has_value()));
  if (ref) key.add(detail::OperandSignature::of(ref->view()));  // includes the pointer's alignment class
}

detail::PlanKey matmul_key(const TensorRef& a, const TensorRef& b, const MatmulOptions& o) {
  detail::PlanKey key(detail::PlanKind::matmul);
  key.add(detail::OperandSignature::of(a.view())).add(detail::OperandSignature::of(b.view()));
  add_optional(key, o.c);
  add_optional(key, o.bias);
  add_optional(key, o.epilog_aux);
  key.add(static_cast<std::int64_t>(o.epilog))
      .add(static_cast<std::int64_t>(o.compute))
      .add(static_cast<std::int64_t>(o.execution.kind()))
      .add(static_cast<std::int64_t>(o.execution.device()))
      .add(static_cast<std::int64_t>(o.execution.threads()))
      .add(static_cast<std::int64_t>(o.blocking))
      .add(static_cast<std::int64_t>(o.result_dtype ? static_cast<int>(o.result_dtype->code()) : -1))
      .add(static_cast<std::int64_t>(o.conjugate_a) * 2 + static_cast<std::int64_t>(o.conjugate_b))
      .add(static_cast<std::int64_t>(o.memory_limit))
      .add(static_cast<std::int64_t>(o.graph_replay))
      .add(static_cast<std::uint64_t>(o.device_memory_limit))
      .add_host_execution_device(a.view(), o.execution);
  key.add_work_area(o.work_area, o.work_area_buffer);
  // fp8 scales: host values are uploaded when planned, tensors are bound by address.
  for (const ScaleFactor* s : {&o.scales.a, &o.scales.b, &o.scales.c, &o.scales.d}) {
    key.add(static_cast<double>(s->value.value_or(-0.0f))).add(static_cast<std::int64_t>(s->value.has_value()));
    add_optional(key, s->tensor);
  }
  return key;
}

MatmulResult run(TensorRef a, TensorRef b, MatmulOptions options, const char* who) {
  // Every call, before the plan key (hit or miss): enum values could otherwise alias valid ones in the key.
  detail::mm::require_defined_operands(a, b, options, who);
  detail::mm::validate_matmul_options(options, who);
  options.work_area = detail::function_form_work_area(options.work_area);
  // Up front as well as in the product's execute: on a cache hit as on a miss, before anything is enqueued.
  for (const auto& [operand, name] : {std::pair{&a, "a"}, std::pair{&b, "b"}})
    detail::check_work_area_apart(options.work_area, options.work_area_buffer, operand->view(), name, who);
  for (const auto& [operand, name] :
       {std::pair{&options.c, "c"}, std::pair{&options.bias, "bias"}, std::pair{&options.epilog_aux, "epilog_aux"}})
    if (*operand)
      detail::check_work_area_apart(options.work_area, options.work_area_buffer, (*operand)->view(), name, who);
  const detail::PlanKey key = matmul_key(a, b, options);
  const std::complex<double> alpha = options.alpha, beta = options.beta;
  const std::optional<StreamRef>& stream = options.stream;
  const EventList& after = options.after;
  // Planned at the call in either planning mode: cuBLASLt's heuristic query loads kernel libraries
  // (cuLibraryLoadData), which waits for the whole device, so it cannot run while a gate holds the caller's stream
  // (docs/streams.md, "Planning happens at the call").
  return detail::run_cached_on_callers_thread<detail::MatmulImpl>(
      key, who, [&] { return std::make_unique<detail::MatmulImpl>(a, b, options, who); },
      [&](detail::MatmulImpl& impl) {
        MatmulPlanOptions plan_options;
        plan_options.stream = stream;
        plan_options.after = after;
        impl.plan(plan_options);
      },
      [&](detail::MatmulImpl& impl) {
        impl.set_scalars(alpha, beta);
        impl.adopt_operands({std::move(a), std::move(b), options.c, options.bias, options.epilog_aux});
      },
      [&](detail::MatmulImpl& impl) {
        MatmulResult result;
        MatmulExecuteOptions execute_options;
        execute_options.stream = stream;
        execute_options.after = after;
        result.d = impl.execute(execute_options);
        result.aux = impl.aux();
        result.bias_gradient = impl.bias_gradient();
        return result;
      });
}

}  // namespace

Tensor matmul(TensorRef a, TensorRef b, MatmulOptions options) {
  const detail::mm::EpilogTraits t = detail::mm::epilog_traits(options.epilog);
  if (t.aux_output || t.bias_gradient)
    throw InvalidArgument(fmt::format("matmul: epilog {} produces {} besides D; call matmul_with_aux to receive it",
                                      to_string(options.epilog), t.aux_output ? "an aux output" : "a bias gradient"));
  return run(std::move(a), std::move(b), std::move(options), "matmul").d;
}

MatmulResult matmul_with_aux(TensorRef a, TensorRef b, MatmulOptions options) {
  return run(std::move(a), std::move(b), std::move(options), "matmul_with_aux");
}

std::size_t estimate_workspace_size(TensorRef a, TensorRef b, const MatmulOptions& options,
                                    const MatmulPlanOptions& plan_options) {
  // The class form's construction and plan (cuBLASLt's heuristic, no workspace allocated), then its size.
  detail::MatmulImpl impl(std::move(a), std::move(b), options, "estimate_workspace_size");
  impl.plan(plan_options);
  return impl.workspace_size();
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
