// SPDX-License-Identifier: Apache-2.0
#pragma once
// The ordering checker (docs/streams.md, "The ordering checker"). OrderingTracker is the bookkeeping, free of CUDA
// so that its rules are tested on any machine: per stream a vector clock of the other streams' work it is ordered
// after, per recorded event a snapshot of its stream's clock, per memory range the last cuplan write and the last
// read per stream, each with a completion mark. CheckedUses is what a call site holds: it checks a call's operands
// before its work is enqueued and records them after, only while checking is on and only for the outermost cuplan
// call (the internal copies of an execute are the execute's own work).

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/non_copyable.hpp"
#include "base/ordering_hooks.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan::detail {

class Storage;

/// Completion of the work a recorded use stands for.
class CompletionMark {
 public:
  virtual ~CompletionMark() = default;
  /// True while that work may still be running (an event query that says "not ready").
  virtual bool pending() const = 0;
};

/// The bookkeeping of the checker; thread-safe. Streams and events are opaque keys.
class OrderingTracker {
 public:
  using Key = const void*;
  /// One operand of a call: its bytes [begin, end), whether the call writes it, and whether to check it (a result
  /// the call itself just allocated is recorded only: the pool orders reuse of freed memory).
  struct Range {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    const char* name = "";
    bool write = false;
    bool check = true;
  };

  /// OrderingError if a range is touched on `stream` while an unordered, pending use on another stream exists.
  /// `who` and `method` name the call ("FFT", "execute"; an empty method: `who` alone, "cuplan::copy").
  void check(Key stream, std::span<const Range> ranges, const char* who, const char* method) const;
  /// Records the ranges as used by work just enqueued on `stream`, complete when `mark` says so.
  void record(Key stream, std::span<const Range> ranges, const std::shared_ptr<CompletionMark>& mark);
  /// An event was recorded on a stream / a stream waits for an event (edges).
  void recorded(Key event, Key stream);
  void waited(Key stream, Key event);
  /// Work on `stream` from now on is ordered after every use of [begin, end) so far.
  void assume_ordered(std::uintptr_t begin, std::uintptr_t end, Key stream);
  /// Drops the history of [begin, end) (freed memory).
  void forget(std::uintptr_t begin, std::uintptr_t end);
  void clear();
  std::size_t ranges_tracked() const;

 private:
  struct Use {
    Key stream = nullptr;
    std::uint64_t sequence = 0;  // position of the use in its stream's tracked work
    std::shared_ptr<CompletionMark> mark;
  };
  struct Entry {
    std::uintptr_t begin = 0, end = 0;
    bool written = false;
    Use writer;
    std::vector<Use> readers;  // the last read per stream
  };
  using Clock = std::unordered_map<Key, std::uint64_t>;  // stream -> last sequence ordered before
  struct StreamState {
    std::uint64_t sequence = 0;
    Clock seen;
  };
  struct Snapshot {
    Key stream = nullptr;
    std::uint64_t sequence = 0;
    Clock seen;
  };
  bool ordered(Key stream, const Use& use) const;
  void see(Key stream, Key other, std::uint64_t sequence);
  void prune();

  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  std::unordered_map<Key, StreamState> streams_;
  std::unordered_map<Key, Snapshot> events_;
  std::uint64_t records_ = 0;
};

/// The process's tracker (hooks installed).
OrderingTracker& ordering_tracker();

/// One operand of a call as a call site names it.
struct OperandUse {
  const char* name;
  const TensorView* view;  // null or empty: nothing to track
  bool write;
  bool fresh = false;        // a result the call allocated: record, do not check
  Storage* owner = nullptr;  // the cuplan memory behind `view`, if any: ordered by cuplan (TensorAccesses)
};

/// The checker's part in one call: begin() checks, end() records on the call's stream. Inactive (no cost beyond
/// one relaxed load) while checking is off, for host streams, and inside another checked call on this thread.
class CheckedUses : NonCopyable {
 public:
  CheckedUses() = default;
  ~CheckedUses();

  void begin(StreamRef stream, const char* who, const char* method, std::initializer_list<OperandUse> uses) {
    begin(stream, who, method, std::span<const OperandUse>(uses.begin(), uses.size()));
  }
  void begin(StreamRef stream, const char* who, const char* method, std::span<const OperandUse> uses) {
    if (!ordering::on()) [[likely]]
      return;
    begin_checked(stream, who, method, uses);
  }
  void end() {
    if (active_) [[unlikely]]
      end_checked();
  }

 private:
  void begin_checked(StreamRef stream, const char* who, const char* method, std::span<const OperandUse> uses);
  void end_checked();
  void deactivate() noexcept;
  bool active_ = false;
  cudaStream_t stream_ = nullptr;
  int device_ = 0;
  std::vector<OrderingTracker::Range> ranges_;
};

}  // namespace cuplan::detail
