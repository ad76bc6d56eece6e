# SPDX-License-Identifier: Apache-2.0
# Install rules (option CUPLAN_INSTALL): the shared library with its SONAME link, the public headers, the CMake
# package (relocatable: no absolute path in it) and a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS cuplan EXPORT cuplanTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/cuplan DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${CUPLAN_GENERATED_INCLUDE_DIR}/cuplan/config.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cuplan)
install(EXPORT cuplanTargets NAMESPACE cuplan:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cuplan)
configure_package_config_file(cmake/cuplanConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/cuplanConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cuplan)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cuplanConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/cuplanConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/cuplanConfigVersion.cmake
  cmake/cuplanCuda20.cmake
  cmake/cuplanFftCallback.cmake
  cmake/cuplanEmbedBytes.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cuplan)

# pkg-config: paths of this package relative to the .pc file's own location, so the prefix can move. The CUDA
# toolkit is outside the prefix; pkg-config --define-variable=cuda_prefix=DIR points at another one. A CPU-only
# build's file names no CUDA path at all.
file(RELATIVE_PATH CUPLAN_PC_PREFIX_FROM_PC "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
if(CUPLAN_ENABLE_CUDA)
  get_filename_component(CUPLAN_PC_CUDA_PREFIX "${CUDAToolkit_BIN_DIR}" DIRECTORY)
  file(RELATIVE_PATH CUPLAN_PC_CCCL_SUFFIX "${CUPLAN_PC_CUDA_PREFIX}" "${CUPLAN_CCCL_INCLUDE_DIR}")
  # CUDAToolkit_INCLUDE_DIRS may be a list (the toolkit's include directory and its cccl subdirectory): take the
  # one that holds the runtime's header.
  find_path(CUPLAN_CUDA_RUNTIME_INCLUDE_DIR cuda_runtime_api.h HINTS ${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
  file(RELATIVE_PATH CUPLAN_PC_CUDA_INCLUDE_SUFFIX "${CUPLAN_PC_CUDA_PREFIX}" "${CUPLAN_CUDA_RUNTIME_INCLUDE_DIR}")
  file(RELATIVE_PATH CUPLAN_PC_CUDA_LIB_SUFFIX "${CUPLAN_PC_CUDA_PREFIX}" "${CUDAToolkit_LIBRARY_DIR}")
  set(CUPLAN_PC_CUDA_VARIABLES "cuda_prefix=${CUPLAN_PC_CUDA_PREFIX}")
  set(CUPLAN_PC_CUDA_CFLAGS
    " -I\${cuda_prefix}/${CUPLAN_PC_CUDA_INCLUDE_SUFFIX} -isystem \${cuda_prefix}/${CUPLAN_PC_CCCL_SUFFIX}")
  set(CUPLAN_PC_CUDA_LIBS " -L\${cuda_prefix}/${CUPLAN_PC_CUDA_LIB_SUFFIX} -lcudart")
else()
  set(CUPLAN_PC_CUDA_VARIABLES "# CPU-only build (CUPLAN_ENABLE_CUDA=OFF): no CUDA toolkit")
  set(CUPLAN_PC_CUDA_CFLAGS "")
  set(CUPLAN_PC_CUDA_LIBS "")
endif()
configure_file(cmake/cuplan.pc.in ${CMAKE_CURRENT_BINARY_DIR}/cuplan.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cuplan.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
