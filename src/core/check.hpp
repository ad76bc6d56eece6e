#pragma once
// One place that turns CUDA, cuFFT and cuBLASLt status codes into exceptions. The checks are plain function
// calls, never assert(): they stay in release builds.

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cufft.h>

#include <string>

#include "cuplan/errors.hpp"

namespace cuplan::detail {

struct SourceLocation {
  const char* file;
  int line;
};

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, SourceLocation where);
[[noreturn]] void throw_cufft_error(cufftResult status, const char* call, SourceLocation where);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, SourceLocation where);

const char* cufft_status_name(cufftResult status) noexcept;

inline void check_cuda(cudaError_t status, const char* call, SourceLocation where) {
  if (status != cudaSuccess) [[unlikely]]
    throw_cuda_error(status, call, where);
}
inline void check_cufft(cufftResult status, const char* call, SourceLocation where) {
  if (status != CUFFT_SUCCESS) [[unlikely]]
    throw_cufft_error(status, call, where);
}
inline void check_cublas(cublasStatus_t status, const char* call, SourceLocation where) {
  if (status != CUBLAS_STATUS_SUCCESS) [[unlikely]]
    throw_cublas_error(status, call, where);
}

/// Throws NotSupported("no CUDA device: <what> ...") when cuda_available() is false.
void require_cuda(const char* what);

/// Logs (never throws) a failing status from a call made in a destructor or other noexcept path.
void report_in_noexcept(cudaError_t status, const char* call, SourceLocation where) noexcept;

}  // namespace cuplan::detail

#define CUPLAN_CUDA_CHECK(expr) ::cuplan::detail::check_cuda((expr), #expr, {__FILE__, __LINE__})
#define CUPLAN_CUFFT_CHECK(expr) ::cuplan::detail::check_cufft((expr), #expr, {__FILE__, __LINE__})
#define CUPLAN_CUBLAS_CHECK(expr) ::cuplan::detail::check_cublas((expr), #expr, {__FILE__, __LINE__})
/// For destructors: a failure is reported through the logger instead of thrown.
#define CUPLAN_CUDA_CHECK_NOEXCEPT(expr)                                                 \
  do {                                                                                   \
    cudaError_t cuplan_status_ = (expr);                                                 \
    if (cuplan_status_ != cudaSuccess)                                                   \
      ::cuplan::detail::report_in_noexcept(cuplan_status_, #expr, {__FILE__, __LINE__}); \
  } while (0)
