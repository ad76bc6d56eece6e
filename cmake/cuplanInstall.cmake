include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS cuplan EXPORT cuplanTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/cuplan DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT cuplanTargets NAMESPACE cuplan:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cuplan)
configure_package_config_file(cmake/cuplanConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/cuplanConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cuplan)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cuplanConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/cuplanConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/cuplanConfigVersion.cmake
  cmake/cuplanDependencies.cmake
  cmake/cuplanCuda20.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cuplan)
