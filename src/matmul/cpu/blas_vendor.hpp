// SPDX-License-Identifier: Apache-2.0
#pragma once
// The BLAS library of the CPU backend, chosen when configuring (CMake option CUPLAN_BLAS_VENDOR: OpenBLAS, MKL or
// BLIS; the target cuplan_blas defines CUPLAN_BLAS_VENDOR_<vendor>): its cblas header, its name, and its process-wide
// thread count. BlasThreads (blas_threads.hpp) serialises changes of the count between calls.

#if defined(CUPLAN_BLAS_VENDOR_MKL)
#include <mkl_cblas.h>
#include <mkl_service.h>
#elif defined(CUPLAN_BLAS_VENDOR_BLIS)
#include <blis.h>
#include <cblas.h>
#elif defined(CUPLAN_BLAS_VENDOR_OPENBLAS)
#include <cblas.h>
#else
#error "no CUPLAN_BLAS_VENDOR_<vendor> defined: link the target cuplan_blas (cmake/cuplanDependencies.cmake)"
#endif

namespace cuplan::detail::mm {

// The integer of dimensions and leading dimensions in cblas calls, and the vendor's name.
#if defined(CUPLAN_BLAS_VENDOR_MKL)
using blas_int = MKL_INT;
inline constexpr const char* blas_vendor = "MKL";
#elif defined(CUPLAN_BLAS_VENDOR_BLIS)
using blas_int = f77_int;
inline constexpr const char* blas_vendor = "BLIS";
#else
using blas_int = blasint;
inline constexpr const char* blas_vendor = "OpenBLAS";
#endif

/// The vendor's process-wide thread count. BLIS answers -1 while no count was set (it then follows
/// BLIS_NUM_THREADS, else runs on one thread).
inline int blas_thread_count() noexcept {
#if defined(CUPLAN_BLAS_VENDOR_MKL)
  return mkl_get_max_threads();
#elif defined(CUPLAN_BLAS_VENDOR_BLIS)
  return static_cast<int>(bli_thread_get_num_threads());
#else
  return openblas_get_num_threads();
#endif
}

inline void set_blas_thread_count(int threads) noexcept {
#if defined(CUPLAN_BLAS_VENDOR_MKL)
  mkl_set_num_threads(threads);
#elif defined(CUPLAN_BLAS_VENDOR_BLIS)
  bli_thread_set_num_threads(threads);
#else
  openblas_set_num_threads(threads);
#endif
}

}  // namespace cuplan::detail::mm
