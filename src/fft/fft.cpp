// SPDX-License-Identifier: Apache-2.0
// The class form FFT: a thin, move-only handle over FftImpl.

#include "cuplan/fft.hpp"

#include "cuplan/errors.hpp"
#include "fft/fft_impl.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {
namespace {

detail::FftImpl& live(const std::unique_ptr<detail::FftImpl>& impl, const char* method) {
  // A moved-from FFT has no implementation; it behaves like a freed one.
  if (!impl) throw StateError(fmt::format("FFT.{}: called on a moved-from object", method));
  impl->require_alive(method);
  return *impl;
}

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
  live(impl_, "plan").plan(stream);
}
Tensor FFT::execute(FFTExecuteOptions options) {
  if (!impl_) throw StateError("FFT.execute: called on a moved-from object");
  return impl_->execute(options);
}
void FFT::reset_operand(TensorRef operand, std::optional<StreamRef> stream) {
  live(impl_, "reset_operand").reset_operand(std::move(operand), stream);
}
void FFT::release_operand() {
  live(impl_, "release_operand").release_operand();
}
void FFT::free() noexcept {
  if (impl_) impl_->free();
}

FFTType FFT::type() const {
  return live(impl_, "type").decision().type;
}
const std::vector<int>& FFT::axes() const {
  return live(impl_, "axes").decision().axes;
}
Shape FFT::result_shape() const {
  return live(impl_, "result_shape").decision().out_shape;
}
DType FFT::result_dtype() const {
  return live(impl_, "result_dtype").decision().out_dtype;
}
Strides FFT::result_strides() const {
  return live(impl_, "result_strides").decision().out_strides;
}
bool FFT::uses_cuda() const {
  return live(impl_, "uses_cuda").target().cuda;
}
std::size_t FFT::workspace_size() const {
  return live(impl_, "workspace_size").workspace_size();
}
std::string FFT::describe() const {
  return live(impl_, "describe").describe();
}

std::string_view to_string(FFTType type) {
  switch (type) {
    case FFTType::c2c:
      return "C2C";
    case FFTType::r2c:
      return "R2C";
    case FFTType::c2r:
      return "C2R";
  }
  return "?";
}

std::string_view to_string(Direction direction) {
  return direction == Direction::forward ? "forward" : "inverse";
}

std::string_view to_string(Normalization normalization) {
  switch (normalization) {
    case Normalization::none:
      return "none";
    case Normalization::inverse:
      return "inverse (1/N)";
    case Normalization::forward:
      return "forward (1/N)";
    case Normalization::ortho:
      return "ortho (1/sqrt(N))";
  }
  return "?";
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
