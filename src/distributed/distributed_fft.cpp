// SPDX-License-Identifier: Apache-2.0
// cuplan::DistributedFFT: the public class forwards to DistributedFftImpl (distributed_fft_impl.cpp).
#include "cuplan/distributed.hpp"
#include "cuplan/errors.hpp"
#include "distributed/distributed_fft_impl.hpp"

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
detail::DistributedFftImpl& live(const std::unique_ptr<detail::DistributedFftImpl>& impl, const char* what) {
  if (!impl) throw StateError(std::string("DistributedFFT::") + what + ": the object was moved from");
  return *impl;
}
}  // namespace

void DistributedFFT::plan(std::optional<StreamRef> stream) {
  live(impl_, "plan").plan(stream);
}
Tensor DistributedFFT::execute(DistributedExecuteOptions options) {
  return live(impl_, "execute").execute(options);
}
void DistributedFFT::reset_operand(TensorRef operand, std::optional<StreamRef> stream) {
  live(impl_, "reset_operand").reset_operand(std::move(operand), stream);
}
void DistributedFFT::release_operand() {
  live(impl_, "release_operand").release_operand();
}
void DistributedFFT::free() noexcept {
  if (impl_) impl_->free();
}
DistributedBox DistributedFFT::input_box() const {
  return live(impl_, "input_box").input_box();
}
DistributedBox DistributedFFT::output_box() const {
  return live(impl_, "output_box").output_box();
}
Decomposition DistributedFFT::decomposition() const {
  return live(impl_, "decomposition").decomposition();
}
std::array<int, 2> DistributedFFT::process_grid() const {
  return live(impl_, "process_grid").process_grid();
}
FFTType DistributedFFT::type() const {
  return live(impl_, "type").type();
}
DType DistributedFFT::result_dtype() const {
  return live(impl_, "result_dtype").result_dtype();
}
ExchangeMethod DistributedFFT::exchange_method() const {
  return live(impl_, "exchange_method").exchange_method();
}
std::size_t DistributedFFT::device_memory_bytes() const {
  return live(impl_, "device_memory_bytes").device_memory_bytes();
}
std::string DistributedFFT::describe() const {
  return live(impl_, "describe").describe();
}

}  // namespace cuplan
