// SPDX-License-Identifier: Apache-2.0
#pragma once
// Option checks every FFT path runs before anything else (class form, function forms on a plan-cache hit or miss):
// enum ranges, the execution choice and the axis count, so that a bad value never reaches a plan key.

#include "cuplan/fft.hpp"

namespace cuplan::detail {

/// InvalidArgument naming `op` and the option for an out-of-range enum, thread count or axis count.
void validate_fft_options(const FFTOptions& options, const char* op);
/// InvalidArgument for a Direction cast from an out-of-range integer.
void check_direction(Direction direction, const char* op);

}  // namespace cuplan::detail
