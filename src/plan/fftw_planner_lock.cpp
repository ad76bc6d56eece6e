// SPDX-License-Identifier: Apache-2.0
#include "plan/fftw_planner_lock.hpp"

namespace cuplan::detail {

std::mutex& fftw_planner_mutex() noexcept {
  static std::mutex mutex;
  return mutex;
}

bool& fftw_threads_initialized() noexcept {
  static bool initialized = false;
  return initialized;
}

}  // namespace cuplan::detail
