// SPDX-License-Identifier: Apache-2.0
#include "distributed/exchange/cuda_status.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "cuplan/errors.hpp"

namespace cuplan::detail::dist {

void throw_cuda(cudaError_t status, const char* call, const char* file, int line) {
  const char* name = cudaGetErrorName(status);
  const std::string message = fmt::format("CUDA runtime call failed: {} returned {} ({}): {} [at {}:{}]", call, name,
                                          static_cast<int>(status), cudaGetErrorString(status), file, line);
  if (status == cudaErrorMemoryAllocation) throw OutOfMemory(message);
  throw CudaError("CUDA runtime", call, static_cast<int>(status), name, message);
}

void report_cuda(cudaError_t status, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "cuplan: CUDA runtime call failed in a noexcept path: %s returned %s [at %s:%d]\n", call,
               cudaGetErrorName(status), file, line);
}

DeviceGuard::DeviceGuard(int device) {
  CUPLAN_DIST_CUDA(cudaGetDevice(&previous_));
  if (previous_ != device) CUPLAN_DIST_CUDA(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) CUPLAN_DIST_CUDA_NOEXCEPT(cudaSetDevice(previous_));
}

}  // namespace cuplan::detail::dist
