// SPDX-License-Identifier: Apache-2.0
// Execution target resolution and the blocking rule (see execution_target.hpp).

#include "plan/execution_target.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "base/cuda_check.hpp"
#include "cuplan/config.hpp"
#include "cuplan/errors.hpp"
#include "plan/option_checks.hpp"

namespace cuplan::detail {

namespace {

const char* name_at(std::span<const char* const> names, std::size_t i) {
  return i < names.size() ? names[i] : "operand";
}

}  // namespace

ExecutionTarget resolve_execution(Execution execution, Blocking blocking, std::span<const TensorView> operands,
                                  std::span<const char* const> names, const char* who) {
  check_execution(execution, who);
  check_blocking(blocking, who);
  ExecutionTarget target;
  int operand_device = -1;
  std::size_t first_host = operands.size(), first_device = operands.size();
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const TensorView& view = operands[i];
    if (view.on_host()) {
      if (first_host == operands.size()) first_host = i;
      continue;
    }
    if (first_device == operands.size()) {
      first_device = i;
      operand_device = view.device().index();
    } else if (view.device().index() != operand_device) {
      throw InvalidArgument(
          fmt::format("{}: operands must live on one device: expected {} on cuda:{} like {}, got "
                      "cuda:{}",
                      who, name_at(names, i), operand_device, name_at(names, first_device), view.device().index()));
    }
  }
  if (first_host != operands.size() && first_device != operands.size()) {
    throw InvalidArgument(
        fmt::format("{}: operands must all be in host memory or all on one device: {} is in host "
                    "memory but {} is on cuda:{}",
                    who, name_at(names, first_host), name_at(names, first_device), operand_device));
  }
  target.host_operands = first_device == operands.size();
  target.operand_device = operand_device;

  switch (execution.kind()) {
    case Execution::Kind::automatic:
      target.cuda = !target.host_operands || cuda_available();
      break;
    case Execution::Kind::cuda:
      require_cuda(who);
      target.cuda = true;
      break;
    case Execution::Kind::cpu:
      target.cuda = false;
      break;
  }

  // Device memory needs a device on every route: CPU execution copies it to the host and the result back.
  if (!target.host_operands && !cuda_available()) [[unlikely]]
    throw NotSupported(fmt::format(
        "no CUDA device: {}: {} is in memory of cuda:{}, which needs a CUDA device (CPU execution too copies it "
        "through one), but {}; expected a host operand",
        who, name_at(names, first_device), operand_device,
        CUPLAN_HAS_CUDA ? "the CUDA runtime reports none on this machine"
                        : "this cuplan was built without CUDA (CUPLAN_ENABLE_CUDA=OFF)"));
  if (target.cuda) {
    if (execution.device() >= 0) {
      target.device = execution.device();
      Device::cuda(target.device).check_valid("execution device");
      if (!target.host_operands && operand_device != target.device) {
        throw InvalidArgument(
            fmt::format("{}: operands must live on the execution device: expected cuda:{}, got {} "
                        "on cuda:{}",
                        who, target.device, name_at(names, first_device), operand_device));
      }
    } else {
      target.device = target.host_operands ? Device::current().index() : operand_device;
    }
    target.blocking = target.host_operands || blocking == Blocking::always;
    target.multi_device = cuda_device_count() > 1;
  } else {
    target.cpu_threads = cpu_threads(execution.threads(), who);
    target.blocking = true;  // CPU work is synchronous; device operands are copied to the host first
  }
  return target;
}

void check_alignment(const void* pointer, std::size_t alignment, const char* operand, const char* who) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  if (alignment > 1 && address % alignment != 0) [[unlikely]] {
    throw InvalidArgument(
        fmt::format("{}: {} must be aligned to {} bytes, got address {:#x} ({} bytes past "
                    "an aligned address)",
                    who, operand, alignment, address, address % alignment));
  }
}

void finish_call(const ExecutionTarget& target, StreamRef stream) {
  if (target.cuda && target.blocking) CUPLAN_CUDA_CHECK(cudaStreamSynchronize(stream.native()));
}

}  // namespace cuplan::detail
