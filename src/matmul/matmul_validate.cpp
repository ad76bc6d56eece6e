// SPDX-License-Identifier: Apache-2.0
// Matmul option and aliasing checks (matmul_validate.hpp).

#include "matmul/matmul_validate.hpp"

#include <fmt/format.h>

#include <utility>

#include "base/overlap.hpp"
#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"
#include "plan/option_checks.hpp"
#include "plan/work_area.hpp"
#include "runtime/undefined_operand.hpp"

namespace cuplan::detail::mm {

void check_epilog(Epilog epilog, const char* who) {
  check_enum_range(epilog, Epilog::bgradb, who, "epilog", "Epilog");
}

void validate_matmul_options(const MatmulOptions& o, const char* who) {
  check_epilog(o.epilog, who);
  check_enum_range(o.compute, Compute::f64, who, "compute", "Compute");
  // A code outside DTypeCode is named as such, not as a dtype the operands do not take ("?").
  if (o.result_dtype) check_enum_range(o.result_dtype->code(), DTypeCode::i64, who, "result_dtype", "DTypeCode");
  check_blocking(o.blocking, who);
  check_planning_mode(o.planning_mode, who);
  check_execution(o.execution, who);
  (void)resolve_work_area(o.work_area, o.work_area_buffer, who);
  // cuBLASLt reads the scale tensors during the product, while it writes its workspace: an external area must not
  // hold them (c and d must be unset, but an overlap is named before that rule is).
  const std::pair<const ScaleFactor*, const char*> scales[] = {{&o.scales.a, "scales.a.tensor"},
                                                               {&o.scales.b, "scales.b.tensor"},
                                                               {&o.scales.c, "scales.c.tensor"},
                                                               {&o.scales.d, "scales.d.tensor"}};
  for (const auto& [scale, name] : scales)
    if (scale->tensor) check_work_area_apart(o.work_area, o.work_area_buffer, scale->tensor->view(), name, who);
}

void require_defined_operands(const TensorRef& a, const TensorRef& b, const MatmulOptions& o, const char* who) {
  require_defined(a, who, "a");
  require_defined(b, who, "b");
  require_defined(o.c, who, "c");
  require_defined(o.bias, who, "bias");
  require_defined(o.epilog_aux, who, "epilog_aux");
  require_defined(o.scales.a.tensor, who, "scales.a.tensor");
  require_defined(o.scales.b.tensor, who, "scales.b.tensor");
  require_defined(o.scales.c.tensor, who, "scales.c.tensor");
  require_defined(o.scales.d.tensor, who, "scales.d.tensor");
}

void check_preferences(const MatmulPreferences& p, const char* who) {
  if (p.limit < 1)
    throw InvalidArgument(fmt::format("{}: preferences.limit: expected at least 1, got {}", who, p.limit));
  constexpr std::uint32_t schemes = 0x7;  // CUBLASLT_REDUCTION_SCHEME_MASK: in-place, compute type, output type
  if ((p.reduction_scheme_mask & ~schemes) != 0)
    throw InvalidArgument(fmt::format("{}: preferences.reduction_scheme_mask: expected bits of {:#x}, got {:#x}", who,
                                      schemes, p.reduction_scheme_mask));
  if (p.max_waves_count < 0)
    throw InvalidArgument(
        fmt::format("{}: preferences.max_waves_count: expected 0 (no limit) or more, got {}", who, p.max_waves_count));
}

void check_autotune_options(const AutotuneOptions& o, const char* who) {
  if (o.iterations < 1)
    throw InvalidArgument(fmt::format("{}: autotune iterations: expected at least 1, got {}", who, o.iterations));
}

void check_beta_needs_c(std::complex<double> beta, bool has_c, const char* who) {
  if (beta != std::complex<double>(0.0) && !has_c) [[unlikely]]
    throw InvalidArgument(
        fmt::format("{}: beta = ({}, {}) needs operand c; none given", who, beta.real(), beta.imag()));
}

void check_output_aliasing(const TensorView& out, std::span<const TensorView* const, 5> inputs, const char* who) {
  static constexpr const char* names[] = {"a", "b", "c", "bias", "epilog_aux"};
  // Runs on every execute with an out: nothing is formatted unless a check fails.
  if (out.read_only()) [[unlikely]]
    throw_read_only(out, "out", fmt::format("{}.execute", who).c_str());
  if (self_overlaps(out.shape(), out.strides())) [[unlikely]]
    check_no_self_overlap(out, "out", fmt::format("{}.execute", who).c_str());
  for (int i = 0; i < 5; ++i) {
    if (inputs[i] == nullptr || !views_overlap(out, *inputs[i])) continue;
    if (i == 2 && same_elements(out, *inputs[i])) continue;  // D over C, element for element: supported
    if (i == 2)
      throw InvalidArgument(fmt::format(
          "{}.execute: out overlaps c: out may share c's memory only as the very same elements (same data pointer, "
          "dtype, shape and strides as D), got out {} {} strides {} at {} and c {} {} strides {} at {}",
          who, out.dtype(), out.shape(), out.strides(), out.data(), inputs[i]->dtype(), inputs[i]->shape(),
          inputs[i]->strides(), inputs[i]->data()));
    check_no_overlap(out, "out", *inputs[i], names[i], fmt::format("{}.execute", who).c_str());
  }
}

}  // namespace cuplan::detail::mm
