// SPDX-License-Identifier: Apache-2.0
#pragma once
// The check that every rank of a distributed object planned the same thing, as a pure function over the fields each
// rank sent: the first field where a rank differs from rank 0, named, with both values.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cuplan::detail::dist {

/// Fields compared across ranks, named; an unused field is 0 on every rank.
constexpr int agreement_fields = 16;
using AgreementValues = std::array<std::int64_t, agreement_fields>;

/// The first disagreement, as "rank R has <field> = <value>, rank 0 has <value>"; empty when all ranks agree.
/// `per_rank[r]` holds rank r's values; `names` names the fields in use (the others must be 0 everywhere).
std::optional<std::string> first_disagreement(std::span<const AgreementValues> per_rank,
                                              std::span<const std::string_view> names);

}  // namespace cuplan::detail::dist
