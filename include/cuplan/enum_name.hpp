// SPDX-License-Identifier: Apache-2.0
#pragma once
// The name of an enumerator from a table in the enumeration's order, for the to_string functions of enums whose
// values run 0, 1, 2, ...: a value outside the table, which a cast can make, gets "?" (or `unknown`), never the name
// of another enumerator. An implementation detail of the public headers' to_string functions.

#include <cstddef>
#include <type_traits>

namespace cuplan::detail {

template <class Enum, std::size_t N>
constexpr const char* enum_name(Enum value, const char* const (&names)[N], const char* unknown = "?") noexcept {
  const auto index = static_cast<std::make_unsigned_t<std::underlying_type_t<Enum>>>(value);
  return index < N ? names[index] : unknown;
}

/// As above, with the table checked against the enumeration at compile time: `Last` is its last enumerator, and the
/// table names every enumerator up to it.
template <auto Last, std::size_t N>
constexpr const char* enum_name(decltype(Last) value, const char* const (&names)[N]) noexcept {
  static_assert(N == static_cast<std::size_t>(Last) + 1, "the table names each enumerator once, in order");
  return enum_name(value, names);
}

}  // namespace cuplan::detail
