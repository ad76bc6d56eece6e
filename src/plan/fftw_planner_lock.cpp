// SPDX-License-Identifier: Apache-2.0
#include "plan/fftw_planner_lock.hpp"

namespace cuplan::detail {

std::mutex& fftw_planner_mutex() noexcept {
  static std::mutex mutex;
  return mutex;
}

FftwPlannerLock::FftwPlannerLock(void (*init_threads)()) : lock_(fftw_planner_mutex()) {
  static bool threads_initialized = false;  // read and set only under the mutex
  if (threads_initialized) return;
  init_threads();
  threads_initialized = true;
}

}  // namespace cuplan::detail
