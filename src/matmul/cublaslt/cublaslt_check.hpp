// SPDX-License-Identifier: Apache-2.0
#pragma once
// cuBLASLt status codes to cuplan exceptions (LibraryError, OutOfMemory for CUBLAS_STATUS_ALLOC_FAILED).

#include <cublasLt.h>

#include "base/cuda_check.hpp"
#include "base/fault_injection.hpp"
#include "base/library_status.hpp"

namespace cuplan::detail {

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, SourceLocation where);

inline void check_cublas(cublasStatus_t status, const char* call, SourceLocation where) {
  check_library_status<CUBLAS_STATUS_SUCCESS, throw_cublas_error>(status, call, where);
}

}  // namespace cuplan::detail

// Under fault injection (site library) the call is skipped and fails as CUBLAS_STATUS_INTERNAL_ERROR.
#define CUPLAN_CUBLAS_CHECK(expr)                                                                                      \
  ::cuplan::detail::check_cublas(                                                                                      \
      ::cuplan::detail::fault::inject(::cuplan::detail::fault::Site::library) ? CUBLAS_STATUS_INTERNAL_ERROR : (expr), \
      #expr, {__FILE__, __LINE__})
