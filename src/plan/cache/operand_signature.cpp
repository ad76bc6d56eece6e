// SPDX-License-Identifier: Apache-2.0
// OperandSignature (see operand_signature.hpp).

#include "plan/cache/operand_signature.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <string_view>

#include "base/geometry.hpp"
#include "cuplan/errors.hpp"

namespace cuplan::detail {
namespace {

Strides used_strides(const Shape& shape, const Strides& strides) {
  Strides result = strides;
  for (int axis = 0; axis < shape.size() && axis < result.size(); ++axis)
    if (shape[axis] <= 1) result[axis] = 0;
  return result;
}

std::string str(const Dims& dims) {
  return fmt::format("[{}]", fmt::join(dims.span(), ", "));
}

}  // namespace

std::string memory_name(bool host, int device) {
  return host ? std::string("host memory") : fmt::format("memory of cuda:{}", device);
}

OperandSignature OperandSignature::of(const TensorView& view) noexcept {
  const bool host = view.on_host();
  return {view.dtype(),
          view.shape(),
          used_strides(view.shape(), view.strides()),
          host,
          host ? -1 : view.device().index(),
          alignment_class(view.data())};
}

OperandSignature OperandSignature::result(DType dtype, const Shape& shape, const Strides& strides, bool host,
                                          int device, std::uint32_t alignment) {
  return {dtype, shape, used_strides(shape, strides), host, host ? -1 : device, alignment};
}

bool OperandSignature::matches(const TensorView& view) const noexcept {
  const bool view_host = view.on_host();
  return view.dtype() == dtype && view.shape() == shape && same_strides(shape, view.strides(), strides) &&
         view_host == host && (host || view.device().index() == device) && alignment_class(view.data()) >= alignment;
}

void OperandSignature::require_match(const TensorView& view, const char* who, const char* method, const char* operand,
                                     const char* strides_note) const {
  if (matches(view)) [[likely]]
    return;
  const auto fail = [&](const char* what, const std::string& expected, const std::string& actual) {
    const bool note = strides_note != nullptr && std::string_view(what) == "strides";
    throw InvalidArgument(fmt::format("{}{}{}: {} {}: expected {} (as planned), got {}{}{}", who, method ? "." : "",
                                      method ? method : "", operand, what, expected, actual, note ? "; " : "",
                                      note ? strides_note : ""));
  };
  // A default-constructed view (null data, rank 0) is named as such, not as a dtype that happens to differ.
  if (view.data() == nullptr && view.ndim() == 0)
    fail("view", fmt::format("{} of shape {}", dtype.name(), str(shape)), "an empty view (null data, rank 0)");
  if (!(view.dtype() == dtype)) fail("dtype", std::string(dtype.name()), std::string(view.dtype().name()));
  if (!(view.shape() == shape)) fail("shape", str(shape), str(view.shape()));
  if (!same_strides(shape, view.strides(), strides)) fail("strides", str(strides), str(view.strides()));
  const bool view_host = view.on_host();
  const int view_device = view_host ? -1 : view.device().index();
  if (view_host != host || view_device != device)
    fail("memory", memory_name(host, device), memory_name(view_host, view_device));
  const auto address = reinterpret_cast<std::uintptr_t>(view.data());
  fail("alignment", fmt::format("an address aligned to {} bytes", alignment),
       fmt::format("address {:#x} ({} bytes past an aligned address)", address, address % alignment));
}

}  // namespace cuplan::detail
