// SPDX-License-Identifier: Apache-2.0
// cuplan::DistributedMatmul: the public class forwards to DistributedMatmulImpl.
#include "cuplan/distributed_matmul.hpp"

#include <fmt/format.h>

#include "base/error_context.hpp"
#include "cuplan/errors.hpp"
#include "distributed/distributed_matmul_impl.hpp"
#include "plan/handle.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

namespace {
constexpr const char* who = "DistributedMatmul::";
}  // namespace

DistributedMatmul::DistributedMatmul(Communicator comm, std::int64_t m, std::int64_t n, std::int64_t k,
                                     TensorRef local_a, TensorRef local_b, DistributedMatmulOptions options)
    : impl_(std::make_unique<detail::DistributedMatmulImpl>(std::move(comm), m, n, k, std::move(local_a),
                                                            std::move(local_b), std::move(options))) {}
DistributedMatmul::DistributedMatmul(DistributedMatmul&&) noexcept = default;
DistributedMatmul& DistributedMatmul::operator=(DistributedMatmul&& other) noexcept {
  if (this != &other) {
    if (impl_) impl_->free();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
DistributedMatmul::~DistributedMatmul() = default;

DistributedMatmulBlocks DistributedMatmul::blocks(const Communicator& comm, std::int64_t m, std::int64_t n,
                                                  std::int64_t k, const DistributedMatmulOptions& options) {
  return detail::blocks_of(detail::resolve_product(comm.rank(), comm.size(), m, n, k, options), comm.rank());
}

void DistributedMatmul::plan(std::optional<StreamRef> stream) try {
  detail::held(impl_, who, "plan").plan(stream);
} catch (const LibraryError& error) {
  detail::rethrow_with_context(error, "DistributedMatmul.plan", [this] { return impl_->error_context(); });
}
void DistributedMatmul::autotune(AutotuneOptions options) try {
  detail::held(impl_, who, "autotune").autotune(options);
} catch (const LibraryError& error) {
  detail::rethrow_with_context(error, "DistributedMatmul.autotune", [this] { return impl_->error_context(); });
}
Tensor DistributedMatmul::execute(DistributedMatmulExecuteOptions options) try {
  return detail::held(impl_, who, "execute").execute(options);
} catch (const LibraryError& error) {
  detail::rethrow_with_context(error, "DistributedMatmul.execute", [this] { return impl_->error_context(); });
}
void DistributedMatmul::reset_operand(MatmulOperand which, TensorRef operand, std::optional<StreamRef> stream) try {
  detail::held(impl_, who, "reset_operand").reset_operand(which, std::move(operand), stream);
} catch (const LibraryError& error) {
  detail::rethrow_with_context(error, "DistributedMatmul.reset_operand", [this] { return impl_->error_context(); });
}
void DistributedMatmul::release_operand() {
  detail::held(impl_, who, "release_operand").release_operand();
}
void DistributedMatmul::free() noexcept {
  if (impl_) impl_->free();
}
DistributedMatmulBlocks DistributedMatmul::local_blocks() const {
  return detail::held(impl_, who, "local_blocks").local_blocks();
}
DistributedMatmulAlgorithm DistributedMatmul::algorithm() const {
  return detail::held(impl_, who, "algorithm").algorithm();
}
DType DistributedMatmul::result_dtype() const {
  return detail::held(impl_, who, "result_dtype").result_dtype();
}
Shape DistributedMatmul::result_shape() const {
  return detail::held(impl_, who, "result_shape").result_shape();
}
ExchangeMethod DistributedMatmul::exchange_method() const {
  return detail::held(impl_, who, "exchange_method").exchange_method();
}
std::size_t DistributedMatmul::device_memory_bytes() const {
  return detail::held(impl_, who, "device_memory_bytes").device_memory_bytes();
}
std::string DistributedMatmul::describe() const {
  return detail::held(impl_, who, "describe").describe();
}

}  // namespace CUPLAN_ABI_NAMESPACE
}  // namespace cuplan
