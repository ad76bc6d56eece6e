// SPDX-License-Identifier: Apache-2.0
#pragma once
// An undefined Tensor (default-constructed or moved from) given where a call takes a TensorRef: the TensorRef only
// carries the fact (its constructor has no name to give), and the call refuses it naming its own parameter, on every
// path (class and function forms, a plan-cache hit or miss), before anything else reads the operand.

#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "cuplan/errors.hpp"
#include "cuplan/tensor.hpp"
#include "runtime/access.hpp"

namespace cuplan::detail {

/// StateError "<who>[.<method>]: <name>: expected a defined Tensor, got an undefined one (default-constructed or
/// moved from)"; `name` may be null ("<who>: expected ..."), `method` empty. Inline: the distributed component, which
/// sees only the core library's exported symbols, raises it too.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_undefined(std::string_view who, std::string_view method,
                                                                   const char* name) {
  throw StateError(
      fmt::format("{}{}{}: {}{}expected a defined Tensor, got an undefined one (default-constructed or moved from)",
                  who, method.empty() ? "" : ".", method, name != nullptr ? name : "", name != nullptr ? ": " : ""));
}
[[noreturn]] inline void throw_undefined(std::string_view who, const char* name) {
  throw_undefined(who, {}, name);
}

/// StateError (throw_undefined) when `ref` was made from an undefined Tensor; one load of a flag otherwise.
inline void require_defined(const TensorRef& ref, std::string_view who, std::string_view method, const char* name) {
  if (Access::undefined(ref)) [[unlikely]]
    throw_undefined(who, method, name);
}
inline void require_defined(const TensorRef& ref, std::string_view who, const char* name) {
  require_defined(ref, who, {}, name);
}
/// The same for an optional operand (nothing when unset).
inline void require_defined(const std::optional<TensorRef>& ref, std::string_view who, std::string_view method,
                            const char* name) {
  if (ref) require_defined(*ref, who, method, name);
}
inline void require_defined(const std::optional<TensorRef>& ref, std::string_view who, const char* name) {
  require_defined(ref, who, {}, name);
}

}  // namespace cuplan::detail
