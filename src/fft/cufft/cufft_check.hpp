// SPDX-License-Identifier: Apache-2.0
#pragma once
// cuFFT status codes to cuplan exceptions (LibraryError, OutOfMemory for CUFFT_ALLOC_FAILED).

#include <cufft.h>

#include "base/cuda_check.hpp"
#include "base/fault_injection.hpp"

namespace cuplan::detail {

[[noreturn]] void throw_cufft_error(cufftResult status, const char* call, SourceLocation where);
const char* cufft_status_name(cufftResult status) noexcept;

inline void check_cufft(cufftResult status, const char* call, SourceLocation where) {
  if (status != CUFFT_SUCCESS) [[unlikely]]
    throw_cufft_error(status, call, where);
}

}  // namespace cuplan::detail

// Under fault injection (site library) the call is skipped and fails as CUFFT_INTERNAL_ERROR.
#define CUPLAN_CUFFT_CHECK(expr)                                                                                      \
  ::cuplan::detail::check_cufft(                                                                                      \
      ::cuplan::detail::fault::inject(::cuplan::detail::fault::Site::library) ? CUFFT_INTERNAL_ERROR : (expr), #expr, \
      {__FILE__, __LINE__})
