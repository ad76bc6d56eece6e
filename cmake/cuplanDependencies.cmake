# SPDX-License-Identifier: Apache-2.0
# Third-party dependencies of the library itself: the CUDA toolkit (not in the CPU-only build), fmt, FFTW and a BLAS
# library.
if(CUPLAN_ENABLE_CUDA)
  find_package(CUDAToolkit 12.0 REQUIRED)
endif()
find_package(fmt 9 REQUIRED)
find_package(Threads REQUIRED)

# FFTW ships pkg-config files but no CMake package on Debian/Ubuntu.
find_path(FFTW3_INCLUDE_DIR fftw3.h REQUIRED)
foreach(lib fftw3 fftw3f fftw3_threads fftw3f_threads)
  find_library(CUPLAN_${lib}_LIBRARY ${lib} REQUIRED)
endforeach()
if(NOT TARGET cuplan_fftw)
  add_library(cuplan_fftw INTERFACE)
  target_include_directories(cuplan_fftw INTERFACE ${FFTW3_INCLUDE_DIR})
  target_link_libraries(cuplan_fftw INTERFACE
    ${CUPLAN_fftw3_threads_LIBRARY} ${CUPLAN_fftw3f_threads_LIBRARY}
    ${CUPLAN_fftw3_LIBRARY} ${CUPLAN_fftw3f_LIBRARY} Threads::Threads)
endif()

# The BLAS of the CPU matrix products, through CMake's FindBLAS: CUPLAN_BLAS_VENDOR picks OpenBLAS (default), MKL
# (Intel10_64lp: LP64, threaded) or BLIS (FindBLAS's FLAME). Each needs its cblas header and a thread-count call of its
# own (src/matmul/cpu/blas_vendor.hpp); the target cuplan_blas carries the library, the header's directory and
# CUPLAN_BLAS_VENDOR_<vendor>=1.
set(CUPLAN_BLAS_VENDOR "OpenBLAS" CACHE STRING "BLAS of the CPU matrix products: OpenBLAS, MKL or BLIS")
set_property(CACHE CUPLAN_BLAS_VENDOR PROPERTY STRINGS OpenBLAS MKL BLIS)
if(CUPLAN_BLAS_VENDOR STREQUAL "OpenBLAS")
  set(BLA_VENDOR OpenBLAS)
  set(cuplan_cblas_header cblas.h)
  set(cuplan_cblas_suffixes openblas ${CMAKE_LIBRARY_ARCHITECTURE} ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread)
elseif(CUPLAN_BLAS_VENDOR STREQUAL "MKL")
  set(BLA_VENDOR Intel10_64lp)
  set(cuplan_cblas_header mkl_cblas.h)
  set(cuplan_cblas_suffixes mkl)
elseif(CUPLAN_BLAS_VENDOR STREQUAL "BLIS")
  set(BLA_VENDOR FLAME)
  set(cuplan_cblas_header cblas.h)
  # Debian and Ubuntu install each threading flavour of BLIS in a directory of its own.
  set(cuplan_cblas_suffixes blis ${CMAKE_LIBRARY_ARCHITECTURE}/blis-pthread ${CMAKE_LIBRARY_ARCHITECTURE}/blis-openmp)
  foreach(flavour blis-pthread blis-openmp)
    list(APPEND CMAKE_LIBRARY_PATH /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/${flavour})
  endforeach()
else()
  message(FATAL_ERROR "CUPLAN_BLAS_VENDOR: expected OpenBLAS, MKL or BLIS, got '${CUPLAN_BLAS_VENDOR}'")
endif()
find_package(BLAS REQUIRED)
find_path(CUPLAN_CBLAS_INCLUDE_DIR ${cuplan_cblas_header} HINTS $ENV{MKLROOT}/include
  PATH_SUFFIXES ${cuplan_cblas_suffixes} NO_CACHE)
if(NOT CUPLAN_CBLAS_INCLUDE_DIR)
  message(FATAL_ERROR "CUPLAN_BLAS_VENDOR=${CUPLAN_BLAS_VENDOR}: found the library (${BLAS_LIBRARIES}) but not its "
                      "cblas header ${cuplan_cblas_header}")
endif()
message(STATUS "cuplan: CPU BLAS ${CUPLAN_BLAS_VENDOR} (${BLAS_LIBRARIES}; ${CUPLAN_CBLAS_INCLUDE_DIR})")
string(TOUPPER "${CUPLAN_BLAS_VENDOR}" cuplan_blas_vendor_upper)
if(NOT TARGET cuplan_blas)
  add_library(cuplan_blas INTERFACE)
  target_include_directories(cuplan_blas INTERFACE ${CUPLAN_CBLAS_INCLUDE_DIR})
  target_link_libraries(cuplan_blas INTERFACE BLAS::BLAS)
  target_compile_definitions(cuplan_blas INTERFACE CUPLAN_BLAS_VENDOR_${cuplan_blas_vendor_upper}=1)
endif()

# CCCL (libcu++ for cuda::stream_ref, Thrust, CUB) ships inside the toolkit under include/cccl since CUDA 13;
# nvcc finds it by itself, the host compiler needs the path.
if(CUPLAN_ENABLE_CUDA)
  find_path(CUPLAN_CCCL_INCLUDE_DIR cuda/stream_ref HINTS ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES cccl REQUIRED)
endif()

# What stands for the CUDA runtime in targets that call it (the library, tests, samples): the toolkit's cudart, or in
# the CPU-only build cuplan's no-device runtime (src/base/no_device: the runtime's calls, answered as on a machine
# without a GPU), whose directory then also provides <cuda_runtime_api.h>.
if(CUPLAN_ENABLE_CUDA)
  set(CUPLAN_CUDART CUDA::cudart)
else()
  if(NOT TARGET cuplan_no_device_runtime)
    add_library(cuplan_no_device_runtime STATIC ${PROJECT_SOURCE_DIR}/src/base/no_device/no_device_runtime.cpp)
    set_target_properties(cuplan_no_device_runtime PROPERTIES POSITION_INDEPENDENT_CODE ON
      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
    target_include_directories(cuplan_no_device_runtime
      PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src/base/no_device>
             $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${CUPLAN_GENERATED_INCLUDE_DIR}>)
    target_compile_features(cuplan_no_device_runtime PUBLIC cxx_std_20)
  endif()
  set(CUPLAN_CUDART cuplan_no_device_runtime)
endif()
