// SPDX-License-Identifier: Apache-2.0
#pragma once
// The threads that share a callback transform's chunks (fftw_callbacks.cpp), kept between executes. Starting a
// thread per worker and execute cost more than the work on a many-core host: on 64 cores the fused loop of a
// 32 MiB transform spent most of its time creating threads, 8x the plain transform that FFTW's own pool ran.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/non_copyable.hpp"

namespace cuplan::detail {

class ChunkWorkers : NonCopyable {
 public:
  /// Stops and joins the threads.
  ~ChunkWorkers();

  /// Calls `job(w)` for every w in [0, count): w = 0 on the calling thread, the others on kept threads (started
  /// when first needed); returns once every call has returned. `job` must not throw. Calls of run() from several
  /// threads take turns.
  void run(int count, const std::function<void(int)>& job);
  /// Threads started so far (not counting callers).
  int threads() const;

 private:
  void serve(int index);

  std::mutex run_mutex_;      // one run at a time
  mutable std::mutex mutex_;  // the fields below
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* job_ = nullptr;
  int active_ = 0;                // workers of the current run, the caller included
  int pending_ = 0;               // kept threads of the current run still working
  std::uint64_t generation_ = 0;  // one per run
  bool stop_ = false;
};

}  // namespace cuplan::detail
