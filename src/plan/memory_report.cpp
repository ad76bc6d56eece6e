// SPDX-License-Identifier: Apache-2.0
// The memory report (cuplan/memory.hpp): what the plan layer's holders of memory (work areas, the plan cache, the
// staging rings) and the runtime's (the pinned cache, the device counters) say about one device.

#include "cuplan/errors.hpp"
#include "cuplan/memory.hpp"
#include "plan/cache/plan_cache.hpp"
#include "plan/staging/pinned_ring.hpp"
#include "plan/work_area.hpp"
#include "runtime/pinned_cache.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
namespace memory {

Report report(Device device) {
  Report r;
  r.device = device;
  const int index = device.index();  // -1 for the host
  if (device.is_cuda()) {
    const detail::WorkAreaTotals areas = detail::work_area_totals(index);
    r.shared_work_areas = areas.shared_areas;
    r.shared_work_area_bytes = areas.shared_bytes;
    r.owned_work_areas = areas.owned_areas;
    r.owned_work_area_bytes = areas.owned_bytes;
    r.device_bytes_in_use = stats(device).bytes_in_use;  // InvalidArgument for a device that does not exist
  }
  const auto [plans, bytes] = detail::cached_plans_on(index);
  r.cached_plans = plans;
  r.cached_plan_bytes = bytes;
  r.staging_ring_bytes = detail::staging::pinned_ring_bytes();
  const detail::PinnedCacheStats pinned = detail::pinned_cache().stats();
  r.pinned_cache_live_bytes = pinned.live_bytes;
  r.pinned_cache_idle_bytes = pinned.idle_bytes;
  return r;
}

void release_work_areas(Device device) {
  if (!device.is_cuda())
    throw InvalidArgument(
        "memory::release_work_areas: device: expected a CUDA device, got cpu (work areas are "
        "device memory)");
  detail::release_shared_work_areas(device.index());
}

}  // namespace memory
}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
