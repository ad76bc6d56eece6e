// SPDX-License-Identifier: Apache-2.0
// The shared state of a Communicator: abort, the watchdog thread (started at the first wait watched with a
// timeout) and the host waits on peers.
#include "distributed/exchange/nccl/comm_state.hpp"

#include <condition_variable>
#include <cstdio>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "distributed/exchange/cuda_status.hpp"
#include "distributed/exchange/nccl/nccl_check.hpp"
#include "distributed/exchange/watch_list.hpp"

namespace cuplan {

using Clock = std::chrono::steady_clock;

// One thread per communicator with a timeout. It polls the events recorded at the end of each execute and the
// deadlines of the host waits, and aborts the communicator at the first that expires: ncclCommAbort ends the NCCL
// kernels that wait on absent peers, so the streams complete and no rank hangs.
class Communicator::State::Watchdog {
 public:
  struct Token {
    cudaEvent_t event = nullptr;  // an execute's end; none for a host wait (its PeerWait removes it)
  };

  explicit Watchdog(State& owner) : owner_(owner), thread_([this] { run(); }) {}
  ~Watchdog() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    release(list_.take_all());
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  std::uint64_t add(Clock::time_point deadline, std::string description, Token token) {
    const std::lock_guard lock(mutex_);
    return list_.add(deadline, std::move(description), token);
  }
  void remove(std::uint64_t id) noexcept {
    std::optional<Token> token;
    {
      const std::lock_guard lock(mutex_);
      token = list_.remove(id);
    }
    if (token) release({*token});
  }
  // Returns once every watched execute has completed or expired (then the communicator is aborted): bounded by
  // the deadlines, which are finite.
  void drain() noexcept {
    std::unique_lock lock(mutex_);
    while (!list_.empty() && !stop_) drained_.wait_for(lock, std::chrono::milliseconds(100));
  }
  void clear() noexcept {
    std::vector<Token> tokens;
    {
      const std::lock_guard lock(mutex_);
      tokens = list_.take_all();
    }
    release(tokens);
  }

 private:
  static void release(const std::vector<Token>& tokens) noexcept {
    for (const Token& t : tokens)
      if (t.event != nullptr) CUPLAN_DIST_CUDA_NOEXCEPT(cudaEventDestroy(t.event));
  }

  void run() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      wake_.wait_for(lock, detail::dist::poll_interval(owner_.timeout()), [&] { return stop_; });
      if (stop_) continue;
      if (list_.empty()) {
        drained_.notify_all();
        continue;
      }
      std::vector<Token> finished;
      auto expired = list_.poll(
          Clock::now(),
          [](const Token& t) { return t.event != nullptr && cudaEventQuery(t.event) != cudaErrorNotReady; }, finished);
      (void)cudaGetLastError();  // a failed query is a finished wait, not an error of the caller's next call
      lock.unlock();
      release(finished);
      if (expired) {
        release({expired->token});
        owner_.abort(Cause::timeout, std::move(expired->description));
      } else {
        owner_.check_async_error();
      }
      lock.lock();
    }
  }

  State& owner_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  bool stop_ = false;
  detail::dist::WatchList<Clock, Token> list_;
  std::thread thread_;  // last: starts once the members above exist
};

Communicator::State::State() = default;

Communicator::State::~State() {
  // Work still watched (an execute whose peers may never come) runs out first: the watchdog aborts what expires,
  // and an aborted communicator is not destroyed, so the last copy never blocks in ncclCommDestroy on a peer.
  std::unique_ptr<Watchdog> watchdog;
  {
    const std::lock_guard lock(mutex_);
    watchdog = std::move(watchdog_);
  }
  if (watchdog) {
    watchdog->drain();
    watchdog.reset();
  }
  // An aborted communicator was freed by ncclCommAbort.
  if (owning && comm != nullptr && !aborted()) CUPLAN_NCCL_CHECK_NOEXCEPT(ncclCommDestroy(comm));
}

void Communicator::State::throw_aborted(const char* what) const {
  std::string reason;
  ncclResult_t status = ncclSuccess;
  {
    const std::lock_guard lock(mutex_);
    reason = reason_;
    status = status_;
  }
  // The call whose wait expired raises the reason as it stands; later calls say that it happened earlier.
  const std::string message =
      reason.starts_with(what) ? reason : fmt::format("{}: the communicator was aborted earlier: {}", what, reason);
  switch (cause_.load(std::memory_order_acquire)) {
    case Cause::timeout:
      throw TimeoutError(message);
    case Cause::nccl_error:
      throw LibraryError("NCCL", "ncclCommGetAsyncError", static_cast<int>(status),
                         detail::dist::nccl_status_name(status), message);
    default:
      throw StateError(message);
  }
}

void Communicator::State::fail(ncclResult_t status, const char* call, const char* file, int line) const {
  if (aborted()) throw_aborted("");  // the abort's own message: the call failed because of it
  detail::dist::throw_nccl(status, call, file, line);
}

bool Communicator::State::abort(Cause cause, std::string reason, ncclResult_t status) noexcept {
  const std::lock_guard lock(mutex_);
  if (aborted()) return false;
  reason_ = std::move(reason);
  status_ = status;
  cause_.store(cause, std::memory_order_release);  // from here on no call of cuplan takes `comm`
  // The actions first: ncclCommAbort frees device memory, which waits for the device, and a stream blocked on a
  // flag no peer will write would keep it waiting forever.
  for (const auto& [id, action] : abort_actions_) action();
  if (comm != nullptr) CUPLAN_NCCL_CHECK_NOEXCEPT(ncclCommAbort(comm));
  if (watchdog_) watchdog_->clear();
  return true;
}

