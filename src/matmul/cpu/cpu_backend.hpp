// SPDX-License-Identifier: Apache-2.0
#pragma once
// CPU execution of a planned product: BLAS gemm per batch entry (the vendor chosen when configuring, blas_name()),
// then beta C and the epilog in C++.

#include <complex>
#include <optional>

#include "matmul/planner.hpp"

namespace cuplan::detail::mm {

/// Host operands of one CPU product (any strides the Problem was planned for).
struct CpuOperands {
  TensorView a, b;
  std::optional<TensorView> c, bias, epilog_aux;
};

/// Host outputs as the Problem describes them: D with d_strides, dense row-major aux (aux_shape), bias gradient.
struct CpuOutputs {
  void* d = nullptr;
  void* aux = nullptr;
  void* bias_gradient = nullptr;
};

/// The BLAS library this build links: "OpenBLAS", "MKL" or "BLIS" (blas_vendor.hpp).
const char* blas_name() noexcept;

/// Throws NotSupported for what the CPU cannot compute (fp8, f16 accumulation).
void check_cpu_support(const Problem& problem, const char* who);

void cpu_matmul(const Problem& problem, const CpuOperands& in, std::complex<double> alpha, std::complex<double> beta,
                const CpuOutputs& out, int threads);

}  // namespace cuplan::detail::mm
