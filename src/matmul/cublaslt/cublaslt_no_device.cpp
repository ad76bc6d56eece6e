// SPDX-License-Identifier: Apache-2.0
// The CPU-only build's cuBLASLt backend (CUPLAN_ENABLE_CUDA=OFF): the interface of cublaslt_backend.hpp and
// bias_gradient.hpp with no cuBLASLt behind it. A Matmul picks CUDA execution only when a device is available,
// which is never the case in this build, and an explicit Execution::cuda is refused before planning. The
// constructor throws the typed error, so no LtPlan object exists in this build and its members below are never
// reached through one; the free functions answer as a machine without a GPU does.

#include "base/cuda_check.hpp"
#include "matmul/cublaslt/bias_gradient.hpp"
#include "matmul/cublaslt/cublaslt_backend.hpp"

namespace cuplan::detail::mm {

LtPlan::LtPlan(const Problem& /*problem*/, int /*device*/, std::complex<double> /*alpha*/,
               std::complex<double> /*beta*/, bool /*c_in_d*/, const char* who) {
  throw_built_without_cuda(who);
}
LtPlan::~LtPlan() = default;

bool LtPlan::set_scalars(std::complex<double> /*alpha*/, std::complex<double> /*beta*/) noexcept {
  return false;
}
void LtPlan::bind(const LtPointers& /*p*/) {
  throw_built_without_cuda("a cuBLASLt product");
}
void LtPlan::find_algorithms(const MatmulPreferences& /*preferences*/, std::size_t /*memory_limit*/,
                             bool /*limit_from_user*/, const LtPointers& /*pointers*/) {
  throw_built_without_cuda("a cuBLASLt product");
}
std::vector<AlgorithmInfo> LtPlan::algorithms() const {
  throw_built_without_cuda("cuBLASLt algorithms");
}
std::size_t LtPlan::workspace_bytes() const noexcept {
  return 0;
}
std::size_t LtPlan::max_workspace_bytes() const noexcept {
  return 0;
}
void LtPlan::mark_result_written(void* /*d*/, cudaStream_t /*stream*/) const noexcept {}
void LtPlan::run(const LtPointers& /*p*/, cudaStream_t /*stream*/, void* /*workspace*/, std::size_t /*workspace_size*/,
                 std::size_t /*index*/) const {
  throw_built_without_cuda("a cuBLASLt product");
}
void LtPlan::autotune(const LtPointers& /*p*/, cudaStream_t /*stream*/, void* /*workspace*/,
                      std::size_t /*workspace_size*/, int /*iterations*/, void* /*flush*/, std::size_t /*flush_bytes*/,
                      const AutotuneProgressCallback& /*progress*/) {
  throw_built_without_cuda("autotuning a cuBLASLt product");
}
std::string LtPlan::choice() const {
  throw_built_without_cuda("a cuBLASLt product");
}
std::string LtPlan::candidate_signature() const {
  throw_built_without_cuda("a cuBLASLt product");
}
bool LtPlan::apply_choice(const std::string& /*choice*/) {
  throw_built_without_cuda("a cuBLASLt product");
}

long autotune_runs() noexcept {
  return 0;  // no cuBLASLt run ever happens in this build
}

std::string tuning_context(int /*device*/) {
  throw_built_without_cuda("a cuBLASLt tuning context");
}

bool bias_gradient_supported(DType /*x_dtype*/, DType /*out_dtype*/) noexcept {
  return false;  // the reduction is a CUDA kernel
}

void launch_bias_gradient(const BiasGradientReduction& /*r*/, cudaStream_t /*stream*/) {
  throw_built_without_cuda("the bias-gradient reduction");
}

}  // namespace cuplan::detail::mm
