// SPDX-License-Identifier: Apache-2.0
// FFT option checks shared by the class form and the function forms (fft_validate.hpp).

#include "fft/fft_validate.hpp"

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "plan/option_checks.hpp"

namespace cuplan::detail {

void validate_fft_options(const FFTOptions& o, const char* op) {
  if (o.fft_type) check_enum_range(*o.fft_type, FFTType::c2r, op, "fft_type", "FFTType");
  check_enum_range(o.last_axis_parity, Parity::odd, op, "last_axis_parity", "Parity");
  check_enum_range(o.result_layout, ResultLayout::optimized, op, "result_layout", "ResultLayout");
  check_enum_range(o.normalization, Normalization::ortho, op, "normalization", "Normalization");
  check_enum_range(o.route, FFTRoute::cufft, op, "route", "FFTRoute");
  check_operation_options(o, op, "transform");
}

void check_direction(Direction direction, const char* op) {
  check_enum_range(direction, Direction::inverse, op, "direction", "Direction");
}

}  // namespace cuplan::detail
