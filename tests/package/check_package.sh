#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs one consumer project (next to this script) against cuplan, the way users do:
#
#   bash tests/package/check_package.sh BUILD_DIR MODE
#
# MODE: cxx (find_package, plain C++), cuda (find_package before enable_language(CUDA)), moved (install, move the
# prefix, then find_package), subdirectory (add_subdirectory of the source tree). Every consumer program is built
# with -Wall -Wextra -Wpedantic -Wshadow -Werror and run; the cxx mode also checks the pkg-config file and the
# SONAME. Without a GPU the programs run their CPU paths. Against a CPU-only build (CUPLAN_ENABLE_CUDA=OFF) the
# consumers are configured with CMake's CUDAToolkit search disabled and no CUDA directory on PATH, and the cxx mode
# also checks that the library links nothing of CUDA and that the package names no CUDA path.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="$(cd "$here/../.." && pwd)"
build_dir="$(cd "${1:?usage: check_package.sh BUILD_DIR MODE}" && pwd)"
mode="${2:?usage: check_package.sh BUILD_DIR MODE}"
work="$(mktemp -d "${TMPDIR:-/tmp}/cuplan-package.XXXXXX")"
trap 'rm -rf "$work"' EXIT

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
cuda_enabled="$(sed -n 's/^CUPLAN_ENABLE_CUDA:[A-Z]*=//p' "$build_dir/CMakeCache.txt")"
cuda_args=()
arch=""
if [[ "$cuda_enabled" == OFF ]]; then
  [[ "$mode" == cuda ]] && { echo "check_package.sh: a CPU-only build has no CUDA consumer" >&2; exit 2; }
  # Nothing of CUDA may be needed: no toolkit search, no nvcc on PATH.
  cuda_args=(-DCUPLAN_ENABLE_CUDA=OFF -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
  PATH="$(tr ':' '\n' <<<"$PATH" | grep -v -i cuda | paste -sd: -)"
  export PATH
else
  [[ -x /usr/local/cuda/bin/nvcc ]] && cuda_args=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  arch="$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build_dir/CMakeCache.txt")"
  [[ -n "$arch" ]] && cuda_args+=(-DCMAKE_CUDA_ARCHITECTURES="$arch")
fi

configure=(cmake -S "$here" -B "$work/consumer" "${generator[@]}" -DCUPLAN_CONSUMER_MODE="$mode"
           -DCUPLAN_SOURCE_DIR="$source_dir")
prefix="$work/prefix"
case "$mode" in
  cxx | cuda | moved)
    echo "== installing $build_dir into $prefix"
    cmake --install "$build_dir" --prefix "$prefix" >/dev/null
    if [[ "$mode" == moved ]]; then
      mv "$prefix" "$work/moved-prefix"
      prefix="$work/moved-prefix"
      echo "== moved the installed prefix to $prefix"
      if grep -rl "$work/prefix" "$prefix" >/dev/null 2>&1; then
        echo "FAILED: the installed package names its original prefix:" >&2
        grep -rl "$work/prefix" "$prefix" >&2
        exit 1
      fi
    fi
    configure+=(-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release "${cuda_args[@]}")
    ;;
  subdirectory)
    # The library builds again inside the consumer: one length of the fused convolution kernels (where MathDx is
    # found) shows that they build there, at a seventh of their compile time. Without a GPU nothing runs the
    # consumer's kernels, so the first of the build's architectures shows that they build (the build itself compiled
    # every one): a third of the device code's compile time (on the 2-core build host this test took 250 s before, 218 s after).
    sub_args=("${cuda_args[@]}")
    if [[ "$arch" == *";"* ]] && ! nvidia-smi -L >/dev/null 2>&1; then
      sub_args+=(-DCMAKE_CUDA_ARCHITECTURES="${arch%%;*}")
      echo "== no GPU: the subdirectory build compiles its CUDA code for ${arch%%;*} only (the build has $arch)"
    fi
    configure+=("${sub_args[@]}" -DCUPLAN_CONSUMER_EXPECTED_BUILD_TYPE= -DCUPLAN_FUSED_FFT_LENGTHS=4096)
    ;;
  *) echo "check_package.sh: unknown mode '$mode' (cxx, cuda, moved, subdirectory)" >&2; exit 2 ;;
esac

echo "== configuring the $mode consumer"
"${configure[@]}"
echo "== building the $mode consumer"
# The consumer project lists its programs (the distributed ones where the package has cuplan::distributed).
IFS=';' read -r -a programs <"$work/consumer/programs.txt"
[[ "$mode" == cuda && " ${programs[*]} " != *" cuda_consumer "* ]] && { echo "FAILED: no cuda_consumer" >&2; exit 1; }
if [[ "$cuda_enabled" != OFF && "$mode" != subdirectory ]] && ls "$prefix"/lib*/libcuplan_distributed.so >/dev/null 2>&1 &&
  [[ " ${programs[*]} " != *" distributed_consumer "* ]]; then
  echo "FAILED: the package installs libcuplan_distributed but the consumer found no cuplan::distributed" >&2
  exit 1
fi
cmake --build "$work/consumer" --target "${programs[@]}" --parallel 2

IFS=';' read -r -a mpiexec <"$work/consumer/mpiexec.txt"
for program in "${programs[@]}"; do
  echo "== running $program"
  if [[ "$program" == distributed_mpi_consumer ]]; then
    # Open MPI refuses root and more processes than cores unless told.
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
      "${mpiexec[@]}" "$work/consumer/$program"
  else
    "$work/consumer/$program"
  fi
done

