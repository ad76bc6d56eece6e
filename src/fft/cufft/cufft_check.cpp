// SPDX-License-Identifier: Apache-2.0
#include "fft/cufft/cufft_check.hpp"

#include <string>
#include <utility>

#include "cuplan/errors.hpp"

namespace cuplan::detail {
namespace {

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

void throw_cufft_error(cufftResult status, const char* call, SourceLocation where) {
  const char* name = cufft_status_name(status);
  std::string message =
      describe_failure("cuFFT", call, static_cast<int>(status), name, cufft_status_text(status), where);
  if (status == CUFFT_ALLOC_FAILED) throw OutOfMemory(message);
  throw LibraryError("cuFFT", call, static_cast<int>(status), name, std::move(message));
}

}  // namespace cuplan::detail
