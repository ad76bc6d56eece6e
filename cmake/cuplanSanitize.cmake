# SPDX-License-Identifier: Apache-2.0
# CUPLAN_SANITIZE: build host code with compiler sanitizers for the CPU path (docs/dev/testing.md).
#   address | undefined | thread | address,undefined
# Host C++ gets -fsanitize directly; CUDA files get it for their host code through -Xcompiler, so they still build
# (device code is not instrumented: compute-sanitizer covers it, scripts/sanitize_gpu.sh).
set(CUPLAN_SANITIZE "" CACHE STRING "Sanitizers for host code: address, undefined, thread or address,undefined")
# -Og with line tables is what the sanitizers' reports need (file:line stacks), and every check is still compiled in;
# it compiles the sanitizer trees faster than -O1 (about half the time of a test file under ASan+UBSan, a quarter
# less under TSan; docs/dev/testing.md), and -O1 about three times faster than the Release -O3 -g. Building them is
# most of the CI's time. Set it to "-g" (or anything) to debug.
set(CUPLAN_SANITIZE_CODEGEN "-Og;-g1" CACHE STRING "Optimisation and debug-info flags of a sanitizer build")

if(CUPLAN_SANITIZE)
  string(REPLACE "," ";" _cuplan_sanitizers "${CUPLAN_SANITIZE}")
  foreach(_s IN LISTS _cuplan_sanitizers)
    if(NOT _s MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "CUPLAN_SANITIZE: expected address, undefined, thread or address,undefined, got '${_s}'")
    endif()
  endforeach()
  if("thread" IN_LIST _cuplan_sanitizers AND "address" IN_LIST _cuplan_sanitizers)
    message(FATAL_ERROR "CUPLAN_SANITIZE: thread cannot be combined with address (got '${CUPLAN_SANITIZE}')")
  endif()
  set(_cuplan_flags "-fsanitize=${CUPLAN_SANITIZE}" -fno-omit-frame-pointer ${CUPLAN_SANITIZE_CODEGEN})
  if("undefined" IN_LIST _cuplan_sanitizers)
    # A UBSan report fails the test that triggered it instead of scrolling by.
    list(APPEND _cuplan_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_cuplan_flags}>")
  # nvcc splits -Xcompiler values at commas: one -fsanitize per sanitizer for the host compiler of CUDA files.
  foreach(_s IN LISTS _cuplan_sanitizers)
    add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fsanitize=${_s}>")
  endforeach()
  foreach(_f IN LISTS _cuplan_flags)
    if(NOT _f MATCHES "^-fsanitize=")
      add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${_f}>")
    endif()
  endforeach()
  add_link_options("-fsanitize=${CUPLAN_SANITIZE}")
  message(STATUS "cuplan: host code built with -fsanitize=${CUPLAN_SANITIZE}")
endif()

# Fuzzing: coverage instrumentation for the library's host C++ (the fuzz targets link libFuzzer itself).
if(CUPLAN_FUZZ)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>")
endif()
