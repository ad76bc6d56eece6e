# SPDX-License-Identifier: Apache-2.0
# ABI rules (docs/getting-started.md, "Versions and ABI"). While the major version is 0 every minor release may
# change the ABI: the shared libraries' SOVERSION is major.minor (libcuplan.so.0.1) and the inline namespace that
# holds all of namespace cuplan is v0_1. From 1.0 on both follow the major version alone (libcuplan.so.1, v1).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(CUPLAN_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  set(CUPLAN_ABI_NAMESPACE v${PROJECT_VERSION_MAJOR}_${PROJECT_VERSION_MINOR})
else()
  set(CUPLAN_SOVERSION ${PROJECT_VERSION_MAJOR})
  set(CUPLAN_ABI_NAMESPACE v${PROJECT_VERSION_MAJOR})
endif()

# cuplan/config.hpp, generated into the build tree's include directory (installed next to the other headers): the
# version, the ABI namespace, and the components and features of this build. Written once the components are
# known (after cmake/cuplanDistributed.cmake).
set(CUPLAN_GENERATED_INCLUDE_DIR ${PROJECT_BINARY_DIR}/include)
function(cuplan_write_config_header)
  if(TARGET cuplan_distributed)
    set(CUPLAN_HAS_DISTRIBUTED 1)
  else()
    set(CUPLAN_HAS_DISTRIBUTED 0)
  endif()
  if(CUPLAN_ENABLE_CUDA)
    set(CUPLAN_HAS_CUDA 1)
  else()
    set(CUPLAN_HAS_CUDA 0)
  endif()
  if(CUPLAN_FUSED_FFT)
    set(CUPLAN_HAS_FUSED_FFT 1)
  else()
    set(CUPLAN_HAS_FUSED_FFT 0)
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/config.hpp.in ${CUPLAN_GENERATED_INCLUDE_DIR}/cuplan/config.hpp @ONLY)
endfunction()
