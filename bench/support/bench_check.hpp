// SPDX-License-Identifier: Apache-2.0
#pragma once
// Status checks for the raw library calls the benchmarks time cuplan against. A benchmark only reports; a failing
// call ends it with the call, the status and where it was made.

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cufft.h>

#include <cstdio>
#include <cstdlib>

namespace bench {

[[noreturn]] inline void fail(const char* library, const char* call, int status, const char* name, const char* file,
                              int line) {
  std::fprintf(stderr, "%s call failed: %s returned %s (%d) [at %s:%d]\n", library, call, name, status, file, line);
  std::exit(1);
}

}  // namespace bench

#define BENCH_CUDA_CHECK(expr)                                                                                  \
  do {                                                                                                          \
    const cudaError_t bench_status_ = (expr);                                                                   \
    if (bench_status_ != cudaSuccess)                                                                           \
      ::bench::fail("CUDA runtime", #expr, bench_status_, cudaGetErrorName(bench_status_), __FILE__, __LINE__); \
  } while (0)
#define BENCH_CUFFT_CHECK(expr)                                                        \
  do {                                                                                 \
    const cufftResult bench_status_ = (expr);                                          \
    if (bench_status_ != CUFFT_SUCCESS)                                                \
      ::bench::fail("cuFFT", #expr, bench_status_, "cufftResult", __FILE__, __LINE__); \
  } while (0)
#define BENCH_CUBLAS_CHECK(expr)                                                                                 \
  do {                                                                                                           \
    const cublasStatus_t bench_status_ = (expr);                                                                 \
    if (bench_status_ != CUBLAS_STATUS_SUCCESS)                                                                  \
      ::bench::fail("cuBLASLt", #expr, bench_status_, cublasLtGetStatusName(bench_status_), __FILE__, __LINE__); \
  } while (0)
