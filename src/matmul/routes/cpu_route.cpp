// SPDX-License-Identifier: Apache-2.0
// The CPU route of a Matmul (see cpu_route.hpp).

#include "matmul/routes/cpu_route.hpp"

#include <fmt/format.h>

#include "base/log.hpp"
#include "matmul/cpu/cpu_backend.hpp"
#include "matmul/matmul_validate.hpp"
#include "runtime/current_stream.hpp"

namespace cuplan::detail {

using enum mm::Slot;

MatmulRouteTraits CpuMatmulRoute::traits() const noexcept {
  // D lives where the operands live: the host, or the operands' device (copied back from the host), aligned as its
  // element; aux is a row-major batch x M x N array.
  return {.request = {.aux_layout = mm::AuxLayout::row_major},
          .result_device = context_.target.operand_device,
          .result_alignment = 0};
}

mm::Problem CpuMatmulRoute::adapt(mm::Problem problem) {
  mm::check_cpu_support(problem, context_.who);
  return problem;
}

void CpuMatmulRoute::plan(const MatmulPlanOptions& /*options*/, const EventList& after) {
  // `after` orders the operands' producers before this phase: the host waits for them (a CPU execute reads the
  // operands on the host, after this phase); each execute then waits for its own `after`.
  wait_on_host(after);
  const mm::Problem& p = context_.problem;
  log(LogLevel::info, "{}: CPU product {} x {} x {} batch {} {} epilog {}", context_.who, p.m, p.n, p.k, p.batch_count,
      p.a_dtype.name(), to_string(p.epilog));
}

std::vector<AlgorithmInfo> CpuMatmulRoute::algorithms() const {
  AlgorithmInfo cpu;
  cpu.description = fmt::format("{} gemm per batch entry, epilog in C++", mm::blas_name());
  return {cpu};
}

void CpuMatmulRoute::autotune(const AutotuneOptions& /*options*/) {
  log(LogLevel::info, "{}: autotune on the CPU: one algorithm, nothing to choose", context_.who);
}

MatmulResult CpuMatmulRoute::execute(const MatmulExecuteOptions& options) {
  const mm::OperandSlots& operands = context_.operands;
  const mm::Problem& problem = context_.problem;
  const std::optional<TensorRef>& out = options.out;
  // The caller's `after` events order their producers before this read: device operands are copied to the host
  // (blocking) on a stream of their device that waits for them; host operands wait on the host.
  std::optional<int> operand_device;
  for (const mm::OperandSlot& o : operands) {
    if (o.ref && !o.ref->view().on_host()) {
      operand_device = o.ref->view().device().index();
      break;
    }
  }
  const HostPhase phase(context_.streams, operand_device, options.stream, options.after);
  const std::optional<StreamRef>& copy_stream = phase.stream();
  std::array<Tensor, slot_count> host_copies;
  auto host_view = [&](int slot) -> std::optional<TensorView> {
    if (!operands[slot].ref) return std::nullopt;
    const TensorView& v = operands[slot].ref->view();
    if (v.on_host()) return v;
    // Sharing the operand's owner: a cuplan Tensor is read after its pending producer.
    host_copies[slot] = operands[slot].ref->as_tensor().to(Device::cpu(), copy_stream);
    return host_copies[slot].view();
  };
  std::optional<TensorView> c_view = host_view(slot_c);
  if (c_view && out && c_view->data() == out->view().data()) {
    // D written over C (checked to be the very same elements): gemm writes D before C is read, so read a copy.
    host_copies[slot_c] = Tensor::empty(c_view->shape(), c_view->dtype(), Device::cpu());
    copy(*c_view, host_copies[slot_c].view());
    c_view = host_copies[slot_c].view();
  }
  mm::CpuOperands in{*host_view(slot_a), *host_view(slot_b), c_view, host_view(slot_bias), host_view(slot_aux)};
  // Device operands get device results (the blocking rule, as FFT): computed on the host, then copied back.
  const bool device_result = copy_stream.has_value();
  Tensor d = out && !device_result ? out->as_tensor()
                                   : Tensor::empty_strided(problem.result_shape, problem.result_strides,
                                                           problem.result_dtype, Device::cpu());
  const mm::EpilogTraits traits = mm::epilog_traits(problem.epilog);
  Tensor aux = traits.aux_output ? Tensor::empty(problem.aux_shape, problem.aux_dtype, Device::cpu()) : Tensor();
  Tensor bias_gradient =
      traits.bias_gradient ? Tensor::empty(problem.bias_gradient_shape, problem.result_dtype, Device::cpu()) : Tensor();
  mm::cpu_matmul(problem, in, context_.options.alpha, context_.options.beta,
                 {d.data(), aux.data(), bias_gradient.data()}, context_.target.cpu_threads);
  if (!device_result) return {.d = std::move(d), .aux = std::move(aux), .bias_gradient = std::move(bias_gradient)};
  const Device device = Device::cuda(context_.target.operand_device);
  Tensor device_d = out ? out->as_tensor()
                        : Tensor::empty_strided(problem.result_shape, problem.result_strides, problem.result_dtype,
                                                device, copy_stream);
  copy(d, device_d, copy_stream);  // from host memory: blocking
  if (aux.numel() > 0) aux = aux.to(device, copy_stream);
  if (bias_gradient.numel() > 0) bias_gradient = bias_gradient.to(device, copy_stream);
  return {.d = std::move(device_d), .aux = std::move(aux), .bias_gradient = std::move(bias_gradient)};
}

void CpuMatmulRoute::free() noexcept {}  // nothing of its own: the last outputs are MatmulImpl's

MatmulRouteDescription CpuMatmulRoute::description() const {
  return {.epilog_note = "",
          .execution = "CPU execution",
          .algorithm = fmt::format("{} gemm per batch entry", mm::blas_name()),
          .location = fmt::format("cpu ({})", mm::blas_name())};
}

}  // namespace cuplan::detail
