// SPDX-License-Identifier: Apache-2.0
#pragma once
// An nvJitLink handle owned by RAII and its error log, for the backends that link LTO-IR (the check of a user's
// LTO-IR callback in fft/cufft, the fused kernel with LTO-IR callbacks in fft/fused_kernels). Included by CUDA
// builds only.

#include <nvJitLink.h>

#include <cstddef>
#include <string>

#include "base/non_copyable.hpp"

namespace cuplan::detail {

/// Destroys the linker it holds.
struct NvJitLinker : NonCopyable {
  nvJitLinkHandle handle = nullptr;
  NvJitLinker() = default;
  ~NvJitLinker() {
    if (handle != nullptr) (void)nvJitLinkDestroy(&handle);
  }
};

/// The linker's error log (empty when there is none, no linker, or it cannot be read).
inline std::string nvjitlink_error_log(nvJitLinkHandle handle) {
  std::size_t size = 0;
  if (handle == nullptr || nvJitLinkGetErrorLogSize(handle, &size) != NVJITLINK_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvJitLinkGetErrorLog(handle, log.data()) != NVJITLINK_SUCCESS) return {};
  log.resize(size - 1);  // the terminating null
  return log;
}

/// Whether `symbol` is a plain C++ name (no namespace, no template): how cuFFT declares a callback of LTO-IR, and
/// the form the fused kernel declares it in.
inline bool is_plain_identifier(const std::string& symbol) {
  if (symbol.empty() || (symbol[0] >= '0' && symbol[0] <= '9')) return false;
  for (char c : symbol)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace cuplan::detail
