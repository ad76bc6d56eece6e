# SPDX-License-Identifier: Apache-2.0
# cuplan_add_fft_callback: builds an FFT callback (docs/fft.md, "Callbacks") from a .cu file into LTO-IR with
# nvcc -dlto, and the bytes into a header, for FFTCallback::lto_ir. Installed with the package; a consumer gets it
# from find_package(cuplan) (or add_subdirectory).
#
#   cuplan_add_fft_callback(<name> SOURCE <file.cu> SYMBOL <function name> [ARCH <sm, e.g. 90>]
#                           [INCLUDE_DIRECTORIES <dir>...] [OPTIONS <nvcc option>...])
#
# Makes the interface library <name>: link it, then `#include "<name>.hpp"` declares
#   inline constexpr std::array<unsigned char, N> <name>_lto_ir   the LTO-IR (a fatbin of lto_<ARCH>)
#   inline constexpr const char* <name>_symbol                   the SYMBOL
# and pass them as cuplan::FFTCallback::lto_ir(<name>_lto_ir.data(), <name>_lto_ir.size(), <name>_symbol, data).
# ARCH defaults to the first entry of CMAKE_CUDA_ARCHITECTURES, else 80; the LTO-IR of an architecture also serves
# newer GPUs (cuFFT links it for the device it plans on). <cuplan/fft_callback_device.hpp> is on the include path.
# SYMBOL names a __device__ function at global namespace scope with C++ linkage (no extern "C"), of exactly the
# callback type's signature: cuFFT declares the callback by that name and links the declaration's C++ name.
include_guard(GLOBAL)

function(cuplan_add_fft_callback name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "SOURCE;SYMBOL;ARCH" "INCLUDE_DIRECTORIES;OPTIONS")
  if(NOT arg_SOURCE OR NOT arg_SYMBOL)
    message(FATAL_ERROR "cuplan_add_fft_callback(${name}): SOURCE and SYMBOL are required")
  endif()
  if(NOT arg_SYMBOL MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "cuplan_add_fft_callback(${name}): SYMBOL '${arg_SYMBOL}' must be the plain name of a __device__ function at global namespace scope (no namespace, no extern \"C\")")
  endif()
  if(NOT arg_ARCH)
    set(arg_ARCH 80)
    if(CMAKE_CUDA_ARCHITECTURES)
      list(GET CMAKE_CUDA_ARCHITECTURES 0 first_arch)
      string(REGEX MATCH "^[0-9]+" arg_ARCH "${first_arch}")
    endif()
  endif()
  set(nvcc "${CMAKE_CUDA_COMPILER}")
  if(NOT nvcc)
    find_package(CUDAToolkit REQUIRED)
    set(nvcc "${CUDAToolkit_NVCC_EXECUTABLE}")
  endif()
  if(NOT nvcc)
    message(FATAL_ERROR "cuplan_add_fft_callback(${name}): no nvcc (enable CUDA or install the CUDA toolkit)")
  endif()
  get_filename_component(source "${arg_SOURCE}" ABSOLUTE)
  # cuplan's headers: the installed package says where (cuplanConfig.cmake); in cuplan's own tree they are beside
  # this file's folder.
  set(module_dir "${CMAKE_CURRENT_FUNCTION_LIST_DIR}")
  if(DEFINED CUPLAN_FFT_CALLBACK_INCLUDE_DIR)
    set(cuplan_include "${CUPLAN_FFT_CALLBACK_INCLUDE_DIR}")
  else()
    get_filename_component(cuplan_include "${module_dir}/../include" ABSOLUTE)
  endif()
  set(includes -I${cuplan_include})
  foreach(dir ${arg_INCLUDE_DIRECTORIES})
    get_filename_component(dir "${dir}" ABSOLUTE)
    list(APPEND includes -I${dir})
  endforeach()
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/cuplan_fft_callbacks/${name}")
  set(fatbin "${out_dir}/${name}.fatbin")
  set(header "${out_dir}/${name}.hpp")
  add_custom_command(OUTPUT "${header}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${out_dir}"
    COMMAND "${nvcc}" -std=c++17 -rdc=true -fatbin -gencode=arch=compute_${arg_ARCH},code=lto_${arg_ARCH}
            ${includes} ${arg_OPTIONS} "${source}" -o "${fatbin}"
    COMMAND ${CMAKE_COMMAND} -DINPUT=${fatbin} -DOUTPUT=${header} -DNAME=${name} -DSYMBOL=${arg_SYMBOL}
            -DSOURCE=${arg_SOURCE} -DARCH=${arg_ARCH} -P "${module_dir}/cuplanEmbedBytes.cmake"
    DEPENDS "${source}" "${module_dir}/cuplanEmbedBytes.cmake"
    IMPLICIT_DEPENDS CXX "${source}"
    COMMENT "cuplan FFT callback ${name}: nvcc -dlto (lto_${arg_ARCH}) ${arg_SOURCE}"
    VERBATIM)
  add_custom_target(${name}_lto_ir DEPENDS "${header}")
  add_library(${name} INTERFACE)
  target_include_directories(${name} INTERFACE "${out_dir}")
  add_dependencies(${name} ${name}_lto_ir)
endfunction()
