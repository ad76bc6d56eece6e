// Status codes to exceptions: the single place where CUDA, cuFFT and cuBLASLt failures become cuplan errors.

#include <fmt/format.h>

#include <utility>

#include "core/check.hpp"
#include "core/log.hpp"
#include "cuplan/device.hpp"
#include "cuplan/errors.hpp"

namespace cuplan {

LibraryError::LibraryError(std::string library, std::string call, int status, std::string status_name,
                           std::string message)
    : Error(std::move(message)),
      library_(std::move(library)),
      call_(std::move(call)),
      status_(status),
      status_name_(std::move(status_name)) {}

namespace detail {

namespace {

std::string describe(const char* library, const char* call, int status, const char* name, const char* text,
                     SourceLocation where) {
  return fmt::format("{} call failed: {} returned {} ({}): {} [at {}:{}]", library, call, name, status, text,
                     where.file, where.line);
}

const char* cublas_status_text(cublasStatus_t status) noexcept {
  switch (status) {
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "the library was not initialised";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "an unsupported value or parameter was passed";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "the device does not support this feature";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "license error";
    default:
      return "unknown status";
  }
}

const char* cufft_status_text(cufftResult status) noexcept {
  switch (status) {
    case CUFFT_INVALID_PLAN:
      return "invalid plan handle";
    case CUFFT_ALLOC_FAILED:
      return "failed to allocate GPU or CPU memory";
    case CUFFT_INVALID_VALUE:
      return "a bad pointer or parameter was given";
    case CUFFT_INTERNAL_ERROR:
      return "driver or internal cuFFT library error";
    case CUFFT_EXEC_FAILED:
      return "failed to execute an FFT on the GPU";
    case CUFFT_SETUP_FAILED:
      return "the cuFFT library failed to initialise";
    case CUFFT_INVALID_SIZE:
      return "user specified an invalid transform size";
    case CUFFT_INVALID_DEVICE:
      return "execution of a plan was on a different GPU than plan creation";
    case CUFFT_NO_WORKSPACE:
      return "no workspace has been provided prior to plan execution";
    case CUFFT_NOT_IMPLEMENTED:
      return "function does not implement functionality for parameters given";
    case CUFFT_NOT_SUPPORTED:
      return "operation is not supported for parameters given";
    case CUFFT_INVALID_TYPE:
      return "invalid transform type";
    case CUFFT_UNALIGNED_DATA:
      return "data is not aligned as required";
    case CUFFT_MISSING_DEPENDENCY:
      return "a library dependency (e.g. for callbacks) is missing";
    case CUFFT_NVRTC_FAILURE:
      return "run-time compilation (NVRTC) failed";
    case CUFFT_NVJITLINK_FAILURE:
      return "JIT linking (nvJitLink) failed";
    case CUFFT_NVSHMEM_FAILURE:
      return "NVSHMEM failure";
    default:
      return "unknown status";
  }
}

}  // namespace

const char* cufft_status_name(cufftResult status) noexcept {
  switch (status) {
    case CUFFT_SUCCESS:
      return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    case CUFFT_INVALID_DEVICE:
      return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE:
      return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED:
      return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED:
      return "CUFFT_NOT_SUPPORTED";
    case CUFFT_INVALID_TYPE:
      return "CUFFT_INVALID_TYPE";
    case CUFFT_UNALIGNED_DATA:
      return "CUFFT_UNALIGNED_DATA";
    case CUFFT_MISSING_DEPENDENCY:
      return "CUFFT_MISSING_DEPENDENCY";
    case CUFFT_NVRTC_FAILURE:
      return "CUFFT_NVRTC_FAILURE";
    case CUFFT_NVJITLINK_FAILURE:
      return "CUFFT_NVJITLINK_FAILURE";
    case CUFFT_NVSHMEM_FAILURE:
      return "CUFFT_NVSHMEM_FAILURE";
    default:
      return "CUFFT_UNKNOWN_STATUS";
  }
}

void throw_cuda_error(cudaError_t status, const char* call, SourceLocation where) {
  const char* name = cudaGetErrorName(status);
  const char* text = cudaGetErrorString(status);
  // Clear a non-sticky error so that the next call does not report it again.
  (void)cudaGetLastError();
  std::string message = describe("CUDA runtime", call, static_cast<int>(status), name, text, where);
  if (status == cudaErrorMemoryAllocation) throw OutOfMemory(message);
  throw CudaError("CUDA runtime", call, static_cast<int>(status), name, std::move(message));
}

void throw_cufft_error(cufftResult status, const char* call, SourceLocation where) {
  const char* name = cufft_status_name(status);
  std::string message = describe("cuFFT", call, static_cast<int>(status), name, cufft_status_text(status), where);
  if (status == CUFFT_ALLOC_FAILED) throw OutOfMemory(message);
  throw LibraryError("cuFFT", call, static_cast<int>(status), name, std::move(message));
}

void throw_cublas_error(cublasStatus_t status, const char* call, SourceLocation where) {
  const char* name = cublasLtGetStatusName(status);
  std::string message = describe("cuBLASLt", call, static_cast<int>(status), name, cublas_status_text(status), where);
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(message);
  throw LibraryError("cuBLASLt", call, static_cast<int>(status), name, std::move(message));
}

void require_cuda(const char* what) {
  if (!cuda_available()) [[unlikely]] {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    (void)cudaGetLastError();
    throw NotSupported(fmt::format("no CUDA device: {} needs a GPU, and the CUDA runtime reports {} ({})", what,
                                   status == cudaSuccess ? "no devices" : cudaGetErrorName(status),
                                   status == cudaSuccess ? "device count 0" : cudaGetErrorString(status)));
  }
}

void report_in_noexcept(cudaError_t status, const char* call, SourceLocation where) noexcept {
  (void)cudaGetLastError();
  try {
    log(LogLevel::warning, "ignored in a destructor: {}",
        describe("CUDA runtime", call, static_cast<int>(status), cudaGetErrorName(status), cudaGetErrorString(status),
                 where));
  } catch (...) {
    // Logging must never turn a destructor into a terminate().
  }
}

}  // namespace detail
}  // namespace cuplan
