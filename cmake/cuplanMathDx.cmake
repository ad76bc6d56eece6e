# SPDX-License-Identifier: Apache-2.0
# MathDx (cuFFTDx headers), optional: the fused convolution kernels (src/convolution/cuda) and the fused real-to-real
# kernels (src/r2r/cufft) are built on it.
# MathDx is NVIDIA software under the Math Libraries SDK license, never part of this repository: scripts/setup.sh
# fetches the pinned nvidia-mathdx wheel into the ignored prefix .deps/, or the user points CUPLAN_MATHDX_ROOT at an
# installed copy (the folder that holds include/cufftdx.hpp, e.g. <site-packages>/nvidia/mathdx). Without it the
# build is complete and the fused route is absent (CUPLAN_HAS_FUSED_FFT 0 in cuplan/config.hpp).
#
# Sets CUPLAN_FUSED_FFT (ON when found and wanted) and, then, adds the kernels compiled ahead of time to
# cuplan_objects: cuplan_add_fused_kernels() is called from src/CMakeLists.txt.
include_guard(GLOBAL)

set(CUPLAN_MATHDX_VERSION 25.6.0)  # the version scripts/setup.sh fetches, and the one these kernels are tested with
set(CUPLAN_MATHDX_ROOT "" CACHE PATH "Installed MathDx (the folder holding include/cufftdx.hpp); empty: .deps/")
option(CUPLAN_ENABLE_FUSED_FFT "Build the fused cuFFTDx convolution kernels when MathDx is found" ON)
# Every FFT length the fused routes serve, compiled ahead of time; a shorter list (CI) compiles faster and leaves the
# other lengths to the separate-pass routes.
set(CUPLAN_FUSED_FFT_LENGTHS "256;512;1024;2048;4096;8192;16384" CACHE STRING
    "Power-of-two FFT lengths of the fused convolution and real-to-real kernels compiled ahead of time (256 to 16384)")

set(CUPLAN_FUSED_BLOCK_SHAPES "16x16;32x32;64x64;128x128;16x16x16;16x32x32" CACHE STRING
    "FFT shapes (N1xN2 or N0xN1xN2, powers of two from 16, at most 16384 values) of the whole-transform 2D and 3D \
convolution kernels compiled ahead of time; empty: none")

