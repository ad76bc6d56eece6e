// SPDX-License-Identifier: Apache-2.0
#pragma once
// An NVRTC program handle owned by RAII and its compilation log, for the backends that compile callbacks with
// NVRTC (cuFFT's LTO callbacks in fft/cufft, the fused kernel in fft/fused_kernels). Included by CUDA builds only.

#include <nvrtc.h>

#include <cstddef>
#include <string>

#include "base/non_copyable.hpp"

namespace cuplan::detail {

/// Destroys the program it holds.
struct NvrtcProgram : NonCopyable {
  nvrtcProgram handle = nullptr;
  NvrtcProgram() = default;
  ~NvrtcProgram() {
    if (handle != nullptr) (void)nvrtcDestroyProgram(&handle);
  }
};

/// The program's compilation log (empty when there is none or it cannot be read).
inline std::string nvrtc_program_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);  // the terminating null
  return log;
}

}  // namespace cuplan::detail
