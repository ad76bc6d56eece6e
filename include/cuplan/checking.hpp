// SPDX-License-Identifier: Apache-2.0
#pragma once
// The ordering checker (docs/streams.md, "The ordering checker"): an opt-in debugging aid that turns a missing
// stream-ordering edge into an OrderingError instead of a silent race.

#include "cuplan/export.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

/// Turns the ordering checker on or off for the whole process (on at load when the environment has
/// CUPLAN_CHECK=1). While on, every FFT and Matmul execute and every cuplan::copy checks the memory it reads and
/// writes against the last cuplan use of that memory: a use on another stream that is still pending and that no
/// recorded edge orders before this call (same stream, `.after` events, Stream::wait, a completed event) raises
/// OrderingError naming the operand, both streams and the fix. Off, a call pays one relaxed atomic load.
/// Turning it off forgets what was tracked.
CUPLAN_API void set_checking(bool on);
/// True while the ordering checker is on.
CUPLAN_API bool checking() noexcept;

/// Declares that work enqueued on `stream` from now on is ordered after every cuplan use of `view`'s memory so far,
/// by an edge the checker cannot see (a raw cudaStreamWaitEvent, a CUDA graph, a host synchronisation of another
/// library's stream). A no-op while the checker is off.
CUPLAN_API void assume_ordered(const TensorView& view, StreamRef stream);

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
