# SPDX-License-Identifier: Apache-2.0
# Third-party dependencies of the library itself: the CUDA toolkit, fmt, FFTW and OpenBLAS.
find_package(CUDAToolkit 12.0 REQUIRED)
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

# OpenBLAS: the cblas interface (cblas.h comes from the openblas package on Debian/Ubuntu).
find_library(CUPLAN_OPENBLAS_LIBRARY NAMES openblas REQUIRED)
find_path(CUPLAN_CBLAS_INCLUDE_DIR cblas.h
  PATH_SUFFIXES openblas x86_64-linux-gnu x86_64-linux-gnu/openblas-pthread aarch64-linux-gnu REQUIRED)
if(NOT TARGET cuplan_openblas)
  add_library(cuplan_openblas INTERFACE)
  target_include_directories(cuplan_openblas INTERFACE ${CUPLAN_CBLAS_INCLUDE_DIR})
  target_link_libraries(cuplan_openblas INTERFACE ${CUPLAN_OPENBLAS_LIBRARY})
endif()

# CCCL (libcu++ for cuda::stream_ref, Thrust, CUB) ships inside the toolkit under include/cccl since CUDA 13;
# nvcc finds it by itself, the host compiler needs the path.
find_path(CUPLAN_CCCL_INCLUDE_DIR cuda/stream_ref HINTS ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES cccl REQUIRED)
