// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cuplan Tensors one call reads and writes (docs/streams.md, "cuplan Tensors across streams"): before the call
// enqueues its work, its stream waits for each Tensor's pending producer (and, for a write, its readers on other
// streams); once the work is enqueued, the call is noted as the Tensor's new producer or reader. Borrowed views are
// left to their owners, who order them (the ordering checker reports what they miss).

#include <array>
#include <initializer_list>
#include <span>

#include "base/non_copyable.hpp"
#include "cuplan/stream.hpp"
#include "plan/ordering/ordering_checker.hpp"

namespace cuplan::detail {

class Storage;

class TensorAccesses : NonCopyable {
 public:
  TensorAccesses() = default;
  /// Notes the accesses if end() was not reached: an exception may leave work of the call already enqueued.
  ~TensorAccesses() {
    if (count_ != 0) [[unlikely]]
      end_after_exception();
  }

  /// Orders `stream` after the pending producers of the uses that name an owner (OperandUse::owner).
  void begin(StreamRef stream, std::initializer_list<OperandUse> uses) {
    begin(stream, std::span<const OperandUse>(uses.begin(), uses.size()));
  }
  void begin(StreamRef stream, std::span<const OperandUse> uses);
  /// The call's work is enqueued on the stream given to begin(): notes each access.
  void end();

 private:
  void end_after_exception() noexcept;
  struct Entry {
    Storage* storage;
    bool write;
  };
  static constexpr int max_entries = 8;
  std::array<Entry, max_entries> entries_;  // the first count_ are set: not cleared by every Phase
  int count_ = 0;
  StreamRef stream_;
};

}  // namespace cuplan::detail
