// SPDX-License-Identifier: Apache-2.0
#pragma once
// What both backends need to know of a callback bound to a planned transform: its role, element type, the name
// errors give it, and the caller_info block (layout of the buffer its offsets count in).

#include <string>

#include "cuplan/dtype.hpp"
#include "cuplan/fft_callback_device.hpp"
#include "cuplan/fft_callbacks.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan::detail {

enum class CallbackRole { prolog, epilog };

inline const char* role_name(CallbackRole role) {
  return role == CallbackRole::prolog ? "prolog" : "epilog";
}

/// "prolog 'scale'", or "epilog (host callable)".
std::string callback_name(CallbackRole role, const FFTCallback& callback);

/// cuFFT's name of the LTO callback type of `role` over `element` (e.g. "cufftJITCallbackLoadC"), and the C++
/// declaration the device function must have.
std::string cufft_callback_type_name(CallbackRole role, DType element);
std::string callback_signature(CallbackRole role, DType element, const std::string& symbol);
/// The CUDA type of one element in device code: float, double, float2 or double2.
const char* device_element_type(DType element);

/// The caller_info block of a side laid out as (`shape`, `strides`), with `user_data`. CallbackError (naming
/// `name`) for a layout whose offsets do not name one element each (an axis whose stride does not exceed the span
/// of the axes inside it, or a negative stride).
fft_callback::Info make_callback_info(const Shape& shape, const Strides& strides, void* user_data,
                                      const std::string& name);

}  // namespace cuplan::detail
