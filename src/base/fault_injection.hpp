// SPDX-License-Identifier: Apache-2.0
#pragma once
// Fault injection for tests (docs/dev/testing.md, "Fault injection"): makes the n-th device, pinned or host
// allocation fail as if memory were exhausted, so every path that allocates can be shown to raise OutOfMemory,
// leak nothing and work again afterwards; or the n-th math library call (cuFFT, cuBLASLt, NCCL, FFTW planning,
// BLAS) or the n-th plan creation of a function form fail before it runs, so every path can be shown to raise a
// LibraryError that names the object. Armed by the environment (CUPLAN_FAULT_INJECT=<site>:<n>, read at load, site one
// of device, pinned, host, library, plan) or by arm() from a test through cuplan_internal. Storage::allocate, the one
// place cuplan allocates operand, result, workspace and staging memory, and HostArray (base/host_array.hpp), the
// host scratch of the CPU backends, ask inject() before each allocation and report live bytes to
// allocated()/released(); the library status checks ask it before each call. Disarmed, inject()
// is one relaxed atomic load.

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cuplan::detail::fault {

/// `plan`: the plan layer's plan creation of a function-form call (made at the call), raised as the
/// LibraryError of an injected library failure.
enum class Site : int { device, pinned, host, library, plan };
inline constexpr int site_count = 5;
const char* to_string(Site site) noexcept;

extern std::atomic<bool> g_armed;
bool inject_armed(Site site) noexcept;

/// True when this allocation of `site` must fail.
inline bool inject(Site site) noexcept {
  if (!g_armed.load(std::memory_order_relaxed)) [[likely]]
    return false;
  return inject_armed(site);
}

/// The `nth` allocation of `site` from now fails (1: the next one); one shot. Other sites keep working.
void arm(Site site, std::int64_t nth) noexcept;
void disarm() noexcept;
/// Allocations of `site` attempted since the last arm() (failed ones included).
std::int64_t attempts(Site site) noexcept;
/// True once the armed allocation has failed.
bool fired() noexcept;

/// Live bytes and allocations per site, for leak checks (kept always: two relaxed adds per allocation).
void allocated(Site site, std::size_t bytes) noexcept;
void released(Site site, std::size_t bytes) noexcept;
struct Live {
  std::int64_t allocations = 0;
  std::int64_t bytes = 0;
};
Live live(Site site) noexcept;

}  // namespace cuplan::detail::fault
