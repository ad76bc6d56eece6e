// SPDX-License-Identifier: Apache-2.0
#pragma once
// What cuplan's memory is held for, counted per device by the layers that hold it (the plan layer's work areas,
// plan cache and staging rings), so that the memory report (cuplan/memory.hpp, memory::report) reads one place.

#include <cstddef>

namespace cuplan::detail {

enum class MemoryUse { shared_work_area, owned_work_area, cached_plan, staging_ring };

struct MemoryUseTotal {
  std::size_t items = 0;  ///< areas, plans or rings
  std::size_t bytes = 0;
};

/// Adds `items` and `bytes` (either may be negative) to the count of `use` on `device` (-1: the host).
void account_memory(MemoryUse use, int device, std::ptrdiff_t items, std::ptrdiff_t bytes) noexcept;
/// The count of `use` on `device` now.
MemoryUseTotal memory_use(MemoryUse use, int device) noexcept;

}  // namespace cuplan::detail
