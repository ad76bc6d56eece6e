// SPDX-License-Identifier: Apache-2.0
#pragma once
// Range checks of the distributed operations' enum options and extents, made by every rank alone before anything
// collective: a value cast from an out-of-range integer is refused by number (its name would be "?"), never taken
// for another value.

#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuplan/errors.hpp"

namespace cuplan::detail::dist {

/// InvalidArgument "<option>: expected a value of <type> from 0 to <last>, got the value <value>" unless
/// 0 <= value <= last.
template <class E>
requires std::is_enum_v<E>
void check_enum(E value, E last, const char* option, const char* type) {
  using U = std::underlying_type_t<E>;
  const auto raw = static_cast<long long>(static_cast<U>(value));
  const auto top = static_cast<long long>(static_cast<U>(last));
  if (raw < 0 || raw > top)
    throw InvalidArgument(
        fmt::format("{}: expected a value of {} from 0 to {}, got the value {}", option, type, top, raw));
}

/// InvalidArgument naming `what` unless the product of `extents` (those below 1 are refused elsewhere), in
/// elements of at most `element_bytes` bytes, fits an int64 byte count.
inline void check_element_count(std::span<const std::int64_t> extents, std::int64_t element_bytes, const char* what) {
  const std::int64_t most = std::numeric_limits<std::int64_t>::max() / element_bytes;
  std::int64_t count = 1;
  for (const std::int64_t e : extents) {
    if (e > 0 && count > most / e)
      throw InvalidArgument(
          fmt::format("{}: expected at most {} elements in all (their bytes, {} each at most, "
                      "counted in an int64), got [{}]",
                      what, most, element_bytes, fmt::join(extents, ", ")));
    count *= e > 0 ? e : 1;
  }
}

}  // namespace cuplan::detail::dist
