// SPDX-License-Identifier: Apache-2.0
#pragma once
// The process-wide counters behind cuplan::fft_callback_stats(), written by the NVRTC compilation cache.

#include "cuplan/fft_callbacks.hpp"

namespace cuplan::detail {

FFTCallbackStats callback_stats() noexcept;
/// One NVRTC compilation that took `milliseconds`.
void record_callback_compilation(double milliseconds) noexcept;
/// One plan whose source callback was already compiled.
void record_callback_cache_hit() noexcept;

}  // namespace cuplan::detail
