// SPDX-License-Identifier: Apache-2.0
// The class form FFT: a thin, move-only handle over FftImpl.

#include "cuplan/fft.hpp"

#include <fmt/format.h>
#include <iterator>

#include "base/enum_names.hpp"
#include "cuplan/errors.hpp"
#include "fft/fft_impl.hpp"
#include "plan/handle.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
namespace {

constexpr const char* who = "FFT.";

}  // namespace

FFT::FFT(TensorRef operand, FFTOptions options)
    : impl_(std::make_unique<detail::FftImpl>(std::move(operand), options)) {}
FFT::FFT(FFT&&) noexcept = default;
FFT& FFT::operator=(FFT&& other) noexcept {
  if (this != &other) {
    free();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
FFT::~FFT() {
  free();
}

void FFT::plan(std::optional<StreamRef> stream) {
  detail::live(impl_, who, "plan").plan(stream);
}
Tensor FFT::execute(FFTExecuteOptions options) {
  return detail::held(impl_, who, "execute").execute(options);
}
void FFT::reset_operand(TensorRef operand, std::optional<StreamRef> stream) {
  detail::live(impl_, who, "reset_operand").reset_operand(std::move(operand), stream);
}
void FFT::release_operand() {
  detail::live(impl_, who, "release_operand").release_operand();
}
void FFT::free() noexcept {
  if (impl_) impl_->free();
}

FFTType FFT::type() const {
  return detail::live(impl_, who, "type").decision().type;
}
const std::vector<int>& FFT::axes() const {
  return detail::live(impl_, who, "axes").decision().axes;
}
Shape FFT::result_shape() const {
  return detail::live(impl_, who, "result_shape").decision().out_shape;
}
DType FFT::result_dtype() const {
  return detail::live(impl_, who, "result_dtype").decision().out_dtype;
}
Strides FFT::result_strides() const {
  return detail::live(impl_, who, "result_strides").decision().out_strides;
}
bool FFT::uses_cuda() const {
  return detail::live(impl_, who, "uses_cuda").target().cuda;
}
std::size_t FFT::workspace_size() const {
  return detail::live(impl_, who, "workspace_size").workspace_size();
}
std::string FFT::describe() const {
  return detail::live(impl_, who, "describe").describe();
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
  return direction == Direction::forward ? "forward" : "inverse";
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
