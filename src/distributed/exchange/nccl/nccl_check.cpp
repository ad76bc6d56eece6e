// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/nccl/nccl_check.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "cuplan/errors.hpp"

namespace cuplan::detail::dist {

const char* nccl_status_name(ncclResult_t status) noexcept {
  switch (status) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return "ncclResult(unknown)";
  }
}

void throw_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  const std::string message =
      fmt::format("NCCL call failed: {} returned {} ({}): {} [at {}:{}]", call, nccl_status_name(status),
                  static_cast<int>(status), ncclGetErrorString(status), file, line);
  throw LibraryError("NCCL", call, static_cast<int>(status), nccl_status_name(status), message);
}

void report_nccl(ncclResult_t status, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "cuplan: NCCL call failed in a noexcept path: %s returned %s [at %s:%d]\n", call,
               nccl_status_name(status), file, line);
}

}  // namespace cuplan::detail::dist
