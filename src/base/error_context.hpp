// SPDX-License-Identifier: Apache-2.0
#pragma once
// The message format of every library status check, and the object context a LibraryError gains at the boundary of
// an object's call (docs/misuse.md, "Library errors"). No CUDA header: the CPU backends (FFTW, BLAS) use it too.

#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "base/fault_injection.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {

struct SourceLocation {
  const char* file;
  int line;
};

/// "<library> call failed: <call> returned <name> (<status>): <text> [at file:line]", the one message format of
/// every status check.
std::string describe_failure(const char* library, const char* call, int status, const char* name, const char* text,
                             SourceLocation where);

/// Called in a `catch (const LibraryError&)` at the boundary of an object's call (`method`, e.g. "FFT.plan"):
/// throws the same error (same class, library, call and status) with "; in <method>: <describe()>" appended to its
/// message and kept in context(). An error that already has a context (from an inner object) goes on unchanged, as
/// does the original one if describing the object fails. The description is made only on this error path. Inline
/// and on the public error API only, so that the distributed library (which links cuplan's exported symbols) uses
/// the same rule.
template <class Describe>
[[noreturn]] void rethrow_with_context(const LibraryError& error, std::string_view method, const Describe& describe) {
  if (!error.context().empty()) throw;  // an inner object's call already named itself: the most precise context
  std::string context;
  const std::exception_ptr original = std::current_exception();
  try {
    context = std::string(method) + ": " + describe();
  } catch (...) {
    std::rethrow_exception(original);  // the library's error matters more than a missing description
  }
  std::string message = std::string(error.what()) + "; in " + context;
  if (dynamic_cast<const CudaError*>(&error) != nullptr)
    throw CudaError(error.library(), error.call(), error.status(), error.status_name(), std::move(message),
                    std::move(context));
  throw LibraryError(error.library(), error.call(), error.status(), error.status_name(), std::move(message),
                     std::move(context));
}

/// Throws the LibraryError of a library call made to fail by fault injection (fault::Site::library): status -1,
/// status_name "CUPLAN_FAULT_INJECTED".
[[noreturn]] void throw_injected_library_failure(const char* library, const char* call, SourceLocation where);

}  // namespace cuplan::detail

/// For a library call without a status of its own (FFTW planning, BLAS): fails under fault injection only.
#define CUPLAN_LIBRARY_FAULT_POINT(library_name, call_text)                                            \
  do {                                                                                                 \
    if (::cuplan::detail::fault::inject(::cuplan::detail::fault::Site::library))                       \
      ::cuplan::detail::throw_injected_library_failure(library_name, call_text, {__FILE__, __LINE__}); \
  } while (0)
