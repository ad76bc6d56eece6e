// SPDX-License-Identifier: Apache-2.0
// Fault injection (see fault_injection.hpp).

#include "base/fault_injection.hpp"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string_view>

#include "cuplan/enum_name.hpp"

namespace cuplan::detail::fault {

namespace {

struct Counters {
  std::atomic<int> site{-1};         // armed site, -1 when none
  std::atomic<std::int64_t> nth{0};  // attempt number that fails
  std::atomic<bool> fired{false};
  std::atomic<std::int64_t> attempts[site_count]{};
  std::atomic<std::int64_t> live_allocations[site_count]{};
  std::atomic<std::int64_t> live_bytes[site_count]{};
};

Counters& counters() {
  static Counters c;
  return c;
}

// CUPLAN_FAULT_INJECT=<site>:<n>
bool arm_from_environment() noexcept {
  const char* value = std::getenv("CUPLAN_FAULT_INJECT");
  if (value == nullptr) return false;
  const std::string_view text(value);
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view name = text.substr(0, colon);
  const long long nth = std::atoll(value + colon + 1);
  if (nth <= 0) return false;
  for (int i = 0; i < site_count; ++i) {
    if (name == to_string(static_cast<Site>(i))) {
      Counters& c = counters();
      c.site.store(i);
      c.nth.store(nth);
      return true;
    }
  }
  return false;
}

int index(Site site) noexcept {
  return static_cast<int>(site);
}

}  // namespace

std::atomic<bool> g_armed{arm_from_environment()};

const char* to_string(Site site) noexcept {
  static constexpr const char* names[] = {"device", "pinned", "host", "library", "plan"};
  static_assert(std::size(names) == site_count);
  return enum_name(site, names, "unknown");
}

bool inject_armed(Site site) noexcept {
  Counters& c = counters();
  if (c.site.load() != index(site)) return false;
  const std::int64_t attempt = c.attempts[index(site)].fetch_add(1) + 1;
  if (attempt != c.nth.load()) return false;
  c.fired.store(true);
  g_armed.store(false, std::memory_order_relaxed);  // one shot
  return true;
}

void arm(Site site, std::int64_t nth) noexcept {
  Counters& c = counters();
  g_armed.store(false);
  for (auto& a : c.attempts) a.store(0);
  c.fired.store(false);
  c.site.store(index(site));
  c.nth.store(nth);
  g_armed.store(nth > 0);
}

void disarm() noexcept {
  g_armed.store(false);
  counters().site.store(-1);
}

std::int64_t attempts(Site site) noexcept {
  return counters().attempts[index(site)].load();
}

bool fired() noexcept {
  return counters().fired.load();
}

void allocated(Site site, std::size_t bytes) noexcept {
  Counters& c = counters();
  c.live_allocations[index(site)].fetch_add(1, std::memory_order_relaxed);
  c.live_bytes[index(site)].fetch_add(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
}

void released(Site site, std::size_t bytes) noexcept {
  Counters& c = counters();
  c.live_allocations[index(site)].fetch_sub(1, std::memory_order_relaxed);
  c.live_bytes[index(site)].fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
}

Live live(Site site) noexcept {
  const Counters& c = counters();
  return {c.live_allocations[index(site)].load(), c.live_bytes[index(site)].load()};
}

}  // namespace cuplan::detail::fault
