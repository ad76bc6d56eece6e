// SPDX-License-Identifier: Apache-2.0
// The function forms' plan-creation fault point (see planned_call.hpp).

#include "plan/planning/planned_call.hpp"

#include <fmt/format.h>

#include "base/error_context.hpp"
#include "base/fault_injection.hpp"

namespace cuplan::detail {

void plan_creation_fault_point(const char* who) {
  if (fault::inject(fault::Site::plan))
    throw_injected_library_failure("cuplan", fmt::format("{}: plan creation", who).c_str(), {__FILE__, __LINE__});
}

}  // namespace cuplan::detail
