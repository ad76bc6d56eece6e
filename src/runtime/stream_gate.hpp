// SPDX-License-Identifier: Apache-2.0
#pragma once
// A gate on a stream (docs/streams.md, "Planning off the caller's thread"): a 32-bit word in pinned, mapped host
// memory that one stream waits on (cuStreamWaitValue32) and that another stream (cuStreamWriteValue32) or, on an
// error path, the host opens. Everything enqueued on the waiting stream after close() runs once the gate opens.
//
// Words are reused: each closing takes the word's next generation and waits for "at least" it, and a word is taken
// again only once its last opening has landed, so an opening never moves a word backwards and a waiter on an older
// generation is never stranded.

#include <atomic>
#include <cstdint>

#include "base/non_copyable.hpp"
#include "cuplan/stream.hpp"

namespace cuplan::detail {

class StreamGate : NonCopyable {
 public:
  /// True when the driver offers the stream memory operations a gate needs (always false without a device).
  static bool available() noexcept;
  /// Enqueues on `stream` (of the current device) a wait for the new gate. NotSupported when unavailable,
  /// CudaError / LibraryError when the wait cannot be enqueued (nothing is then enqueued).
  explicit StreamGate(StreamRef stream);
  /// Opens the gate from the host if it was never opened: a waiter is never stranded.
  ~StreamGate();
  StreamGate(StreamGate&& other) noexcept;
  StreamGate& operator=(StreamGate&&) = delete;

  /// Enqueues on `stream` the write that opens the gate, after the work enqueued there so far (nothing when the
  /// gate is open already).
  void open_on(StreamRef stream);
  /// Opens the gate at once from the host (the path of an error: nothing is to run before it). Safe from another
  /// thread than open_on's.
  void open_now() noexcept;
  bool opened() const noexcept { return opened_.load(std::memory_order_acquire); }

 private:
  std::uint32_t* word_ = nullptr;
  std::uint32_t generation_ = 0;
  std::atomic<bool> opened_{false};
};

}  // namespace cuplan::detail
