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
