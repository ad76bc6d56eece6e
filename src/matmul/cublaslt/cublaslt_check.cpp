// SPDX-License-Identifier: Apache-2.0
#include "matmul/cublaslt/cublaslt_check.hpp"

#include <string>
#include <utility>

#include "cuplan/errors.hpp"

namespace cuplan::detail {
namespace {

const char* cublas_status_text(cublasStatus_t status) noexcept {
  switch (status) {
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "the library was not initialised";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "an unsupported value or parameter was passed";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "the device does not support this feature";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "license error";
    default:
      return "unknown status";
  }
}

}  // namespace

void throw_cublas_error(cublasStatus_t status, const char* call, SourceLocation where) {
  const char* name = cublasLtGetStatusName(status);
  std::string message =
      describe_failure("cuBLASLt", call, static_cast<int>(status), name, cublas_status_text(status), where);
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(message);
  throw LibraryError("cuBLASLt", call, static_cast<int>(status), name, std::move(message));
}

}  // namespace cuplan::detail
