// SPDX-License-Identifier: Apache-2.0
#pragma once
// Option and aliasing checks every Matmul path runs (class form, function forms on a plan-cache hit or miss).

#include <complex>
#include <span>

#include "cuplan/matmul.hpp"

namespace cuplan::detail::mm {

/// Enum ranges (epilog, compute, blocking) and the execution choice; InvalidArgument naming `who` and the option.
void validate_matmul_options(const MatmulOptions& options, const char* who);
void check_epilog(Epilog epilog, const char* who);
/// a, b and the options' tensors (c, bias, epilog_aux, scale tensors): StateError naming the first made from an
/// undefined Tensor (runtime/undefined_operand.hpp).
void require_defined_operands(const TensorRef& a, const TensorRef& b, const MatmulOptions& options, const char* who);
/// MatmulPreferences of a plan() and AutotuneOptions of an autotune(): checked on every execution space, also where
/// the CPU has no heuristic to ask and nothing to time.
void check_preferences(const MatmulPreferences& preferences, const char* who);
void check_autotune_options(const AutotuneOptions& options, const char* who);
/// beta != 0 needs c: the scalars are not part of the plan key, so every call checks them.
void check_beta_needs_c(std::complex<double> beta, bool has_c, const char* who);

/// The output D of one execute against the operands it reads: D may share C's memory only with C's exact
/// elements (same pointer, dtype, shape and strides; cuBLASLt then runs C == D in place); any other overlap with c,
/// and any overlap with a, b, bias or epilog_aux, is an InvalidArgument naming both operands. Null views are
/// absent operands.
void check_output_aliasing(const TensorView& out, std::span<const TensorView* const, 5> inputs, const char* who);

}  // namespace cuplan::detail::mm
