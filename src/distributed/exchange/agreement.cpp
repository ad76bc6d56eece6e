// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/agreement.hpp"

#include <fmt/format.h>

namespace cuplan::detail::dist {

std::optional<std::string> first_disagreement(std::span<const AgreementValues> per_rank,
                                              std::span<const std::string_view> names) {
  for (std::size_t r = 1; r < per_rank.size(); ++r)
    for (std::size_t f = 0; f < per_rank[r].size(); ++f)
      if (per_rank[r][f] != per_rank[0][f]) {
        const std::string field = f < names.size() ? std::string(names[f]) : fmt::format("field {}", f);
        return fmt::format("rank {} has {} = {}, rank 0 has {}", r, field, per_rank[r][f], per_rank[0][f]);
      }
  return std::nullopt;
}

}  // namespace cuplan::detail::dist
