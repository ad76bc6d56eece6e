// SPDX-License-Identifier: Apache-2.0
#pragma once
// NCCL status codes to exceptions (LibraryError with library "NCCL"), in the message format of every status check.

#include <nccl.h>

namespace cuplan::detail::dist {

/// The symbolic name of `status`, e.g. "ncclRemoteError".
const char* nccl_status_name(ncclResult_t status) noexcept;
[[noreturn]] void throw_nccl(ncclResult_t status, const char* call, const char* file, int line);
void report_nccl(ncclResult_t status, const char* call, const char* file, int line) noexcept;

}  // namespace cuplan::detail::dist

#define CUPLAN_NCCL_CHECK(expr)                                                           \
  do {                                                                                    \
    ncclResult_t cuplan_nccl_status_ = (expr);                                            \
    if (cuplan_nccl_status_ != ncclSuccess) [[unlikely]]                                  \
      ::cuplan::detail::dist::throw_nccl(cuplan_nccl_status_, #expr, __FILE__, __LINE__); \
  } while (0)
#define CUPLAN_NCCL_CHECK_NOEXCEPT(expr)                                                   \
  do {                                                                                     \
    ncclResult_t cuplan_nccl_status_ = (expr);                                             \
    if (cuplan_nccl_status_ != ncclSuccess)                                                \
      ::cuplan::detail::dist::report_nccl(cuplan_nccl_status_, #expr, __FILE__, __LINE__); \
  } while (0)
