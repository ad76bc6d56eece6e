// SPDX-License-Identifier: Apache-2.0
// RecordedStream and lasting_stream (see recorded_stream.hpp).

#include "runtime/recorded_stream.hpp"

#include "runtime/access.hpp"
#include "runtime/current_stream.hpp"

namespace cuplan::detail {

bool lasting_stream(StreamRef stream) noexcept {
  // The per-thread default handle is a different stream on each thread: recorded at every use.
  if (thread_relative_stream(stream.native())) return false;
  return Access::owned(stream) || is_default_stream_handle(stream.native());
}

}  // namespace cuplan::detail
