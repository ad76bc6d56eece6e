// SPDX-License-Identifier: Apache-2.0
#include "r2r/cufft/cufft_status.hpp"

#include <string>
#include <utility>

#include "base/error_context.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {

const char* r2r_cufft_status_name(cufftResult status) noexcept {
  switch (status) {
#define CUPLAN_R2R_CUFFT_NAME(s) \
  case s:                        \
    return #s;
    CUPLAN_R2R_CUFFT_NAME(CUFFT_SUCCESS)
    CUPLAN_R2R_CUFFT_NAME(CUFFT_INVALID_PLAN)
    CUPLAN_R2R_CUFFT_NAME(CUFFT_ALLOC_FAILED)
    CUPLAN_R2R_CUFFT_NAME(CUFFT_INVALID_VALUE)
    CUPLAN_R2R_CUFFT_NAME(CUFFT_INTERNAL_ERROR)
    CUPLAN_R2R_CUFFT_NAME(CUFFT_EXEC_FAILED)
    CUPLAN_R2R_CUFFT_NAME(CUFFT_SETUP_FAILED)
    CUPLAN_R2R_CUFFT_NAME(CUFFT_INVALID_SIZE)
    CUPLAN_R2R_CUFFT_NAME(CUFFT_INVALID_DEVICE)
    CUPLAN_R2R_CUFFT_NAME(CUFFT_NO_WORKSPACE)
    CUPLAN_R2R_CUFFT_NAME(CUFFT_NOT_IMPLEMENTED)
    CUPLAN_R2R_CUFFT_NAME(CUFFT_NOT_SUPPORTED)
#undef CUPLAN_R2R_CUFFT_NAME
    default:
      return "CUFFT_STATUS_UNKNOWN";
  }
}

void throw_r2r_cufft_error(cufftResult status, const char* call, SourceLocation where) {
  const char* name = r2r_cufft_status_name(status);
  std::string message = describe_failure("cuFFT", call, static_cast<int>(status), name,
                                         "a cuFFT call of a real-to-real transform failed", where);
  if (status == CUFFT_ALLOC_FAILED) throw OutOfMemory(message);
  throw LibraryError("cuFFT", call, static_cast<int>(status), name, std::move(message));
}

}  // namespace cuplan::detail
