// SPDX-License-Identifier: Apache-2.0
#include "matmul/cublaslt/cublaslt_check.hpp"

#include "base/library_status.hpp"

namespace cuplan::detail {
namespace {

// What each failing cuBLAS status means (cublasLtGetStatusName gives its name).
struct CublasStatusText {
  cublasStatus_t status;
  const char* text;
};
constexpr CublasStatusText cublas_status_texts[] = {
    {CUBLAS_STATUS_NOT_INITIALIZED, "the library was not initialised"},
    {CUBLAS_STATUS_ALLOC_FAILED, "resource allocation failed"},
    {CUBLAS_STATUS_INVALID_VALUE, "an unsupported value or parameter was passed"},
    {CUBLAS_STATUS_ARCH_MISMATCH, "the device does not support this feature"},
    {CUBLAS_STATUS_MAPPING_ERROR, "access to GPU memory space failed"},
    {CUBLAS_STATUS_EXECUTION_FAILED, "the GPU program failed to execute"},
    {CUBLAS_STATUS_INTERNAL_ERROR, "an internal operation failed"},
    {CUBLAS_STATUS_NOT_SUPPORTED, "the functionality requested is not supported"},
    {CUBLAS_STATUS_LICENSE_ERROR, "license error"},
};

const char* cublas_status_text(cublasStatus_t status) noexcept {
  for (const CublasStatusText& s : cublas_status_texts)
    if (s.status == status) return s.text;
  return "unknown status";
}

}  // namespace

void throw_cublas_error(cublasStatus_t status, const char* call, SourceLocation where) {
  throw_library_status("cuBLASLt", call, static_cast<int>(status), cublasLtGetStatusName(status),
                       cublas_status_text(status), status == CUBLAS_STATUS_ALLOC_FAILED, where);
}

}  // namespace cuplan::detail
