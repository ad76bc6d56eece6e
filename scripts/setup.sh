#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what is missing, configures, builds the library and the samples, and runs every sample. The tests and
# benchmarks are not built here: scripts/test.sh builds and runs them.
#
#   bash scripts/setup.sh              # install + configure + build library and samples + run the samples
#   bash scripts/setup.sh --no-samples # install + configure + build only
#   bash scripts/setup.sh --with-tests # also build the tests and benchmarks (used by scripts/test.sh)
#
# Environment:
#   CUPLAN_CUDA_ARCHITECTURES  CUDA architectures to build for (default: the project's, 80 and 90 plus PTX)
#   CUPLAN_BUILD_DIR           build directory (default: build)
#   CUPLAN_BUILD_TYPE          CMake build type (default: Release)
#   CUDA_HOME                  CUDA toolkit (default: /usr/local/cuda)
#   CUPLAN_ENABLE_CUDA         OFF: the CPU-only library (no CUDA toolkit used: CUDA directories are taken off PATH
#                              for the build; the default, ON, needs nvcc)
#   CUPLAN_STRICT_WARNINGS     ON: tests, samples and benchmarks build with -Wall -Wextra -Wpedantic -Wshadow
#                              -Werror (default: OFF here; scripts/test.sh turns it on)
#   CUPLAN_MATHDX              OFF: do not fetch MathDx (cuFFTDx headers for the fused convolution kernels); the
#                              default fetches nvidia-mathdx (pinned version) into .deps/ when missing
#   CUPLAN_MATHDX_ROOT         an installed MathDx (the folder holding include/cufftdx.hpp): used, nothing fetched
#   CUPLAN_MATHDX_WHEEL        a downloaded nvidia_mathdx-25.6.0-py3-none-any.whl to unpack instead of fetching it
#   CUPLAN_FUSED_FFT_LENGTHS   the lengths whose fused kernels are compiled ahead of time (CMake list; default all)
#   CUPLAN_FUSED_BLOCK_SHAPES  the whole-transform convolution tiles compiled ahead of time (CMake list, e.g.
#                              "32x32;16x16x16"; set and empty: none; unset: CMake's default)
set -euo pipefail

run_samples=1
with_tests=OFF
for arg in "$@"; do
  case "$arg" in
    --no-samples) run_samples=0 ;;
    --with-tests) with_tests=ON ;;
    -h | --help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (expected --no-samples or --with-tests)" >&2; exit 2 ;;
  esac
done

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
build_dir="${CUPLAN_BUILD_DIR:-build}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
cpu_only=0
source "$repo_root/scripts/cuda_off.sh"
if cuplan_is_off "${CUPLAN_ENABLE_CUDA:-ON}"; then
  cpu_only=1
  cuplan_hide_cuda  # the CPU-only build must not find any CUDA tool while it configures, builds and tests
fi
jobs="$(nproc 2>/dev/null || echo 2)"

