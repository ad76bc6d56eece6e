// SPDX-License-Identifier: Apache-2.0
// The ordering checker's switch, read from CUPLAN_CHECK once at load (see ordering_hooks.hpp).

#include "base/ordering_hooks.hpp"

#include <cstdlib>
#include <cstring>

namespace cuplan::detail::ordering {

namespace {
bool from_environment() noexcept {
  const char* value = std::getenv("CUPLAN_CHECK");
  return value != nullptr && std::strcmp(value, "1") == 0;
}
}  // namespace

std::atomic<bool> g_on{from_environment()};
std::atomic<const Hooks*> g_hooks{nullptr};

}  // namespace cuplan::detail::ordering
