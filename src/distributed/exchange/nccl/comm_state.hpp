// SPDX-License-Identifier: Apache-2.0
#pragma once
// The state every copy of a Communicator shares: the NCCL communicator, its timeout, whether it was aborted and
// why, and the watchdog that aborts it when a wait on the peers outlives the timeout (docs/distributed.md,
// "Timeouts"). Every NCCL call of the distributed component takes the communicator from here, so that none
// touches an aborted one, and every host wait on the peers is a PeerWait.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cuplan/distributed.hpp"

namespace cuplan {

struct Communicator::State {
  /// Why a communicator was aborted; each raises its own type in later calls.
  enum class Cause { none, timeout, user, nccl_error };

  ncclComm_t comm = nullptr;
  bool owning = false;
  int rank = 0;
  int size = 0;
  int device = 0;

  State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  /// Stops the watchdog; destroys an owned communicator unless it was aborted (the abort freed it).
  ~State();

  std::chrono::milliseconds timeout() const noexcept {
    return std::chrono::milliseconds(timeout_ms_.load(std::memory_order_relaxed));
  }
  void set_timeout(std::chrono::milliseconds timeout) noexcept {
    timeout_ms_.store(timeout.count(), std::memory_order_relaxed);
  }
  bool aborted() const noexcept { return cause_.load(std::memory_order_acquire) != Cause::none; }
  /// The communicator for a NCCL call of `what`; the typed error of the abort when it was aborted.
  ncclComm_t live(const char* what) const {
    if (aborted()) [[unlikely]]
      throw_aborted(what);
    return comm;
  }
  /// The abort's error for a call of `what`: TimeoutError, StateError (abort()) or LibraryError (NCCL).
  [[noreturn]] void throw_aborted(const char* what) const;
  /// Throws the abort's error when aborted.
  void check(const char* what) const {
    if (aborted()) [[unlikely]]
      throw_aborted(what);
  }
  /// A failed NCCL call: the abort's error when the communicator was aborted meanwhile, else LibraryError.
  [[noreturn]] void fail(ncclResult_t status, const char* call, const char* file, int line) const;
  /// Aborts once (later calls return false): records why, stops watching, and calls ncclCommAbort, which ends the
  /// NCCL kernels and host calls that wait on peers. Never throws.
  bool abort(Cause cause, std::string reason, ncclResult_t status = ncclSuccess) noexcept;
  std::string reason() const;
  /// Runs `action` (which must not throw) when the communicator is aborted, before ncclCommAbort: it ends what
  /// NCCL's abort cannot, such as a stream waiting on a flag that an absent peer was to write. The id removes it.
  std::uint64_t on_abort(std::function<void()> action);
  void remove_abort_action(std::uint64_t id) noexcept;
  /// Aborts with Cause::nccl_error when NCCL reports an asynchronous error; true then.
  bool check_async_error() noexcept;

  /// Watches the work enqueued on `stream` so far (an event recorded now): the communicator is aborted when it has
  /// not completed within the timeout. Does nothing without a timeout (the default path costs a branch).
  void watch_stream(cudaStream_t stream, const char* what) {
    if (timeout_ms_.load(std::memory_order_relaxed) > 0) watch_stream_slow(stream, what);
  }
  /// Watches a host wait (PeerWait) until its deadline; the id removes it.
  std::uint64_t watch_scope(std::chrono::steady_clock::time_point deadline, std::string description);
  void unwatch(std::uint64_t id) noexcept;

 private:
  class Watchdog;
  void watch_stream_slow(cudaStream_t stream, const char* what);
  Watchdog& watchdog();

  std::atomic<std::int64_t> timeout_ms_{0};
  std::atomic<Cause> cause_{Cause::none};
  mutable std::mutex mutex_;  // guards reason_, status_, watchdog_ and the call of ncclCommAbort
  std::string reason_;
  ncclResult_t status_ = ncclSuccess;
  std::unique_ptr<Watchdog> watchdog_;
  std::vector<std::pair<std::uint64_t, std::function<void()>>> abort_actions_;
  std::uint64_t last_abort_action_ = 0;
};

namespace detail {
struct CommunicatorAccess {
  static Communicator::State& state(const Communicator& comm) { return *comm.state_; }
};
}  // namespace detail

}  // namespace cuplan

namespace cuplan::detail::dist {

using CommState = Communicator::State;

inline CommState& state_of(const Communicator& comm) {
  return CommunicatorAccess::state(comm);
}

/// Every call of an object over an aborted communicator raises the abort's error, for `<type>::<member>`.
void check_not_aborted(const Communicator& comm, const char* type, const char* member);

/// A host wait on the peers, from construction to destruction: with a timeout, the watchdog aborts the
/// communicator when it lasts longer (which also ends a NCCL call blocked on the host, such as a connection to a
/// peer that never comes), and synchronize() polls instead of blocking. Without one, synchronize() blocks as
/// cudaStreamSynchronize does. Every member throws the abort's error once the communicator is aborted.
class PeerWait {
 public:
  /// `operation` names the call and phase (e.g. "DistributedFFT::plan"), `waiting_for` what the peers owe.
  PeerWait(CommState& comm, const char* operation, const char* waiting_for);
  ~PeerWait();
  PeerWait(const PeerWait&) = delete;
  PeerWait& operator=(const PeerWait&) = delete;

  /// Returns once `stream`'s work is done; TimeoutError when the deadline passes first (the communicator is then
  /// aborted), or the abort's error when another thread aborted it.
  void synchronize(cudaStream_t stream);
  /// cudaDeviceSynchronize under the watch (the watchdog's abort ends NCCL kernels that wait on peers).
  void synchronize_device();
  /// The abort's error when the communicator was aborted.
  void check() const { comm_.check(operation_); }
  /// The message of a timeout of this wait.
  std::string timeout_message() const;

 private:
  CommState& comm_;
  const char* operation_;
  const char* waiting_for_;
  std::chrono::milliseconds timeout_{0};
  std::chrono::steady_clock::time_point deadline_{};
  std::uint64_t id_ = 0;
};

}  // namespace cuplan::detail::dist

/// Checks a NCCL call on the communicator `state`: an abort meanwhile raises the abort's error.
#define CUPLAN_COMM_CHECK(state, expr)                              \
  do {                                                              \
    ncclResult_t cuplan_nccl_status_ = (expr);                      \
    if (cuplan_nccl_status_ != ncclSuccess) [[unlikely]]            \
      (state).fail(cuplan_nccl_status_, #expr, __FILE__, __LINE__); \
  } while (0)
