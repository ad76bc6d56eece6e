// SPDX-License-Identifier: Apache-2.0
#pragma once
// FFTW's planner (plan creation and destruction, fftw_plan_with_nthreads, wisdom) is not thread-safe and is one per
// process: every operation that plans with FFTW (FFT, RealTransform) holds this one lock, so that their planners
// never run at once. No FFTW header here: the backend hands over its initialization of FFTW's threads, which the
// first lock of the process runs under the mutex.

#include <mutex>

namespace cuplan::detail {

std::mutex& fftw_planner_mutex() noexcept;

/// Holds fftw_planner_mutex() for its scope. The first lock in the process runs `init_threads` (fftw_init_threads and
/// fftwf_init_threads) before anything creates the planner: a planner created before fftw_init_threads lacks the
/// threaded Cooley-Tukey solvers for good, and the wisdom header is a hash of the solver set, so such a process
/// rejects the wisdom of one that planned first, and the other way round.
class FftwPlannerLock {
 public:
  explicit FftwPlannerLock(void (*init_threads)());

 private:
  std::lock_guard<std::mutex> lock_;
};

}  // namespace cuplan::detail
