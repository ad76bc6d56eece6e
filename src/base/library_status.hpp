// SPDX-License-Identifier: Apache-2.0
#pragma once
// What every math library's status check shares (fft/cufft/cufft_check.hpp, matmul/cublaslt/cublaslt_check.hpp):
// the check itself, and the exception a failing status becomes. Each backend keeps its own status names and texts.

#include "base/error_context.hpp"

namespace cuplan::detail {

/// Throws through `fail(status, call, where)` unless `status` is `success`.
template <auto success, auto fail, class Status>
inline void check_library_status(Status status, const char* call, SourceLocation where) {
  if (status != success) [[unlikely]]
    fail(status, call, where);
}

/// A failing status of `library`'s `call`: OutOfMemory when `out_of_memory` (the library's allocation failure),
/// else LibraryError, with describe_failure's message.
[[noreturn]] void throw_library_status(const char* library, const char* call, int status, const char* name,
                                       const char* text, bool out_of_memory, SourceLocation where);

}  // namespace cuplan::detail
