// SPDX-License-Identifier: Apache-2.0
#include "fft/cufft/cufft_check.hpp"

#include "base/library_status.hpp"

namespace cuplan::detail {
namespace {

// Every cuFFT status: its name and what it means.
struct CufftStatus {
  cufftResult status;
  const char* name;
  const char* text;  ///< null for CUFFT_SUCCESS
};
constexpr CufftStatus cufft_statuses[] = {
    {CUFFT_SUCCESS, "CUFFT_SUCCESS", nullptr},
    {CUFFT_INVALID_PLAN, "CUFFT_INVALID_PLAN", "invalid plan handle"},
    {CUFFT_ALLOC_FAILED, "CUFFT_ALLOC_FAILED", "failed to allocate GPU or CPU memory"},
    {CUFFT_INVALID_VALUE, "CUFFT_INVALID_VALUE", "a bad pointer or parameter was given"},
    {CUFFT_INTERNAL_ERROR, "CUFFT_INTERNAL_ERROR", "driver or internal cuFFT library error"},
    {CUFFT_EXEC_FAILED, "CUFFT_EXEC_FAILED", "failed to execute an FFT on the GPU"},
    {CUFFT_SETUP_FAILED, "CUFFT_SETUP_FAILED", "the cuFFT library failed to initialise"},
    {CUFFT_INVALID_SIZE, "CUFFT_INVALID_SIZE", "user specified an invalid transform size"},
    {CUFFT_INVALID_DEVICE, "CUFFT_INVALID_DEVICE", "execution of a plan was on a different GPU than plan creation"},
    {CUFFT_NO_WORKSPACE, "CUFFT_NO_WORKSPACE", "no workspace has been provided prior to plan execution"},
    {CUFFT_NOT_IMPLEMENTED, "CUFFT_NOT_IMPLEMENTED", "function does not implement functionality for parameters given"},
    {CUFFT_NOT_SUPPORTED, "CUFFT_NOT_SUPPORTED", "operation is not supported for parameters given"},
    {CUFFT_INVALID_TYPE, "CUFFT_INVALID_TYPE", "invalid transform type"},
    {CUFFT_UNALIGNED_DATA, "CUFFT_UNALIGNED_DATA", "data is not aligned as required"},
    {CUFFT_MISSING_DEPENDENCY, "CUFFT_MISSING_DEPENDENCY", "a library dependency (e.g. for callbacks) is missing"},
    {CUFFT_NVRTC_FAILURE, "CUFFT_NVRTC_FAILURE", "run-time compilation (NVRTC) failed"},
    {CUFFT_NVJITLINK_FAILURE, "CUFFT_NVJITLINK_FAILURE", "JIT linking (nvJitLink) failed"},
    {CUFFT_NVSHMEM_FAILURE, "CUFFT_NVSHMEM_FAILURE", "NVSHMEM failure"},
};

const CufftStatus* find_status(cufftResult status) noexcept {
  for (const CufftStatus& s : cufft_statuses)
    if (s.status == status) return &s;
  return nullptr;
}

const char* cufft_status_text(cufftResult status) noexcept {
  const CufftStatus* s = find_status(status);
  return s != nullptr && s->text != nullptr ? s->text : "unknown status";
}

}  // namespace

const char* cufft_status_name(cufftResult status) noexcept {
  const CufftStatus* s = find_status(status);
  return s != nullptr ? s->name : "CUFFT_UNKNOWN_STATUS";
}

void throw_cufft_error(cufftResult status, const char* call, SourceLocation where) {
  throw_library_status("cuFFT", call, static_cast<int>(status), cufft_status_name(status), cufft_status_text(status),
                       status == CUFFT_ALLOC_FAILED, where);
}

}  // namespace cuplan::detail