set(CUPLAN_FUSED_FFT OFF)
set(CUPLAN_MATHDX_INCLUDE_DIRS)
if(CUPLAN_ENABLE_CUDA AND CUPLAN_ENABLE_FUSED_FFT)
  set(cuplan_mathdx_hints)
  if(CUPLAN_MATHDX_ROOT)
    list(APPEND cuplan_mathdx_hints ${CUPLAN_MATHDX_ROOT} ${CUPLAN_MATHDX_ROOT}/nvidia/mathdx)
  elseif(DEFINED ENV{CUPLAN_MATHDX_ROOT})
    list(APPEND cuplan_mathdx_hints $ENV{CUPLAN_MATHDX_ROOT} $ENV{CUPLAN_MATHDX_ROOT}/nvidia/mathdx)
  endif()
  list(APPEND cuplan_mathdx_hints ${PROJECT_SOURCE_DIR}/.deps/mathdx-${CUPLAN_MATHDX_VERSION}/nvidia/mathdx)
  find_path(CUPLAN_CUFFTDX_INCLUDE_DIR cufftdx.hpp HINTS ${cuplan_mathdx_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)
  # cuFFTDx includes CUTLASS's platform headers, which the wheel ships under external/cutlass.
  find_path(CUPLAN_MATHDX_CUTLASS_INCLUDE_DIR cutlass/cutlass.h
    HINTS ${cuplan_mathdx_hints} PATH_SUFFIXES external/cutlass/include NO_DEFAULT_PATH)
  if(CUPLAN_CUFFTDX_INCLUDE_DIR AND CUPLAN_MATHDX_CUTLASS_INCLUDE_DIR)
    file(STRINGS ${CUPLAN_CUFFTDX_INCLUDE_DIR}/cufftdx/cufftdx_version.hpp cuplan_cufftdx_version_line
      REGEX "^#define CUFFTDX_VERSION [0-9]+")
    string(REGEX MATCH "[0-9]+$" CUPLAN_CUFFTDX_VERSION "${cuplan_cufftdx_version_line}")
    if(CUPLAN_CUFFTDX_VERSION LESS 10500)
      message(STATUS "cuplan: cuFFTDx ${CUPLAN_CUFFTDX_VERSION} at ${CUPLAN_CUFFTDX_INCLUDE_DIR} is older than 1.5.0 "
                     "(MathDx 25.06): the fused convolution route is not built")
    else()
      set(CUPLAN_FUSED_FFT ON)
      set(CUPLAN_MATHDX_INCLUDE_DIRS ${CUPLAN_CUFFTDX_INCLUDE_DIR} ${CUPLAN_MATHDX_CUTLASS_INCLUDE_DIR})
      message(STATUS "cuplan: cuFFTDx ${CUPLAN_CUFFTDX_VERSION} found at ${CUPLAN_CUFFTDX_INCLUDE_DIR}: fused "
                     "convolution kernels for lengths ${CUPLAN_FUSED_FFT_LENGTHS}")
    endif()
  else()
    message(STATUS "cuplan: MathDx (cuFFTDx) not found (scripts/setup.sh fetches nvidia-mathdx==${CUPLAN_MATHDX_VERSION}"
                   " into .deps/, or set CUPLAN_MATHDX_ROOT): the fused convolution route is absent")
  endif()
endif()

# Adds the fused kernels to `target`: per length, one generated translation unit of convolution kernels (c2c f32,
# c2c f64, r2c/c2r f32 and f64), one of column kernels (2D and 3D convolutions) and two of real-to-real kernels (R2C,
# C2R, C2C in f32, and in f64), and the tables of those compiled. Without MathDx only the tables, empty, are added.
function(cuplan_add_fused_kernels target)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/generated/fused)
  set(declarations "")
  set(entries "")
  set(column_declarations "")
  set(column_entries "")
  set(r2r_declarations "")
  set(r2r_entries "")
  set(block_declarations "")
  set(block_entries "")
  if(CUPLAN_FUSED_FFT)
    foreach(length IN LISTS CUPLAN_FUSED_FFT_LENGTHS)
      if(NOT length MATCHES "^(256|512|1024|2048|4096|8192|16384)$")
        message(FATAL_ERROR "cuplan: CUPLAN_FUSED_FFT_LENGTHS: ${length} is not a power of two from 256 to 16384")
      endif()
      set(CUPLAN_FUSED_LENGTH ${length})
      configure_file(${PROJECT_SOURCE_DIR}/src/convolution/cuda/fused_length.cu.in ${dir}/fused_${length}.cu @ONLY)
      target_sources(${target} PRIVATE ${dir}/fused_${length}.cu)
      foreach(kind c2c_f32 c2c_f64 r2c_f32 r2c_f64)
        string(APPEND declarations "extern const FusedLauncher fused_${kind}_${length};\n")
        string(APPEND entries "    &fused_${kind}_${length},\n")
      endforeach()
      # Column kernels (2D and 3D): c64, and c128 up to 8192 (a longer c128 column does not fit the tile).
      configure_file(${PROJECT_SOURCE_DIR}/src/convolution/cuda/fused_columns_length.cu.in
        ${dir}/fused_columns_${length}.cu @ONLY)
      target_sources(${target} PRIVATE ${dir}/fused_columns_${length}.cu)
      set(column_kinds c2c_f32)
      if(length LESS_EQUAL 8192)
        list(APPEND column_kinds c2c_f64)
      endif()
      foreach(kind IN LISTS column_kinds)
        string(APPEND column_declarations "extern const FusedColumnLauncher fused_columns_${kind}_${length};\n")
        string(APPEND column_entries "    &fused_columns_${kind}_${length},\n")
      endforeach()
      # Real-to-real kernels (src/r2r/cufft): one translation unit per precision, so that a parallel build compiles
      # them side by side.
      foreach(precision f32 f64)
        if(precision STREQUAL "f32")
          set(CUPLAN_FUSED_R2R_REAL float)
        else()
          set(CUPLAN_FUSED_R2R_REAL double)
        endif()
        set(CUPLAN_FUSED_R2R_SUFFIX ${precision})
        configure_file(${PROJECT_SOURCE_DIR}/src/r2r/cufft/fused_r2r_length.cu.in
          ${dir}/fused_r2r_${precision}_${length}.cu @ONLY)
        target_sources(${target} PRIVATE ${dir}/fused_r2r_${precision}_${length}.cu)
        foreach(fft r2c c2r c2c)
          string(APPEND r2r_declarations "extern const FusedR2RLauncher fused_r2r_${fft}_${precision}_${length};\n")
          string(APPEND r2r_entries "    &fused_r2r_${fft}_${precision}_${length},\n")
        endforeach()
      endforeach()
    endforeach()
    # Whole-transform kernels (2D and 3D shapes that fit one block): c64, and c128 up to 4096 values.
    foreach(shape IN LISTS CUPLAN_FUSED_BLOCK_SHAPES)
      if(NOT shape MATCHES "^([0-9]+x)?[0-9]+x[0-9]+$")
        message(FATAL_ERROR "cuplan: CUPLAN_FUSED_BLOCK_SHAPES: '${shape}' is not N1xN2 or N0xN1xN2")
      endif()
      string(REPLACE "x" ";" lengths "${shape}")
      list(LENGTH lengths rank)
      if(rank EQUAL 2)
        list(PREPEND lengths 1)
      endif()
      set(values 1)
      foreach(n IN LISTS lengths)
        math(EXPR values "${values} * ${n}")
      endforeach()
      list(GET lengths 0 CUPLAN_FUSED_BLOCK_N0)
      list(GET lengths 1 CUPLAN_FUSED_BLOCK_N1)
      list(GET lengths 2 CUPLAN_FUSED_BLOCK_N2)
      foreach(n ${CUPLAN_FUSED_BLOCK_N1} ${CUPLAN_FUSED_BLOCK_N2})
        if(NOT n MATCHES "^(16|32|64|128|256|512|1024)$")
          message(FATAL_ERROR "cuplan: CUPLAN_FUSED_BLOCK_SHAPES: ${shape}: ${n} is not a power of two from 16")
        endif()
      endforeach()
      if(rank EQUAL 3 AND NOT CUPLAN_FUSED_BLOCK_N0 MATCHES "^(16|32|64|128|256|512|1024)$")
        message(FATAL_ERROR "cuplan: CUPLAN_FUSED_BLOCK_SHAPES: ${shape}: ${CUPLAN_FUSED_BLOCK_N0} is not a power of "
                            "two from 16")
      endif()
      if(values GREATER 16384)
        message(FATAL_ERROR "cuplan: CUPLAN_FUSED_BLOCK_SHAPES: ${shape} holds ${values} values, more than 16384")
      endif()
      set(CUPLAN_FUSED_BLOCK_NAME ${shape})
      configure_file(${PROJECT_SOURCE_DIR}/src/convolution/cuda/fused_block_shape.cu.in
        ${dir}/fused_block_${shape}.cu @ONLY)
      target_sources(${target} PRIVATE ${dir}/fused_block_${shape}.cu)
      set(block_kinds c2c_f32)
      if(values LESS_EQUAL 4096)
        list(APPEND block_kinds c2c_f64)
      endif()
      foreach(kind IN LISTS block_kinds)
        string(APPEND block_declarations "extern const FusedBlockLauncher fused_block_${kind}_${shape};\n")
        string(APPEND block_entries "    &fused_block_${kind}_${shape},\n")
      endforeach()
    endforeach()
    target_include_directories(${target} SYSTEM PRIVATE ${CUPLAN_MATHDX_INCLUDE_DIRS})
    set(CUPLAN_FUSED_MATHDX_VERSION "${CUPLAN_MATHDX_VERSION} (cuFFTDx ${CUPLAN_CUFFTDX_VERSION})")
  else()
    set(CUPLAN_FUSED_MATHDX_VERSION "")
  endif()
  # The fused FFT route compiles its kernels with NVRTC at plan time: the include folders it hands NVRTC.
  set(CUPLAN_FUSED_FFT_MATHDX_DIRS "${CUPLAN_MATHDX_INCLUDE_DIRS}")  # ';'-separated in the generated string
  set(cuplan_cuda_dirs ${CUDAToolkit_INCLUDE_DIRS})
  foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
    if(EXISTS ${dir}/cccl/cuda/std/type_traits)
      list(APPEND cuplan_cuda_dirs ${dir}/cccl)
    endif()
  endforeach()
  list(REMOVE_DUPLICATES cuplan_cuda_dirs)
  set(CUPLAN_FUSED_FFT_CUDA_DIRS "${cuplan_cuda_dirs}")
  configure_file(${PROJECT_SOURCE_DIR}/src/fft/fused_kernels/fused_fft_paths.cpp.in ${dir}/fused_fft_paths.cpp @ONLY)
  target_sources(${target} PRIVATE ${dir}/fused_fft_paths.cpp)
  set(CUPLAN_FUSED_DECLARATIONS "${declarations}")
  set(CUPLAN_FUSED_ENTRIES "${entries}")
  set(CUPLAN_FUSED_COLUMN_DECLARATIONS "${column_declarations}")
  set(CUPLAN_FUSED_COLUMN_ENTRIES "${column_entries}")
  set(CUPLAN_FUSED_BLOCK_DECLARATIONS "${block_declarations}")
  set(CUPLAN_FUSED_BLOCK_ENTRIES "${block_entries}")
  configure_file(${PROJECT_SOURCE_DIR}/src/convolution/cuda/fused_table.cpp.in ${dir}/fused_table.cpp @ONLY)
  target_sources(${target} PRIVATE ${dir}/fused_table.cpp)
  set(CUPLAN_FUSED_R2R_DECLARATIONS "${r2r_declarations}")
  set(CUPLAN_FUSED_R2R_ENTRIES "${r2r_entries}")
  configure_file(${PROJECT_SOURCE_DIR}/src/r2r/cufft/fused_r2r_table.cpp.in ${dir}/fused_r2r_table.cpp @ONLY)
  target_sources(${target} PRIVATE ${dir}/fused_r2r_table.cpp)
endfunction()
