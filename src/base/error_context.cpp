// SPDX-License-Identifier: Apache-2.0
// Library failure messages and the object context of a LibraryError (see error_context.hpp).

#include "base/error_context.hpp"

#include <fmt/format.h>

namespace cuplan::detail {

std::string describe_failure(const char* library, const char* call, int status, const char* name, const char* text,
                             SourceLocation where) {
  return fmt::format("{} call failed: {} returned {} ({}): {} [at {}:{}]", library, call, name, status, text,
                     where.file, where.line);
}

void throw_injected_library_failure(const char* library, const char* call, SourceLocation where) {
  throw LibraryError(
      library, call, -1, "CUPLAN_FAULT_INJECTED",
      describe_failure(library, call, -1, "CUPLAN_FAULT_INJECTED",
                       "failure injected by CUPLAN_FAULT_INJECT=library:<n> (docs/dev/testing.md)", where));
}

}  // namespace cuplan::detail
