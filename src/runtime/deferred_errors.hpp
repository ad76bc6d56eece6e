// SPDX-License-Identifier: Apache-2.0
#pragma once
// Errors of work that ran after its call returned (a plan made in the background, docs/streams.md, "Where a
// background planning error surfaces"), held per stream until a documented point raises them: the next
// synchronize() of that stream, or the next call that asks for them. Each error is raised once, by whichever point
// comes first; an error never raised is written to stderr when the process ends.

#include <cuda_runtime_api.h>

#include <atomic>
#include <exception>
#include <memory>
#include <string>
#include <utility>

namespace cuplan::detail {

/// One error of background work, shared by every point that may raise it.
class DeferredError {
 public:
  explicit DeferredError(std::exception_ptr error) : error_(std::move(error)) {}
  /// Throws the error if no point raised it yet; later calls do nothing.
  void raise_once();
  bool raised() const noexcept { return raised_.load(std::memory_order_acquire); }
  /// The error's message (for the log).
  std::string message() const;

 private:
  std::exception_ptr error_;
  std::atomic<bool> raised_{false};
};

/// Holds `error` for `stream` until raise_deferred_errors(stream).
void defer_error(cudaStream_t stream, std::shared_ptr<DeferredError> error);
/// Throws the oldest error held for `stream` that is not raised yet (and drops it); no-op when none is held. One
/// relaxed atomic load when no error is held anywhere.
void raise_deferred_errors(cudaStream_t stream);
/// Zero when no error is held for any stream (one relaxed atomic load): the hot path's test.
std::size_t deferred_error_count_hint() noexcept;
/// Errors held for any stream and not raised yet (tests).
std::size_t deferred_error_count() noexcept;

}  // namespace cuplan::detail
