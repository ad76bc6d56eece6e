// SPDX-License-Identifier: Apache-2.0
// FFT option checks shared by the class form and the function forms (fft_validate.hpp).

#include "fft/fft_validate.hpp"

#include <fmt/format.h>

#include "cuplan/errors.hpp"
#include "plan/option_checks.hpp"
#include "plan/work_area.hpp"

namespace cuplan::detail {

void validate_fft_options(const FFTOptions& o, const char* op) {
  if (o.fft_type) check_enum_range(*o.fft_type, FFTType::c2r, op, "fft_type", "FFTType");
  check_enum_range(o.last_axis_parity, Parity::odd, op, "last_axis_parity", "Parity");
  check_enum_range(o.result_layout, ResultLayout::optimized, op, "result_layout", "ResultLayout");
  check_enum_range(o.normalization, Normalization::ortho, op, "normalization", "Normalization");
  check_enum_range(o.planning, Planning::patient, op, "planning", "Planning");
  check_enum_range(o.route, FFTRoute::cufft, op, "route", "FFTRoute");
  check_blocking(o.blocking, op);
  check_planning_mode(o.planning_mode, op);
  check_execution(o.execution, op);
  (void)resolve_work_area(o.work_area, o.work_area_buffer, op);
  // Before the plan key is built: a long axis list would otherwise fail there, with a message about the key.
  if (o.axes.size() > 3) [[unlikely]]
    throw InvalidArgument(fmt::format("{}: axes: expected 1 to 3 axes to transform, got {} axes", op, o.axes.size()));
}

void check_direction(Direction direction, const char* op) {
  check_enum_range(direction, Direction::inverse, op, "direction", "Direction");
}

}  // namespace cuplan::detail
