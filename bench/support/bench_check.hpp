// SPDX-License-Identifier: Apache-2.0
#pragma once
// Status checks for the raw library calls the benchmarks time cuplan against. A benchmark only reports; a failing
// call ends it with the call, the status and where it was made.

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cufft.h>

#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace bench {

[[noreturn]] inline void fail(const char* library, const char* call, int status, const char* name, const char* file,
                              int line) {
  std::fprintf(stderr, "%s call failed: %s returned %s (%d) [at %s:%d]\n", library, call, name, status, file, line);
  std::exit(1);
}

/// Ends the benchmark through `fail` unless `status` is `success`; `name_of` names the status.
template <class Status, class NameOf>
inline void check(std::type_identity_t<Status> status, Status success, const char* library, const char* call,
                  NameOf&& name_of, const char* file, int line) {
  if (status != success) fail(library, call, static_cast<int>(status), name_of(status), file, line);
}

}  // namespace bench

#define BENCH_CUDA_CHECK(expr) \
  ::bench::check<cudaError_t>((expr), cudaSuccess, "CUDA runtime", #expr, cudaGetErrorName, __FILE__, __LINE__)
#define BENCH_CUFFT_CHECK(expr)                                                                                 \
  ::bench::check<cufftResult>((expr), CUFFT_SUCCESS, "cuFFT", #expr, [](cufftResult) { return "cufftResult"; }, \
                              __FILE__, __LINE__)
#define BENCH_CUBLAS_CHECK(expr)                                                                                    \
  ::bench::check<cublasStatus_t>((expr), CUBLAS_STATUS_SUCCESS, "cuBLASLt", #expr, cublasLtGetStatusName, __FILE__, \
                                 __LINE__)