log() { printf '==> %s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# ---- 1. Debian packages: install only the missing ones -------------------------------------------------------
required_packages=(cmake ninja-build g++ pkg-config libfmt-dev libgtest-dev libfftw3-dev
                   libopenblas-dev doxygen)  # doxygen: the API reference and its test docs.reference
optional_packages=(libdlpack-dev gnuplot-nox libopenmpi-dev openmpi-bin)  # a DLPack header for the test comparing it with cuplan's own declarations; gnuplot: scripts/bench_report.sh plots; Open MPI: the test of cuplan/distributed_mpi.hpp under mpiexec

is_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

install_missing_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    warn "not a Debian/Ubuntu system: install cmake, ninja, g++, fmt, GoogleTest, FFTW, OpenBLAS and doxygen yourself"
    return 0
  fi
  local missing_required=() missing_optional=() p
  for p in "${required_packages[@]}"; do is_installed "$p" || missing_required+=("$p"); done
  for p in "${optional_packages[@]}"; do is_installed "$p" || missing_optional+=("$p"); done
  if ((${#missing_required[@]} == 0 && ${#missing_optional[@]} == 0)); then
    log "all packages present"
    return 0
  fi

  local sudo=()
  if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "missing packages (${missing_required[*]} ${missing_optional[*]}) and not root: install them or run as root"
    sudo=(sudo)
  fi
  local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -q)
  log "installing missing packages: ${missing_required[*]} ${missing_optional[*]}"
  if ! "${apt[@]}" update </dev/null; then
    ((${#missing_required[@]} == 0)) || die "apt-get update failed; cannot install ${missing_required[*]}"
    warn "apt-get update failed; continuing without ${missing_optional[*]}"
    return 0
  fi
  if ((${#missing_required[@]} > 0)); then
    "${apt[@]}" install --no-install-recommends "${missing_required[@]}" </dev/null ||
      die "could not install ${missing_required[*]}"
  fi
  for p in "${missing_optional[@]}"; do
    "${apt[@]}" install --no-install-recommends "$p" </dev/null || warn "optional package $p not installed; continuing without it"
  done
}

# ---- 2. MathDx (cuFFTDx), optional -------------------------------------------------------------------------
# The fused convolution kernels are built on cuFFTDx, whose headers come in the nvidia-mathdx wheel under NVIDIA's
# Math Libraries SDK license: they are never part of this repository. The wheel (pinned) is unpacked into the
# ignored prefix .deps/mathdx-<version>; without it (no network, no pip) the library builds without the fused route.
mathdx_version=25.6.0
mathdx_prefix="$repo_root/.deps/mathdx-$mathdx_version"
mathdx_root=""
fetch_mathdx() {
  if [[ -n "${CUPLAN_MATHDX_ROOT:-}" ]]; then
    mathdx_root="$CUPLAN_MATHDX_ROOT"
    return 0
  fi
  case "${CUPLAN_MATHDX:-ON}" in OFF | off | 0 | FALSE | false | NO | no) return 0 ;; esac
  ((cpu_only)) && return 0  # the kernels need nvcc
  if [[ -f "$mathdx_prefix/nvidia/mathdx/include/cufftdx.hpp" ]]; then
    mathdx_root="$mathdx_prefix/nvidia/mathdx"
    return 0
  fi
  local tmp wheel
  tmp="$(mktemp -d)"
  if [[ -n "${CUPLAN_MATHDX_WHEEL:-}" ]]; then  # a wheel downloaded elsewhere (a machine without network)
    log "unpacking $CUPLAN_MATHDX_WHEEL (cuFFTDx headers, NVIDIA license) into $mathdx_prefix"
    wheel="$CUPLAN_MATHDX_WHEEL"
  else
    log "fetching nvidia-mathdx==$mathdx_version (cuFFTDx headers, NVIDIA license) into $mathdx_prefix"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$tmp" "nvidia-mathdx==$mathdx_version" \
      </dev/null || true
    wheel="$(ls "$tmp"/nvidia_mathdx-"$mathdx_version"-*.whl 2>/dev/null | head -n 1 || true)"
  fi
  if [[ -f "$wheel" ]] && python3 -m zipfile -e "$wheel" "$mathdx_prefix.partial" &&
     [[ -f "$mathdx_prefix.partial/nvidia/mathdx/include/cufftdx.hpp" ]]; then
    rm -rf "$mathdx_prefix" && mv "$mathdx_prefix.partial" "$mathdx_prefix"
    mathdx_root="$mathdx_prefix/nvidia/mathdx"
  else
    rm -rf "$mathdx_prefix.partial"
    warn "nvidia-mathdx==$mathdx_version could not be fetched: building without the fused convolution route"
  fi
  rm -rf "$tmp"
}

# ---- 3. Configure and build ----------------------------------------------------------------------------------
configure_and_build() {
  local args=(-S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${CUPLAN_BUILD_TYPE:-Release}"
              -DCUPLAN_BUILD_TESTS="$with_tests" -DCUPLAN_BUILD_BENCHMARKS="$with_tests" -DCUPLAN_BUILD_SAMPLES=ON)
  if ((cpu_only)); then
    args+=(-DCUPLAN_ENABLE_CUDA=OFF)
  else
    [[ -x "$cuda_home/bin/nvcc" ]] || command -v nvcc >/dev/null 2>&1 ||
      die "no CUDA toolkit: expected nvcc in $cuda_home/bin (set CUDA_HOME) or on PATH; or set CUPLAN_ENABLE_CUDA=OFF for the CPU-only library"
    args+=(-DCUPLAN_ENABLE_CUDA=ON)
    [[ -x "$cuda_home/bin/nvcc" ]] && args+=(-DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc")
    [[ -n "${CUPLAN_CUDA_ARCHITECTURES:-}" ]] && args+=(-DCMAKE_CUDA_ARCHITECTURES="$CUPLAN_CUDA_ARCHITECTURES")
    [[ -n "$mathdx_root" ]] && args+=(-DCUPLAN_MATHDX_ROOT="$mathdx_root")
    [[ -n "${CUPLAN_FUSED_FFT_LENGTHS:-}" ]] && args+=(-DCUPLAN_FUSED_FFT_LENGTHS="$CUPLAN_FUSED_FFT_LENGTHS")
    [[ -n "${CUPLAN_FUSED_BLOCK_SHAPES+set}" ]] && args+=(-DCUPLAN_FUSED_BLOCK_SHAPES="$CUPLAN_FUSED_BLOCK_SHAPES")
  fi
  [[ -n "${CUPLAN_STRICT_WARNINGS:-}" ]] && args+=(-DCUPLAN_STRICT_WARNINGS="$CUPLAN_STRICT_WARNINGS")
  # A build directory made by another generator cannot be reused with Ninja.
  if [[ -f "$build_dir/CMakeCache.txt" ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$build_dir/CMakeCache.txt"; then
    die "$build_dir was configured with another generator; remove it or set CUPLAN_BUILD_DIR"
  fi
  log "configuring in $build_dir"
  cmake "${args[@]}"
  if [[ "$with_tests" == OFF ]] && ((run_samples)); then
    # A first result as soon as the library and one sample are built (FFT of a host array: runs with or without a
    # GPU), before the other samples build.
    log "building the library and a first sample (fft_host_blocking) with $jobs parallel jobs"
    cmake --build "$build_dir" --parallel "$jobs" --target fft_host_blocking
    log "first result (samples/fft_host_blocking.cpp):"
    "$build_dir/samples/fft_host_blocking" || warn "the first sample failed; the full sample run below shows it again"
  fi
  if [[ "$with_tests" == ON ]]; then
    log "building the library, samples, tests and benchmarks with $jobs parallel jobs"
  else
    log "building the library and the samples with $jobs parallel jobs (scripts/test.sh builds the tests)"
  fi
  cmake --build "$build_dir" --parallel "$jobs"
}

# ---- 4. Samples ----------------------------------------------------------------------------------------------
# Asks the CUDA runtime itself (the one cuplan links) whether a usable device exists. Needs no driver: without one
# the runtime answers with an error and the probe reports no device. nvidia-smi answers only if the probe cannot be
# built.
gpu_name() {
  local probe="$build_dir/cuplan_gpu_probe"
  if [[ -x "$probe" ]] || g++ -std=c++17 -x c++ - -o "$probe" -I"$cuda_home/include" -L"$cuda_home/lib64" \
       -Wl,-rpath,"$cuda_home/lib64" -lcudart >/dev/null 2>&1 <<'CPP'
#include <cstdio>
#include <cuda_runtime_api.h>
int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return 1;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return 1;
  std::printf("%s\n", prop.name);
  return 0;
}
CPP
  then
    "$probe" 2>/dev/null
  else
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null
  fi
}

run_all_samples() {
  local name
  if ((cpu_only)); then
    echo "CPU-only build: samples run on the CPU; the GPU-only samples (.cu) are not built"
  elif name="$(gpu_name)" && [[ -n "$name" ]]; then
    echo "GPU found: samples run on CUDA device 0 ($name)"
  else
    echo "No GPU found: samples run on the CPU; GPU-only samples are skipped"
  fi
  ctest --test-dir "$build_dir" -L sample --output-on-failure
}

install_missing_packages
fetch_mathdx
configure_and_build
if ((run_samples)); then
  run_all_samples
fi
