// SPDX-License-Identifier: Apache-2.0
#pragma once
// CUDA runtime status checks of the distributed component. It links the core library's public API only (whose
// internal checks are not exported), so it carries its own, with the same message format.

#include <cuda_runtime_api.h>

namespace cuplan::detail::dist {

[[noreturn]] void throw_cuda(cudaError_t status, const char* call, const char* file, int line);
/// Reports a failure through stderr from a noexcept path (destructors, free()).
void report_cuda(cudaError_t status, const char* call, const char* file, int line) noexcept;

/// Makes `device` current for the scope and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace cuplan::detail::dist

#define CUPLAN_DIST_CUDA(expr)                                                       \
  do {                                                                               \
    cudaError_t cuplan_status_ = (expr);                                             \
    if (cuplan_status_ != cudaSuccess) [[unlikely]]                                  \
      ::cuplan::detail::dist::throw_cuda(cuplan_status_, #expr, __FILE__, __LINE__); \
  } while (0)
#define CUPLAN_DIST_CUDA_NOEXCEPT(expr)                                                                                \
  do {                                                                                                                 \
    cudaError_t cuplan_status_ = (expr);                                                                               \
    if (cuplan_status_ != cudaSuccess) ::cuplan::detail::dist::report_cuda(cuplan_status_, #expr, __FILE__, __LINE__); \
  } while (0)
