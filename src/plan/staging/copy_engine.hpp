// SPDX-License-Identifier: Apache-2.0
#pragma once
// The staging engine behind cuplan::copy (src/plan/staging/copy.cpp), as far as anything outside that file needs it.

namespace cuplan::detail {

/// Gives the copy engine's pinned slots, internal streams and events back; the next staged copy makes them again.
/// Waits for a staged copy in progress on another thread. The engine otherwise keeps them for the life of the
/// process, so this is what lets a test fail each of the engine's allocations in turn.
void release_copy_engine() noexcept;

}  // namespace cuplan::detail
