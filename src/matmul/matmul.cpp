// SPDX-License-Identifier: Apache-2.0
// The class form Matmul: a thin, move-only handle over MatmulImpl.
#include "cuplan/matmul.hpp"

#include <iterator>

#include "cuplan/enum_name.hpp"
#include "cuplan/errors.hpp"
#include "matmul/matmul_impl.hpp"
#include "plan/handle.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

Matmul::Matmul(TensorRef a, TensorRef b, MatmulOptions options)
    : impl_(std::make_unique<detail::MatmulImpl>(std::move(a), std::move(b), std::move(options), "Matmul")) {}
CUPLAN_HANDLE_LIFETIME(Matmul)

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
CUPLAN_HANDLE_RESULT(Matmul, result_shape(), result_dtype(), result_strides())
std::size_t Matmul::workspace_size() const {
  return detail::live(impl_, who, "workspace_size").workspace_size();
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
  static constexpr const char* names[] = {
      "none",          "relu",          "gelu",  "bias",        "relu_bias", "gelu_bias",   "relu_aux", "gelu_aux",
      "relu_aux_bias", "gelu_aux_bias", "drelu", "drelu_bgrad", "dgelu",     "dgelu_bgrad", "bgrada",   "bgradb"};
  static_assert(std::size(names) == static_cast<std::size_t>(Epilog::bgradb) + 1);
  return detail::enum_name(e, names);
}

const char* to_string(Compute c) noexcept {
  static constexpr const char* names[] = {"automatic", "f16", "f32", "tf32", "f64"};
  static_assert(std::size(names) == static_cast<std::size_t>(Compute::f64) + 1);
  return detail::enum_name(c, names);
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
