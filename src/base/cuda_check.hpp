// SPDX-License-Identifier: Apache-2.0
#pragma once
// CUDA runtime status codes to exceptions. The checks are plain function calls, never assert(): they stay in
// release builds. Each math library's checks live with its backend (fft/cufft/cufft_check.hpp,
// matmul/cublaslt/cublaslt_check.hpp) and build their messages with describe_failure.

#include <cuda_runtime_api.h>

#include <string>

#include "base/error_context.hpp"
#include "cuplan/device.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, SourceLocation where);

inline void check_cuda(cudaError_t status, const char* call, SourceLocation where) {
  if (status != cudaSuccess) [[unlikely]]
    throw_cuda_error(status, call, where);
}

/// Throws NotSupported("no CUDA device: <what> ...") when cuda_available() is false.
void require_cuda(const char* what);

/// InvalidArgument("<what>: expected a CUDA device index of 0 or more, got <i>") for a CUDA device of negative index:
/// wrong on any machine, so said before asking whether there is a GPU (the count is checked where the device is used).
/// Inline: every device allocation asks.
[[noreturn]] void throw_negative_device_index(Device device, const char* what);
inline void require_device_index_sign(Device device, const char* what) {
  if (device.is_cuda() && device.index() < 0) [[unlikely]]
    throw_negative_device_index(device, what);
}

/// NotSupported("no CUDA device: <what> needs a GPU, and this cuplan was built without CUDA ..."): require_cuda's
/// answer in the CPU-only build, and what that build's device backends (the *_no_device.cpp files) throw.
[[noreturn]] void throw_built_without_cuda(const char* what);

/// Logs (never throws) a failing status from a call made in a destructor or other noexcept path.
void report_in_noexcept(cudaError_t status, const char* call, SourceLocation where) noexcept;

}  // namespace cuplan::detail

#define CUPLAN_CUDA_CHECK(expr) ::cuplan::detail::check_cuda((expr), #expr, {__FILE__, __LINE__})
/// For destructors: a failure is reported through the logger instead of thrown.
#define CUPLAN_CUDA_CHECK_NOEXCEPT(expr)                                                 \
  do {                                                                                   \
    cudaError_t cuplan_status_ = (expr);                                                 \
    if (cuplan_status_ != cudaSuccess)                                                   \
      ::cuplan::detail::report_in_noexcept(cuplan_status_, #expr, {__FILE__, __LINE__}); \
  } while (0)
