// SPDX-License-Identifier: Apache-2.0
#include "fft/callbacks/callback_types.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <numeric>

#include "cuplan/errors.hpp"

namespace cuplan::detail {

std::string callback_name(CallbackRole role, const FFTCallback& callback) {
  if (callback.form() == FFTCallback::Form::host) return fmt::format("{} (host callable)", role_name(role));
  return fmt::format("{} '{}'", role_name(role), callback.symbol());
}

namespace {

char type_letter(DType element) {
  if (element == c64) return 'C';
  if (element == c128) return 'Z';
  if (element == f32) return 'R';
  return 'D';
}

}  // namespace

std::string cufft_callback_type_name(CallbackRole role, DType element) {
  return fmt::format("cufftJITCallback{}{}", role == CallbackRole::prolog ? "Load" : "Store", type_letter(element));
}

const char* device_element_type(DType element) {
  if (element == c64) return "float2";
  if (element == c128) return "double2";
  if (element == f32) return "float";
  return "double";
}

std::string callback_signature(CallbackRole role, DType element, const std::string& symbol) {
  const char* t = device_element_type(element);
  if (role == CallbackRole::prolog)
    return fmt::format("{} {}(void* data_in, unsigned long long offset, void* caller_info, void* shared)", t, symbol);
  return fmt::format("void {}(void* data_out, unsigned long long offset, {} element, void* caller_info, void* shared)",
                     symbol, t);
}

fft_callback::Info make_callback_info(const Shape& shape, const Strides& strides, void* user_data,
                                      const std::string& name) {
  fft_callback::Info info{};
  info.user_data = user_data;
  info.rank = shape.size();
  std::array<int, fft_callback::max_rank> axes{};
  int terms = 0;
  for (int a = 0; a < shape.size(); ++a)
    if (shape[a] > 1) axes[static_cast<std::size_t>(terms++)] = a;
  std::stable_sort(axes.begin(), axes.begin() + terms, [&](int x, int y) { return strides[x] > strides[y]; });
  info.terms = terms;
  for (int k = 0; k < terms; ++k) {
    const int a = axes[static_cast<std::size_t>(k)];
    info.axis[k] = a;
    info.extent[k] = shape[a];
    info.stride[k] = strides[a];
  }
  // Offsets decompose greedily (largest stride first) only when each axis steps past everything inside it.
  for (int k = terms - 1; k >= 0; --k) {
    const long long inner_span = k + 1 < terms ? info.stride[k + 1] * info.extent[k + 1] : 1;
    if (info.stride[k] < inner_span)
      throw CallbackError(
          fmt::format("FFT: {}: unsupported layout: axis {} (extent {}, stride {}) does not step past the axes "
                      "inside it (span {}), so a flat offset does not name one element; give a dense or padded "
                      "layout",
                      name, info.axis[k], info.extent[k], info.stride[k], inner_span),
          name, "");
  }
  // What the helpers need to find positions without a 64-bit division (fft_callback_device.hpp): each stride's
  // reciprocal, and each axis's stride in a dense array of the shape.
  for (int k = 0; k < terms; ++k) {
    info.reciprocal[k] = 1.0 / static_cast<double>(info.stride[k]);
    info.dense_stride[k] = 1;
    for (int j = 0; j < terms; ++j)
      if (info.axis[j] > info.axis[k]) info.dense_stride[k] *= info.extent[j];
  }
  return info;
}

}  // namespace cuplan::detail
