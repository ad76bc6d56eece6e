// SPDX-License-Identifier: Apache-2.0
#include "plan/staging/chunking.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cuplan/errors.hpp"

namespace cuplan::detail::staging {

std::size_t ChunkPlan::device_bytes(const ChunkRequest& request) const noexcept {
  return request.fixed_bytes + static_cast<std::size_t>(slots) * static_cast<std::size_t>(chunk) * request.unit_bytes;
}

std::size_t minimum_limit(const ChunkRequest& request) noexcept {
  return request.fixed_bytes + request.unit_bytes;
}

ChunkPlan plan_chunks(const ChunkRequest& request) {
  if (request.units < 0)
    throw InvalidArgument(fmt::format("{}: staging: units: expected a count >= 0, got {}", request.who, request.units));
  if (request.unit_bytes == 0)
    throw InvalidArgument(fmt::format("{}: staging: unit_bytes: expected > 0, got 0", request.who));
  const std::size_t minimum = minimum_limit(request);
  if (request.limit < minimum)
    throw InvalidArgument(fmt::format(
        "{}: device_memory_limit: {} bytes cannot hold one chunk ({} bytes per unit plus {} fixed); the smallest "
        "limit that works is {} bytes",
        request.who, request.limit, request.unit_bytes, request.fixed_bytes, minimum));
  ChunkPlan plan;
  plan.units = request.units;
  if (request.units == 0) return plan;
  const auto units = static_cast<std::size_t>(request.units);
  const std::size_t room = request.limit - request.fixed_bytes;
  // Everything in one slot when it fits the target (and the limit): nothing to overlap with.
  if (units * request.unit_bytes <= std::min(room, std::max(request.target_bytes, request.unit_bytes))) {
    plan.chunk = plan.last = request.units;
    plan.count = 1;
    return plan;
  }
  // As many slots in flight as the limit allows (at least one unit each), up to max_slots.
  int slots = max_slots;
  while (slots > 1 && room / (static_cast<std::size_t>(slots) * request.unit_bytes) == 0) --slots;
  std::size_t chunk = room / (static_cast<std::size_t>(slots) * request.unit_bytes);
  chunk = std::min(chunk, std::max<std::size_t>(1, request.target_bytes / request.unit_bytes));
  chunk = std::min(chunk, units);
  const std::size_t count = (units + chunk - 1) / chunk;
  chunk = (units + count - 1) / count;  // balanced: the same count, the last chunk as full as possible
  plan.chunk = static_cast<std::int64_t>(chunk);
  plan.count = static_cast<std::int64_t>((units + chunk - 1) / chunk);
  plan.last = request.units - (plan.count - 1) * plan.chunk;
  plan.slots = static_cast<int>(std::min<std::int64_t>(slots, plan.count));
  return plan;
}

std::size_t default_limit(std::size_t free_bytes) noexcept {
  return free_bytes / 2;
}

}  // namespace cuplan::detail::staging
