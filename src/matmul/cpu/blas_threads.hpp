// SPDX-License-Identifier: Apache-2.0
#pragma once
// The BLAS library's thread count is one process-wide setting (openblas_set_num_threads, bli_thread_set_num_threads,
// mkl_set_num_threads; blas_vendor.hpp); the OpenBLAS that cuplan builds against (0.3.21 on Debian 12) has no
// per-call or per-thread count. BlasThreads gives each CPU product the count it asked for without leaking it: calls
// that need the same count run together, a call that needs another waits until they are done, and when the last call
// of a group ends the count the process had before is put back. A call with no count of its own (Execution::cpu(0))
// runs with the process's count, never with another call's.

#include <condition_variable>
#include <mutex>

#include "base/non_copyable.hpp"

namespace cuplan::detail::mm {

class BlasThreads : NonCopyable {
 public:
  /// Runs under `threads` BLAS threads (0: the process's own count) until destroyed.
  explicit BlasThreads(int threads);
  ~BlasThreads();
};

}  // namespace cuplan::detail::mm
