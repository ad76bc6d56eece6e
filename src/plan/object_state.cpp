// SPDX-License-Identifier: Apache-2.0
// ObjectState (see object_state.hpp).

#include "plan/object_state.hpp"

#include <fmt/format.h>

#include "cuplan/errors.hpp"

namespace cuplan::detail {

void ObjectState::require_alive(const char* method) const {
  if (freed_) [[unlikely]]
    throw StateError(
        fmt::format("{}.{}: the object was freed (free() was called); expected a live object, create a "
                    "new {}",
                    type_name_, method, type_name_));
}

void ObjectState::require_planned(const char* method) const {
  require_alive(method);
  if (!planned_) [[unlikely]]
    throw StateError(
        fmt::format("{}.{}: expected a planned object, got one without a plan; call plan() first", type_name_, method));
}

void ObjectState::require_operand(const char* method) const {
  require_alive(method);
  if (!operand_) [[unlikely]]
    throw StateError(
        fmt::format("{}.{}: expected an operand, got none (release_operand() was called); call "
                    "reset_operand() first",
                    type_name_, method));
}

}  // namespace cuplan::detail
