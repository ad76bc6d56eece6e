// SPDX-License-Identifier: Apache-2.0
#pragma once
// The resource each device's allocations come from, and cuplan's allocation counters (cuplan/memory.hpp).

#include <cstddef>
#include <memory>

#include "cuplan/memory.hpp"

namespace cuplan::detail {

/// The resource serving `device` now (the one set, or the default pool's); `device` already validated.
std::shared_ptr<MemoryResource> device_resource(int device);
/// Counts an allocation of `bytes` on `device` (bytes in use, peak).
void note_allocate(int device, std::size_t bytes) noexcept;
/// Gives `ptr` back to `resource` on `stream` and counts it; never throws (a failure is logged).
void release_to(MemoryResource& resource, int device, void* ptr, std::size_t bytes, cudaStream_t stream) noexcept;

}  // namespace cuplan::detail
