// SPDX-License-Identifier: Apache-2.0
#include "base/host_array.hpp"

#if defined(__linux__)
#include <sys/sysinfo.h>
#elif defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace cuplan::detail {

std::uint64_t host_memory_capacity() noexcept {
  static const std::uint64_t capacity = [] {
#if defined(__linux__)
    struct sysinfo info {};
    if (sysinfo(&info) != 0) return std::uint64_t{0};
    const auto unit = static_cast<std::uint64_t>(info.mem_unit == 0 ? 1 : info.mem_unit);
    return (static_cast<std::uint64_t>(info.totalram) + static_cast<std::uint64_t>(info.totalswap)) * unit;
#elif defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
                                 : std::uint64_t{0};
#else
    return std::uint64_t{0};
#endif
  }();
  return capacity;
}

}  // namespace cuplan::detail