std::uint64_t Communicator::State::on_abort(std::function<void()> action) {
  const std::lock_guard lock(mutex_);
  abort_actions_.emplace_back(++last_abort_action_, std::move(action));
  return last_abort_action_;
}

void Communicator::State::remove_abort_action(std::uint64_t id) noexcept {
  const std::lock_guard lock(mutex_);
  std::erase_if(abort_actions_, [id](const auto& entry) { return entry.first == id; });
}

std::string Communicator::State::reason() const {
  const std::lock_guard lock(mutex_);
  return reason_;
}

bool Communicator::State::check_async_error() noexcept {
  ncclResult_t status = ncclSuccess;
  {
    const std::lock_guard lock(mutex_);
    if (aborted() || comm == nullptr) return aborted();
    if (ncclCommGetAsyncError(comm, &status) != ncclSuccess) return false;
  }
  if (status == ncclSuccess || status == ncclInProgress) return false;
  abort(Cause::nccl_error,
        fmt::format("rank {} of {}: NCCL reported an asynchronous error: {} ({}); the communicator was aborted", rank,
                    size, ncclGetErrorString(status), static_cast<int>(status)),
        status);
  return true;
}

Communicator::State::Watchdog& Communicator::State::watchdog() {
  if (!watchdog_) watchdog_ = std::make_unique<Watchdog>(*this);
  return *watchdog_;
}

void Communicator::State::watch_stream_slow(cudaStream_t stream, const char* what) {
  const std::chrono::milliseconds ms = timeout();
  cudaEvent_t event = nullptr;
  CUPLAN_DIST_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  const cudaError_t recorded = cudaEventRecord(event, stream);
  if (recorded != cudaSuccess) {
    CUPLAN_DIST_CUDA_NOEXCEPT(cudaEventDestroy(event));
    detail::dist::throw_cuda(recorded, "cudaEventRecord(event, stream)", __FILE__, __LINE__);
  }
  std::string description = fmt::format(
      "{} on rank {} of {}: the work it enqueued did not complete within the timeout of {} ms (a peer did not join "
      "its exchanges); the communicator was aborted",
      what, rank, size, ms.count());
  const std::lock_guard lock(mutex_);
  if (aborted()) {
    CUPLAN_DIST_CUDA_NOEXCEPT(cudaEventDestroy(event));
    return;
  }
  watchdog().add(detail::dist::deadline_after<Clock>(Clock::now(), ms), std::move(description), {event});
}

std::uint64_t Communicator::State::watch_scope(Clock::time_point deadline, std::string description) {
  const std::lock_guard lock(mutex_);
  return watchdog().add(deadline, std::move(description), {});
}

void Communicator::State::unwatch(std::uint64_t id) noexcept {
  const std::lock_guard lock(mutex_);
  if (watchdog_) watchdog_->remove(id);
}

}  // namespace cuplan

namespace cuplan::detail::dist {

void check_not_aborted(const Communicator& comm, const char* type, const char* member) {
  const CommState& state = state_of(comm);
  if (state.aborted()) [[unlikely]]
    state.throw_aborted(fmt::format("{}::{}", type, member).c_str());
}

PeerWait::PeerWait(CommState& comm, const char* operation, const char* waiting_for)
    : comm_(comm), operation_(operation), waiting_for_(waiting_for), timeout_(comm.timeout()) {
  comm_.check(operation_);
  if (timeout_.count() <= 0) return;
  deadline_ = deadline_after<Clock>(Clock::now(), timeout_);
  id_ = comm_.watch_scope(deadline_, timeout_message());
}

PeerWait::~PeerWait() {
  if (id_ != 0) comm_.unwatch(id_);
}

std::string PeerWait::timeout_message() const {
  return fmt::format(
      "{} on rank {} of {}: no answer from the peers within the timeout of {} ms while waiting for {}; the "
      "communicator was aborted",
      operation_, comm_.rank, comm_.size, timeout_.count(), waiting_for_);
}

void PeerWait::synchronize(cudaStream_t stream) {
  if (timeout_.count() <= 0) {
    const cudaError_t status = cudaStreamSynchronize(stream);
    check();
    if (status != cudaSuccess) throw_cuda(status, "cudaStreamSynchronize(stream)", __FILE__, __LINE__);
    return;
  }
  // Polls with a growing pause (20 us to 1 ms): a wait that ends at once costs little, a long one little CPU.
  for (auto pause = std::chrono::microseconds(20);; pause = std::min(pause * 2, std::chrono::microseconds(1000))) {
    const cudaError_t status = cudaStreamQuery(stream);
    check();
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) throw_cuda(status, "cudaStreamQuery(stream)", __FILE__, __LINE__);
    if (comm_.check_async_error()) check();
    if (Clock::now() >= deadline_) {
      comm_.abort(CommState::Cause::timeout, timeout_message());
      check();
    }
    std::this_thread::sleep_for(pause);
  }
}

void PeerWait::synchronize_device() {
  const cudaError_t status = cudaDeviceSynchronize();
  check();
  if (status != cudaSuccess) throw_cuda(status, "cudaDeviceSynchronize()", __FILE__, __LINE__);
}

}  // namespace cuplan::detail::dist
