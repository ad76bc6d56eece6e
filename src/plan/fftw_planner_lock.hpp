// SPDX-License-Identifier: Apache-2.0
#pragma once
// FFTW's planner (plan creation and destruction, fftw_plan_with_nthreads, wisdom) is not thread-safe and is one per
// process: every operation that plans with FFTW (FFT, RealTransform) takes this one mutex, so that their planners
// never run at once. No FFTW header here: each FFTW backend initializes FFTW's threads under the lock, once per
// process, through fftw_threads_initialized().

#include <mutex>

namespace cuplan::detail {

std::mutex& fftw_planner_mutex() noexcept;
/// Whether fftw_init_threads has run; read and set only under fftw_planner_mutex().
bool& fftw_threads_initialized() noexcept;

}  // namespace cuplan::detail
