# SPDX-License-Identifier: Apache-2.0
# cuplan_strict_warnings(target): the warning set a careful consumer builds with, as errors, when
# CUPLAN_STRICT_WARNINGS is on (CI turns it on). Host code through the C++ compiler, and the host side of CUDA
# sources through nvcc -Xcompiler. Tests, samples, benchmarks and the package consumers use it, so the public headers
# are checked from a consumer's point of view.
set(CUPLAN_STRICT_CXX_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Werror)
# Without -Wpedantic for nvcc's host pass: it fires on the `# 12 "file.cu"` line markers nvcc itself writes into
# the host code it generates ("style of line directive is a GCC extension"), never on the user's code.
set(CUPLAN_STRICT_CUDA_HOST_FLAGS -Wall -Wextra -Wshadow -Werror)
function(cuplan_strict_warnings target)
  if(NOT CUPLAN_STRICT_WARNINGS)
    return()
  endif()
  list(JOIN CUPLAN_STRICT_CUDA_HOST_FLAGS "," host_flags)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${CUPLAN_STRICT_CXX_FLAGS}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${host_flags}>)
endfunction()

# cuplan_add_programs(OUT_NAMES SOURCE...): one program per source, named after it, with the consumer's strict
# warnings and the CUDA flags the programs use (device lambdas, constexpr host functions in device code); a
# distributed_* source only where the distributed component is built. OUT_NAMES receives the programs made, for the
# caller's libraries and tests.
function(cuplan_add_programs out_names)
  set(names)
  foreach(source ${ARGN})
    get_filename_component(name ${source} NAME_WE)
    if(name MATCHES "^distributed_" AND NOT TARGET cuplan_distributed)
      continue()
    endif()
    add_executable(${name} ${source})
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda --expt-relaxed-constexpr>)
    cuplan_strict_warnings(${name})
    list(APPEND names ${name})
  endforeach()
  set(${out_names} ${names} PARENT_SCOPE)
endfunction()
