// SPDX-License-Identifier: Apache-2.0
#include "distributed/local_array.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "cuplan/errors.hpp"
#include "cuplan/format.hpp"

namespace cuplan::detail::dist {

std::string shape_text(const Shape& shape) {
  return shape.empty() ? std::string("()") : fmt::format("{}", fmt::join(shape, "x"));
}

void check_local_array(const TensorView& view, const char* who, const char* name, const LocalArraySpec& spec) {
  std::vector<std::string> differs;
  if (!(view.dtype() == spec.dtype)) differs.push_back(fmt::format("its dtype is {}", view.dtype().name()));
  if (!(view.shape() == spec.shape)) differs.push_back("its shape is " + shape_text(view.shape()));
  if (view.numel() > 0 && (view.memory_space() != MemorySpace::device || !(view.device() == spec.device)))
    differs.push_back(fmt::format("its memory is {} on {}", view.memory_space(), view.device().to_string()));
  if (!view.is_contiguous()) differs.push_back("it is not contiguous row-major");
  if (spec.writable && view.read_only()) differs.push_back("it is read-only (pass a writable view or a copy)");
  if (differs.empty()) return;
  throw InvalidArgument(
      fmt::format("{}: {}: expected a {}contiguous {} array of shape {} ({}) in device memory on {}, got {}: {}", who,
                  name, spec.writable ? "writable " : "", spec.dtype.name(), shape_text(spec.shape), spec.role,
                  spec.device.to_string(), view, fmt::join(differs, "; ")));
}

}  // namespace cuplan::detail::dist
