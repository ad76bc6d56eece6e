// SPDX-License-Identifier: Apache-2.0
// TensorAccesses (see tensor_accesses.hpp).

#include "plan/ordering/tensor_accesses.hpp"

#include <exception>

#include "base/log.hpp"
#include "runtime/storage.hpp"

namespace cuplan::detail {

void TensorAccesses::begin(StreamRef stream, std::span<const OperandUse> uses) {
  // No test for host streams: memory with a record (Storage::order_access) exists only where there is a GPU.
  stream_ = stream;
  for (const OperandUse& use : uses) {
    if (use.owner == nullptr || use.view == nullptr || use.view->numel() == 0 || count_ == max_entries) continue;
    // A result this call allocated on its own stream: that stream is its producer already, and no other stream has
    // seen it, so there is nothing to wait for and nothing new to note (an execute's common case).
    if (use.fresh && use.owner->allocation_stream().native() == stream.native()) continue;
    use.owner->order_access(stream, use.write);
    entries_[static_cast<std::size_t>(count_++)] = {use.owner, use.write};
  }
}

void TensorAccesses::end() {
  const int count = count_;
  count_ = 0;  // once, even if a note throws
  for (int i = 0; i < count; ++i) {
    const Entry& entry = entries_[static_cast<std::size_t>(i)];
    entry.storage->note_access(stream_, entry.write);
  }
}

void TensorAccesses::end_after_exception() noexcept {
  try {
    end();
  } catch (const std::exception& e) {
    log(LogLevel::warning, "noting the accesses of a call left by an exception failed: {}", e.what());
  }
}

}  // namespace cuplan::detail
