# SPDX-License-Identifier: Apache-2.0
# The API reference (docs/Doxyfile.in): target `docs` builds HTML from the /// comments of the public headers into
# <build>/docs/reference/html, with docs/index.md as the main page and the other pages of docs/ beside it. Any
# doxygen warning, an undocumented public symbol first of all, fails the build of the target; the test
# docs.reference (tests/CMakeLists.txt) runs the same check in the test suite.
find_package(Doxygen QUIET)
if(NOT DOXYGEN_FOUND)
  message(STATUS "cuplan: doxygen not found, no 'docs' target (API reference); scripts/setup.sh installs it")
  return()
endif()

function(cuplan_configure_doxyfile output_dir doxyfile)
  set(CUPLAN_DOXYGEN_OUTPUT_DIR ${output_dir})
  configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${doxyfile} @ONLY)
endfunction()

cuplan_configure_doxyfile(${PROJECT_BINARY_DIR}/docs/reference ${PROJECT_BINARY_DIR}/docs/Doxyfile)
file(GLOB CUPLAN_DOCS_INPUTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/cuplan/*.hpp
  ${PROJECT_SOURCE_DIR}/docs/*.md ${PROJECT_SOURCE_DIR}/docs/dev/*.md ${PROJECT_SOURCE_DIR}/docs/reference/*.dox)
# The stamp is written only when doxygen succeeds, so that a failed run is repeated by the next build.
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/docs/reference/doxygen.stamp
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/docs/reference
  COMMAND Doxygen::doxygen ${PROJECT_BINARY_DIR}/docs/Doxyfile
  COMMAND ${CMAKE_COMMAND} -E touch ${PROJECT_BINARY_DIR}/docs/reference/doxygen.stamp
  DEPENDS ${CUPLAN_DOCS_INPUTS} ${PROJECT_BINARY_DIR}/docs/Doxyfile
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  COMMENT "API reference (doxygen; any warning is an error)"
  VERBATIM)
# Inside a parent project (add_subdirectory) the target is cuplan_docs, so that it cannot clash with the parent's own.
if(PROJECT_IS_TOP_LEVEL)
  set(CUPLAN_DOCS_TARGET docs)
else()
  set(CUPLAN_DOCS_TARGET cuplan_docs)
endif()
add_custom_target(${CUPLAN_DOCS_TARGET} DEPENDS ${PROJECT_BINARY_DIR}/docs/reference/doxygen.stamp)