if [[ "$mode" == cxx ]]; then
  # FFTW and OpenBLAS are private to the shared library: the package must not ask a consumer for them.
  # Comments may say that they are private; no code line may name them.
  if grep -rhiE "fftw|openblas|cblas" "$prefix"/lib*/cmake/cuplan | grep -vE '^[[:space:]]*#'; then
    echo "FAILED: the installed CMake package refers to FFTW or OpenBLAS" >&2
    exit 1
  fi
  # The installed cuplan/config.hpp states the version; the SONAME follows it (major.minor while major is 0).
  config="$prefix/include/cuplan/config.hpp"
  [[ -f "$config" ]] || { echo "FAILED: $config was not installed" >&2; exit 1; }
  major="$(sed -n 's/^#define CUPLAN_VERSION_MAJOR \([0-9]*\)$/\1/p' "$config")"
  minor="$(sed -n 's/^#define CUPLAN_VERSION_MINOR \([0-9]*\)$/\1/p' "$config")"
  abi="$(sed -n 's/^#define CUPLAN_ABI_NAMESPACE \([a-z0-9_]*\)$/\1/p' "$config")"
  if [[ "$major" == 0 ]]; then expected_soname="libcuplan.so.0.$minor"; else expected_soname="libcuplan.so.$major"; fi
  for library in "$prefix"/lib*/libcuplan.so.*.*.* "$prefix"/lib*/libcuplan_distributed.so.*.*.*; do
    [[ -f "$library" ]] || continue
    soname="$(objdump -p "$library" | awk '/SONAME/ {print $2}')"
    expected="$expected_soname"
    [[ "$library" == */libcuplan_distributed.so.* ]] && expected="${expected_soname/libcuplan/libcuplan_distributed}"
    echo "== SONAME of $(basename "$library"): $soname"
    [[ "$soname" == "$expected" ]] || { echo "FAILED: expected SONAME $expected" >&2; exit 1; }
  done
  # Every exported C++ symbol of the core library and of the distributed component is in the inline ABI namespace
  # (cuplan::$abi).
  for library in "$prefix"/lib*/libcuplan.so.*.*.* "$prefix"/lib*/libcuplan_distributed.so.*.*.*; do
    [[ -f "$library" ]] || continue
    outside="$(nm -DC --defined-only "$library" | grep -E ' [TVWDBR] ' | grep -E 'cuplan::' |
               grep -vE "cuplan::$abi::" | grep -vE '^[0-9a-f]+ [A-Za-z] (typeinfo|vtable|VTT)' || true)"
    if [[ -n "$outside" ]]; then
      echo "FAILED: symbols of $(basename "$library") exported outside cuplan::$abi:" >&2
      echo "$outside" | head -20 >&2
      exit 1
    fi
    echo "== exported symbols of $(basename "$library"): all in cuplan::$abi"
  done
  library="$(ls "$prefix"/lib*/libcuplan.so.*.*.* | head -n1)"
  if [[ "$cuda_enabled" == OFF ]]; then
    grep -qx '#define CUPLAN_HAS_CUDA 0' "$config" || { echo "FAILED: config.hpp does not say CUPLAN_HAS_CUDA 0" >&2; exit 1; }
    if objdump -p "$library" | grep -E 'NEEDED' | grep -i -E 'cuda|cufft|cublas|nvrtc|nccl|nvToolsExt'; then
      echo "FAILED: the CPU-only library needs a CUDA library" >&2
      exit 1
    fi
    if ldd "$library" | grep -i cuda; then
      echo "FAILED: the CPU-only library loads a CUDA library" >&2
      exit 1
    fi
    # The exported targets and the pkg-config file: no CUDA target, library or directory.
    if grep -hiE 'CUDA::|cudart|cufft|cublas|cuda_prefix|cccl|/cuda' "$prefix"/lib*/cmake/cuplan/cuplanTargets*.cmake \
         "$prefix"/lib*/pkgconfig/cuplan.pc | grep -vE '^[[:space:]]*#'; then
      echo "FAILED: the CPU-only package names a CUDA target, library or directory" >&2
      exit 1
    fi
    echo "== CPU-only: CUPLAN_HAS_CUDA 0, no CUDA library needed or loaded, no CUDA path in the package"
  fi
  echo "== pkg-config"
  pc_dir="$(dirname "$(ls "$prefix"/lib*/pkgconfig/cuplan.pc)")"
  flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs cuplan)"
  echo "$flags"
  grep -qx 'Requires: fmt >= 9' "$pc_dir/cuplan.pc" || { echo "FAILED: cuplan.pc does not require fmt >= 9" >&2; exit 1; }
  # The same program built by hand from the pkg-config flags, with the strict warnings.
  g++ -std=c++20 -Wall -Wextra -Wpedantic -Wshadow -Werror "$here/main.cpp" -o "$work/pc_consumer" $flags \
    -Wl,-rpath,"$prefix/lib" -Wl,-rpath,"$(dirname "$(ls "$prefix"/lib*/libcuplan.so | head -n1)")"
  "$work/pc_consumer"
fi
if [[ "$mode" == cuda && -x /usr/local/cuda/bin/nvcc ]]; then
  # Plain nvcc without CMake, from the pkg-config flags: C++20 and fmt's constexpr setting must be all it needs.
  echo "== plain nvcc with pkg-config flags"
  pc_dir="$(dirname "$(ls "$prefix"/lib*/pkgconfig/cuplan.pc)")"
  flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs cuplan)"
  /usr/local/cuda/bin/nvcc -std=c++20 -arch=sm_"$(a="${arch:-90-real}"; echo "${a%%[-;]*}")" -Xcompiler=-Wall,-Wextra,-Wshadow,-Werror \
    "$here/cuda_main.cu" -o "$work/nvcc_consumer" $flags -Xlinker -rpath -Xlinker "$(dirname "$(ls "$prefix"/lib*/libcuplan.so)")"
  "$work/nvcc_consumer"
fi
echo "== $mode consumer: ok"
