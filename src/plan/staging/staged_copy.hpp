// SPDX-License-Identifier: Apache-2.0
#pragma once
// The staged copy behind cuplan::copy (src/plan/staging/copy.cpp): large pageable host <-> device copies go through
// the staging pipeline with pinned slots the process keeps. ("Staged copier", not "copy engine": the GPU's copy
// engines are its DMA units, which the distributed exchanges name.)

namespace cuplan::detail {

/// Gives the staged copier's pinned slots, internal streams and events back; the next staged copy makes them again.
/// Waits for a staged copy in progress on another thread. The copier otherwise keeps them for the life of the
/// process, so this is what lets a test fail each of its allocations in turn.
void release_staged_copier() noexcept;

}  // namespace cuplan::detail
