// SPDX-License-Identifier: Apache-2.0
#pragma once
// Pinned host staging buffers of one object, allocated once and reused by every later call (cudaMallocHost costs
// milliseconds). The staging engine fills slot i % slots for chunk i; release() gives the memory back.

#include <cstddef>
#include <memory>

#include "base/non_copyable.hpp"

namespace cuplan::detail {
class Storage;
}

namespace cuplan::detail::staging {

class PinnedRing : NonCopyable {
 public:
  PinnedRing() = default;
  ~PinnedRing() { release(); }
  /// At least `slots` slots of `bytes` each: keeps the current memory when it is large enough, else replaces it
  /// (the caller guarantees that no copy uses the old memory any more). OutOfMemory when pinning fails.
  void ensure(int slots, std::size_t bytes);
  void* slot(int i) const noexcept;
  std::size_t slot_bytes() const noexcept { return slot_bytes_; }
  int slots() const noexcept { return slots_; }
  /// Frees the memory (no copy may use it any more).
  void release() noexcept;

 private:
  std::shared_ptr<Storage> storage_;
  std::size_t slot_bytes_ = 0;
  int slots_ = 0;
};

}  // namespace cuplan::detail::staging
