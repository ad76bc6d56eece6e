// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a call of FFT or Matmul runs and whether it blocks (docs/getting-started.md, blocking rule).

#include <cstddef>
#include <optional>
#include <span>

#include "cuplan/device.hpp"
#include "cuplan/execution.hpp"
#include "cuplan/stream.hpp"
#include "cuplan/tensor.hpp"

namespace cuplan::detail {

/// The resolved answer to "where does this run, and does the call block".
struct ExecutionTarget {
  bool cuda = false;           ///< CUDA execution (else CPU)
  int device = -1;             ///< CUDA device index when cuda
  int cpu_threads = 0;         ///< CPU threads when !cuda (0: library default)
  bool host_operands = false;  ///< operands live in host memory (pageable or pinned)
  int operand_device = -1;     ///< CUDA device the operands live on (-1 for host operands); results live there too
  bool blocking = false;       ///< the call synchronises before returning
  bool multi_device = false;   ///< CUDA execution in a process that sees several devices
};

/// Makes the target's device current for one call. With a single device it is always current: then nothing is
/// done, not even a cudaGetDevice, which keeps it off the hot path of execute.
class TargetDeviceScope {
 public:
  explicit TargetDeviceScope(const ExecutionTarget& target) {
    if (target.multi_device) scope_.emplace(Device::cuda(target.device));
  }

 private:
  std::optional<DeviceScope> scope_;
};

/// Applies the blocking rule, docs/getting-started.md. All operands must live in one memory space class: all host, or
/// all on one device (managed counts as device). `who` names the caller in messages ("fft", "Matmul"); `names` name the
/// operands. InvalidArgument for mixed spaces or devices, or a CUDA device out of range; Execution::cuda without a GPU
/// gives NotSupported("no CUDA device: ...").
ExecutionTarget resolve_execution(Execution execution, Blocking blocking, std::span<const TensorView> operands,
                                  std::span<const char* const> names, const char* who);

/// Checks that `pointer` is aligned to `alignment` bytes; InvalidArgument naming `operand`, expected and actual.
void check_alignment(const void* pointer, std::size_t alignment, const char* operand, const char* who);

/// The result of a blocking call: wait on `stream` (StateError-free; CUDA errors become CudaError).
void finish_call(const ExecutionTarget& target, StreamRef stream);

}  // namespace cuplan::detail
