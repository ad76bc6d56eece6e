// SPDX-License-Identifier: Apache-2.0
// CUDA runtime status codes to exceptions. The math libraries keep their own status tables in their backend
// folders (fft/cufft, matmul/cublaslt) and format through describe_failure.

#include <fmt/format.h>

#include <utility>

#include "base/cuda_check.hpp"
#include "base/log.hpp"
#include "cuplan/device.hpp"
#include "cuplan/errors.hpp"

namespace cuplan {
inline namespace CUPLAN_ABI_NAMESPACE {

LibraryError::LibraryError(std::string library, std::string call, int status, std::string status_name,
                           std::string message)
    : Error(std::move(message)),
      library_(std::move(library)),
      call_(std::move(call)),
      status_(status),
      status_name_(std::move(status_name)) {}

LibraryError::LibraryError(std::string library, std::string call, int status, std::string status_name,
                           std::string message, std::string context)
    : Error(std::move(message)),
      library_(std::move(library)),
      call_(std::move(call)),
      status_(status),
      status_name_(std::move(status_name)),
      context_(std::move(context)) {}

CallbackError::CallbackError(const std::string& message, std::string callback, std::string log)
    : InvalidArgument(message), callback_(std::move(callback)), log_(std::move(log)) {}

}  // namespace CUPLAN_ABI_NAMESPACE

namespace detail {

void throw_cuda_error(cudaError_t status, const char* call, SourceLocation where) {
  const char* name = cudaGetErrorName(status);
  const char* text = cudaGetErrorString(status);
  // Clear a non-sticky error so that the next call does not report it again.
  (void)cudaGetLastError();
  std::string message = describe_failure("CUDA runtime", call, static_cast<int>(status), name, text, where);
  if (status == cudaErrorMemoryAllocation) throw OutOfMemory(message);
  throw CudaError("CUDA runtime", call, static_cast<int>(status), name, std::move(message));
}

void require_cuda(const char* what) {
  if (!CUPLAN_HAS_CUDA) throw_built_without_cuda(what);
  if (!cuda_available()) [[unlikely]] {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    (void)cudaGetLastError();
    throw NotSupported(fmt::format("no CUDA device: {} needs a GPU, and the CUDA runtime reports {} ({})", what,
                                   status == cudaSuccess ? "no devices" : cudaGetErrorName(status),
                                   status == cudaSuccess ? "device count 0" : cudaGetErrorString(status)));
  }
}

void throw_negative_device_index(Device device, const char* what) {
  throw InvalidArgument(fmt::format("{}: expected a CUDA device index of 0 or more, got {}", what, device.index()));
}

void throw_built_without_cuda(const char* what) {
  throw NotSupported(
      fmt::format("no CUDA device: {} needs a GPU, and this cuplan was built without CUDA "
                  "(CUPLAN_ENABLE_CUDA=OFF); its operations run on the CPU",
                  what));
}

void report_in_noexcept(cudaError_t status, const char* call, SourceLocation where) noexcept {
  (void)cudaGetLastError();
  try {
    log(LogLevel::warning, "ignored in a destructor: {}",
        describe_failure("CUDA runtime", call, static_cast<int>(status), cudaGetErrorName(status),
                         cudaGetErrorString(status), where));
  } catch (...) {
    // Logging must never turn a destructor into a terminate().
  }
}

}  // namespace detail
}  // namespace cuplan
