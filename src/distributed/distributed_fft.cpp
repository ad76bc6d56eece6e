// SPDX-License-Identifier: Apache-2.0
// cuplan::DistributedFFT: the public class forwards to DistributedFftImpl (distributed_fft_impl.cpp).
#include "cuplan/distributed.hpp"
#include "cuplan/errors.hpp"
#include "distributed/distributed_fft_impl.hpp"
#include "plan/handle.hpp"

namespace cuplan {

std::int64_t DistributedBox::numel() const {
  std::int64_t n = 1;
  for (std::int64_t e : extent) n *= e;
  return n;
}

Shape DistributedBox::shape() const {
  return Shape(std::span<const std::int64_t>(extent));
}

DistributedFFT::DistributedFFT(Communicator comm, Shape global_shape, TensorRef local_operand,
                               DistributedFFTOptions options)
    : impl_(std::make_unique<detail::DistributedFftImpl>(std::move(comm), global_shape, std::move(local_operand),
                                                         std::move(options))) {}
DistributedBoxes DistributedFFT::boxes(const Communicator& comm, const Shape& global_shape, DType operand_dtype,
                                       const DistributedFFTOptions& options) {
  return detail::boxes_of(detail::resolve_transform(comm.rank(), comm.size(), global_shape, operand_dtype, options));
}

DistributedFFT::DistributedFFT(DistributedFFT&&) noexcept = default;
DistributedFFT& DistributedFFT::operator=(DistributedFFT&&) noexcept = default;
DistributedFFT::~DistributedFFT() {
  free();
}

namespace {
constexpr const char* who = "DistributedFFT::";
}  // namespace

void DistributedFFT::plan(std::optional<StreamRef> stream) {
  detail::held(impl_, who, "plan").plan(stream);
}
Tensor DistributedFFT::execute(DistributedExecuteOptions options) {
  return detail::held(impl_, who, "execute").execute(options);
}
void DistributedFFT::reset_operand(TensorRef operand, std::optional<StreamRef> stream) {
  detail::held(impl_, who, "reset_operand").reset_operand(std::move(operand), stream);
}
void DistributedFFT::release_operand() {
  detail::held(impl_, who, "release_operand").release_operand();
}
void DistributedFFT::free() noexcept {
  if (impl_) impl_->free();
}
DistributedBox DistributedFFT::input_box() const {
  return detail::held(impl_, who, "input_box").input_box();
}
DistributedBox DistributedFFT::output_box() const {
  return detail::held(impl_, who, "output_box").output_box();
}
Decomposition DistributedFFT::decomposition() const {
  return detail::held(impl_, who, "decomposition").decomposition();
}
std::array<int, 2> DistributedFFT::process_grid() const {
  return detail::held(impl_, who, "process_grid").process_grid();
}
FFTType DistributedFFT::type() const {
  return detail::held(impl_, who, "type").type();
}
DType DistributedFFT::result_dtype() const {
  return detail::held(impl_, who, "result_dtype").result_dtype();
}
ExchangeMethod DistributedFFT::exchange_method() const {
  return detail::held(impl_, who, "exchange_method").exchange_method();
}
std::size_t DistributedFFT::device_memory_bytes() const {
  return detail::held(impl_, who, "device_memory_bytes").device_memory_bytes();
}
std::string DistributedFFT::describe() const {
  return detail::held(impl_, who, "describe").describe();
}

}  // namespace cuplan
