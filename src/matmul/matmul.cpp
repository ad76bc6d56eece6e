// SPDX-License-Identifier: Apache-2.0
// The class form Matmul: a thin, move-only handle over MatmulImpl.
#include "cuplan/matmul.hpp"

#include "cuplan/errors.hpp"
#include "matmul/matmul_impl.hpp"
#include "plan/handle.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

Matmul::Matmul(TensorRef a, TensorRef b, MatmulOptions options)
    : impl_(std::make_unique<detail::MatmulImpl>(std::move(a), std::move(b), std::move(options), "Matmul")) {}
Matmul::Matmul(Matmul&&) noexcept = default;
Matmul& Matmul::operator=(Matmul&&) noexcept = default;
Matmul::~Matmul() = default;

namespace {
constexpr const char* who = "Matmul.";
}  // namespace

void Matmul::plan(MatmulPlanOptions options) {
  detail::held(impl_, who, "plan").plan(options);
}
std::vector<AlgorithmInfo> Matmul::algorithms() const {
  return detail::held(impl_, who, "algorithms").algorithms();
}
void Matmul::autotune(AutotuneOptions options) {
  detail::held(impl_, who, "autotune").autotune(options);
}
Tensor Matmul::execute(const MatmulExecuteOptions& options) {
  return detail::held(impl_, who, "execute").execute(options);
}
void Matmul::reset_operand(MatmulOperand which, TensorRef operand, std::optional<StreamRef> stream) {
  detail::held(impl_, who, "reset_operand").reset_operand(which, std::move(operand), stream);
}
void Matmul::reset_operands(MatmulOperands operands, std::optional<StreamRef> stream) {
  detail::held(impl_, who, "reset_operands").reset_operands(operands, stream);
}
void Matmul::release_operand() {
  detail::live(impl_, who, "release_operand").release_operand();
}
void Matmul::free() noexcept {
  if (impl_) impl_->free();
}
Shape Matmul::result_shape() const {
  return detail::live(impl_, who, "result_shape").result_shape();
}
DType Matmul::result_dtype() const {
  return detail::live(impl_, who, "result_dtype").result_dtype();
}
Strides Matmul::result_strides() const {
  return detail::live(impl_, who, "result_strides").result_strides();
}
std::string Matmul::describe() const {
  return detail::live(impl_, who, "describe").describe();
}
std::string_view Matmul::state() const noexcept {
  return detail::lifecycle_state(impl_);
}
Tensor Matmul::aux() const {
  return detail::live(impl_, who, "aux").aux();
}
Tensor Matmul::bias_gradient() const {
  return detail::live(impl_, who, "bias_gradient").bias_gradient();
}

const char* to_string(Epilog e) noexcept {
  switch (e) {
    case Epilog::none:
      return "none";
    case Epilog::relu:
      return "relu";
    case Epilog::gelu:
      return "gelu";
    case Epilog::bias:
      return "bias";
    case Epilog::relu_bias:
      return "relu_bias";
    case Epilog::gelu_bias:
      return "gelu_bias";
    case Epilog::relu_aux:
      return "relu_aux";
    case Epilog::gelu_aux:
      return "gelu_aux";
    case Epilog::relu_aux_bias:
      return "relu_aux_bias";
    case Epilog::gelu_aux_bias:
      return "gelu_aux_bias";
    case Epilog::drelu:
      return "drelu";
    case Epilog::drelu_bgrad:
      return "drelu_bgrad";
    case Epilog::dgelu:
      return "dgelu";
    case Epilog::dgelu_bgrad:
      return "dgelu_bgrad";
    case Epilog::bgrada:
      return "bgrada";
    case Epilog::bgradb:
      return "bgradb";
  }
  return "?";
}

const char* to_string(Compute c) noexcept {
  switch (c) {
    case Compute::automatic:
      return "automatic";
    case Compute::f16:
      return "f16";
    case Compute::f32:
      return "f32";
    case Compute::tf32:
      return "tf32";
    case Compute::f64:
      return "f64";
  }
  return "?";
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
