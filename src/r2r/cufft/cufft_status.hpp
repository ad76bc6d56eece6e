// SPDX-License-Identifier: Apache-2.0
#pragma once
// cuFFT status codes of the real-to-real backend to cuplan exceptions (LibraryError naming the call, the status and
// its name; OutOfMemory for CUFFT_ALLOC_FAILED), with the fault-injection site every library check has.

#include <cufft.h>

#include "base/cuda_check.hpp"
#include "base/fault_injection.hpp"

namespace cuplan::detail {

[[noreturn]] void throw_r2r_cufft_error(cufftResult status, const char* call, SourceLocation where);
const char* r2r_cufft_status_name(cufftResult status) noexcept;

inline void check_r2r_cufft(cufftResult status, const char* call, SourceLocation where) {
  if (status != CUFFT_SUCCESS) [[unlikely]]
    throw_r2r_cufft_error(status, call, where);
}

}  // namespace cuplan::detail

#define CUPLAN_R2R_CUFFT_CHECK(expr)                                                                                  \
  ::cuplan::detail::check_r2r_cufft(                                                                                  \
      ::cuplan::detail::fault::inject(::cuplan::detail::fault::Site::library) ? CUFFT_INTERNAL_ERROR : (expr), #expr, \
      {__FILE__, __LINE__})
