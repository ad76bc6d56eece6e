// SPDX-License-Identifier: Apache-2.0
// The exception of a failing math library status (see library_status.hpp).

#include "base/library_status.hpp"

#include <string>
#include <utility>

#include "cuplan/errors.hpp"

namespace cuplan::detail {

void throw_library_status(const char* library, const char* call, int status, const char* name, const char* text,
                          bool out_of_memory, SourceLocation where) {
  std::string message = describe_failure(library, call, status, name, text, where);
  if (out_of_memory) throw OutOfMemory(message);
  throw LibraryError(library, call, status, name, std::move(message));
}

}  // namespace cuplan::detail
