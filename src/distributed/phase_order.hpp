// SPDX-License-Identifier: Apache-2.0
#pragma once
// The ordering every stateful distributed object keeps between its phases (the stream contract of
// docs/streams.md): each phase waits for the previous phase's event, the constructor's `after` (once) and its own
// `after`, and records an event when it ends.

#include <optional>

#include "cuplan/device.hpp"
#include "cuplan/stream.hpp"
#include "distributed/exchange/cuda_status.hpp"

namespace cuplan::detail::dist {

class PhaseOrder {
 public:
  void set_pending(const EventList& after) { pending_ = after; }
  /// Orders `stream` after the last phase, the constructor's events (the first time) and `after`.
  void begin(StreamRef stream, const EventList& after) {
    if (last_) CUPLAN_DIST_CUDA(cudaStreamWaitEvent(stream.native(), last_->native(), 0));
    for (const EventRef& e : pending_) CUPLAN_DIST_CUDA(cudaStreamWaitEvent(stream.native(), e.native(), 0));
    pending_ = {};
    for (const EventRef& e : after) CUPLAN_DIST_CUDA(cudaStreamWaitEvent(stream.native(), e.native(), 0));
  }
  /// Records the end of a phase on `stream`.
  void end(StreamRef stream, Device device) {
    if (!last_) last_.emplace(device, false);
    last_->record(stream);
  }
  void reset() noexcept { last_.reset(); }

 private:
  EventList pending_;
  std::optional<Event> last_;
};

}  // namespace cuplan::detail::dist
