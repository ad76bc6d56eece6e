// SPDX-License-Identifier: Apache-2.0
// Deferred errors (see deferred_errors.hpp).

#include "runtime/deferred_errors.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

namespace cuplan::detail {
namespace {

struct Held {
  cudaStream_t stream;
  std::shared_ptr<DeferredError> error;
};

class Registry {
 public:
  ~Registry() {
    // Never silently: an error no point raised before the process ended goes to stderr (not through the logger,
    // which may be gone by now: statics end in reverse order of their making).
    for (const Held& held : held_)
      if (!held.error->raised())
        std::fprintf(stderr,
                     "[cuplan warning] an error of background planning was never raised (no later call or "
                     "synchronize on its stream): %s\n",
                     held.error->message().c_str());
  }
  void add(cudaStream_t stream, std::shared_ptr<DeferredError> error) {
    const std::lock_guard lock(mutex_);
    held_.push_back({stream, std::move(error)});
    count_.store(held_.size(), std::memory_order_release);
  }
  std::shared_ptr<DeferredError> take(cudaStream_t stream) {
    if (count_.load(std::memory_order_acquire) == 0) [[likely]]
      return nullptr;
    const std::lock_guard lock(mutex_);
    // Errors already raised elsewhere (by their object's next call) go without a word.
    std::erase_if(held_, [](const Held& held) { return held.error->raised(); });
    std::shared_ptr<DeferredError> found;
    const auto it = std::find_if(held_.begin(), held_.end(), [&](const Held& held) { return held.stream == stream; });
    if (it != held_.end()) {
      found = std::move(it->error);
      held_.erase(it);
    }
    count_.store(held_.size(), std::memory_order_release);
    return found;
  }
  std::size_t hint() const noexcept { return count_.load(std::memory_order_relaxed); }
  std::size_t pending() {
    const std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(
        std::count_if(held_.begin(), held_.end(), [](const Held& held) { return !held.error->raised(); }));
  }

 private:
  std::mutex mutex_;
  std::vector<Held> held_;
  std::atomic<std::size_t> count_{0};
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

void DeferredError::raise_once() {
  if (raised_.exchange(true, std::memory_order_acq_rel)) return;
  std::rethrow_exception(error_);
}

std::string DeferredError::message() const {
  try {
    std::rethrow_exception(error_);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception of unknown type";
  }
}

void defer_error(cudaStream_t stream, std::shared_ptr<DeferredError> error) {
  registry().add(stream, std::move(error));
}

void raise_deferred_errors(cudaStream_t stream) {
  for (;;) {
    const std::shared_ptr<DeferredError> error = registry().take(stream);
    if (!error) return;
    error->raise_once();  // returns only when another point raised it first
  }
}

std::size_t deferred_error_count_hint() noexcept {
  return registry().hint();
}

std::size_t deferred_error_count() noexcept {
  try {
    return registry().pending();
  } catch (...) {
    return 0;
  }
}

}  // namespace cuplan::detail
