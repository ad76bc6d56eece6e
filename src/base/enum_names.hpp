// SPDX-License-Identifier: Apache-2.0
#pragma once
// The name of an enumerator from a table in the enumeration's order: the to_string functions of enums whose values
// run 0, 1, 2, ... (a value outside the table, which a cast can make, gets `unknown`).

#include <cstddef>
#include <type_traits>

namespace cuplan::detail {

template <class Enum, std::size_t N>
constexpr const char* enum_name(Enum value, const char* const (&names)[N], const char* unknown = "?") noexcept {
  const auto index = static_cast<std::make_unsigned_t<std::underlying_type_t<Enum>>>(value);
  return index < N ? names[index] : unknown;
}

}  // namespace cuplan::detail
