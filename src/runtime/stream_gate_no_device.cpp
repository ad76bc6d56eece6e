// SPDX-License-Identifier: Apache-2.0
// StreamGate without a device: no stream waits, so no gate is ever made (calls plan on the caller's thread).

#include "runtime/stream_gate.hpp"

#include <utility>

#include "cuplan/errors.hpp"

namespace cuplan::detail {

bool StreamGate::available() noexcept {
  return false;
}

StreamGate::StreamGate(StreamRef /*stream*/) {
  throw NotSupported("stream gate: this build of cuplan has no CUDA device support");
}

StreamGate::StreamGate(StreamGate&& other) noexcept
    : word_(std::exchange(other.word_, nullptr)), generation_(other.generation_), opened_(other.opened()) {}

StreamGate::~StreamGate() = default;

void StreamGate::open_on(StreamRef /*stream*/) {}

void StreamGate::open_now() noexcept {
  opened_.store(true, std::memory_order_release);
}

}  // namespace cuplan::detail
