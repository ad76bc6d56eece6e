// SPDX-License-Identifier: Apache-2.0
// The class form FFT: a thin, move-only handle over FftImpl.

#include "cuplan/fft.hpp"

#include <fmt/format.h>
#include <iterator>

#include "cuplan/enum_name.hpp"
#include "cuplan/errors.hpp"
#include "fft/fft_impl.hpp"
#include "plan/handle.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
FFT::FFT(TensorRef operand, FFTOptions options)
    : impl_(std::make_unique<detail::FftImpl>(std::move(operand), options)) {}
CUPLAN_OPERATION_HANDLE(FFT, FFTExecuteOptions, decision, out_shape, out_dtype, out_strides)

FFTType FFT::type() const {
  return detail::live(impl_, "FFT.", "type").decision().type;
}
std::string_view FFT::state() const noexcept {
  return detail::lifecycle_state(impl_);
}

std::string_view to_string(FFTType type) {
  static constexpr const char* names[] = {"C2C", "R2C", "C2R"};
  static_assert(std::size(names) == static_cast<std::size_t>(FFTType::c2r) + 1);
  return detail::enum_name(type, names);
}

std::string_view to_string(Direction direction) {
  return detail::enum_name<Direction::inverse>(direction, {"forward", "inverse"});
}

std::string_view to_string(Normalization normalization) {
  static constexpr const char* names[] = {"none", "inverse (1/N)", "forward (1/N)", "ortho (1/sqrt(N))"};
  static_assert(std::size(names) == static_cast<std::size_t>(Normalization::ortho) + 1);
  return detail::enum_name(normalization, names);
}

std::string_view to_string(FFTRoute route) {
  static constexpr const char* names[] = {"automatic", "fused", "cufft"};
  static_assert(std::size(names) == static_cast<std::size_t>(FFTRoute::cufft) + 1);
  return detail::enum_name(route, names);
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
