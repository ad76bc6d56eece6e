# SPDX-License-Identifier: Apache-2.0
# The optional distributed component, cuplan::distributed (docs/distributed.md): distributed FFT over NCCL.
# Included twice: from the project's top level (builds and installs the component when NCCL is found) and from the
# installed package configuration (CUPLAN_PACKAGE_CONFIG set: imports the component if it was installed).
if(NOT CUPLAN_PACKAGE_CONFIG AND NOT CUPLAN_ENABLE_CUDA)
  # The component exchanges device memory through NCCL and copy engines: nothing of it exists in a CPU-only build.
  if(CUPLAN_BUILD_DISTRIBUTED)
    message(FATAL_ERROR "CUPLAN_BUILD_DISTRIBUTED=ON needs CUDA (NCCL); this is a CPU-only build "
                        "(CUPLAN_ENABLE_CUDA=OFF)")
  endif()
  message(STATUS "cuplan: distributed component off (CPU-only build)")
  return()
endif()
# NCCL ships inside the CUDA toolkit on some machines and as libnccl-dev on others; look in both places.
find_path(CUPLAN_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/include)
find_library(CUPLAN_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib)
if(CUPLAN_NCCL_INCLUDE_DIR AND CUPLAN_NCCL_LIBRARY)
  set(CUPLAN_NCCL_FOUND TRUE)
else()
  set(CUPLAN_NCCL_FOUND FALSE)
endif()

if(CUPLAN_PACKAGE_CONFIG)
  # The library links NCCL privately; a consumer needs nccl.h only to pass its own ncclComm_t.
  if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/cuplanDistributedTargets.cmake)
    include(${CMAKE_CURRENT_LIST_DIR}/cuplanDistributedTargets.cmake)
    set(cuplan_distributed_FOUND TRUE)
  else()
    set(cuplan_distributed_FOUND FALSE)
  endif()
  return()
endif()

option(CUPLAN_BUILD_DISTRIBUTED "Build the distributed FFT component (needs NCCL)" ${CUPLAN_NCCL_FOUND})
if(NOT CUPLAN_BUILD_DISTRIBUTED)
  message(STATUS "cuplan: distributed component off (NCCL found: ${CUPLAN_NCCL_FOUND})")
  return()
endif()
if(NOT CUPLAN_NCCL_FOUND)
  message(FATAL_ERROR "CUPLAN_BUILD_DISTRIBUTED is ON but NCCL (nccl.h, libnccl) was not found")
endif()
message(STATUS "cuplan: distributed component on (NCCL ${CUPLAN_NCCL_LIBRARY})")

if(NOT TARGET cuplan_nccl)
  add_library(cuplan_nccl INTERFACE)
  target_include_directories(cuplan_nccl SYSTEM INTERFACE ${CUPLAN_NCCL_INCLUDE_DIR})
  target_link_libraries(cuplan_nccl INTERFACE ${CUPLAN_NCCL_LIBRARY})
endif()

file(GLOB_RECURSE CUPLAN_DISTRIBUTED_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/src/distributed/*.cpp ${PROJECT_SOURCE_DIR}/src/distributed/*.cu)
# Same scheme as the core: one set of objects, a shared library for users and a static one for the tests.
add_library(cuplan_distributed_objects OBJECT ${CUPLAN_DISTRIBUTED_SOURCES})
set_target_properties(cuplan_distributed_objects PROPERTIES
  POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
target_include_directories(cuplan_distributed_objects
  PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<BUILD_INTERFACE:${CUPLAN_GENERATED_INCLUDE_DIR}>
  PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_include_directories(cuplan_distributed_objects SYSTEM PUBLIC $<BUILD_INTERFACE:${CUPLAN_CCCL_INCLUDE_DIR}>)
target_compile_definitions(cuplan_distributed_objects PUBLIC $<$<COMPILE_LANGUAGE:CUDA>:FMT_USE_CONSTEXPR=1>)
target_link_libraries(cuplan_distributed_objects PUBLIC CUDA::cudart fmt::fmt PRIVATE cuplan_nccl)
target_compile_options(cuplan_distributed_objects PRIVATE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
  $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-Wall>)

add_library(cuplan_distributed SHARED $<TARGET_OBJECTS:cuplan_distributed_objects>)
add_library(cuplan::distributed ALIAS cuplan_distributed)
# The same SOVERSION rule as the core library (cmake/cuplanVersion.cmake): libcuplan_distributed.so.0.1.
set_target_properties(cuplan_distributed PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION ${CUPLAN_SOVERSION}
  EXPORT_NAME distributed)
target_link_libraries(cuplan_distributed PUBLIC cuplan::cuplan PRIVATE $<BUILD_INTERFACE:cuplan_nccl>)

add_library(cuplan_distributed_internal STATIC $<TARGET_OBJECTS:cuplan_distributed_objects>)
target_include_directories(cuplan_distributed_internal PUBLIC ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(cuplan_distributed_internal PUBLIC cuplan_internal cuplan_nccl)

if(NOT CUPLAN_INSTALL)
  return()
endif()
include(GNUInstallDirs)
install(TARGETS cuplan_distributed EXPORT cuplanDistributedTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT cuplanDistributedTargets NAMESPACE cuplan:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cuplan)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/cuplanDistributed.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cuplan)
