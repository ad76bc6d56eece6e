#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CPU-only build (CUPLAN_ENABLE_CUDA=OFF) as CI runs it: configures, builds and runs the whole suite of that
# build (its CPU tests, the C++ samples, the package consumers with strict warnings and the other checks) through
# scripts/test.sh, in its own build tree, with every CUDA directory taken off PATH, and checks that the library links
# no CUDA library.
#
#   bash scripts/cpu_only.sh
#
# Environment: CUPLAN_CPU_ONLY_BUILD_DIR (default build-cpu-only); the rest as scripts/test.sh.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
build_dir="${CUPLAN_CPU_ONLY_BUILD_DIR:-build-cpu-only}"
start=$SECONDS

echo "==> CPU-only build in $build_dir (CUPLAN_ENABLE_CUDA=OFF; no CUDA directory on PATH)"
status=0
CUPLAN_ENABLE_CUDA=OFF CUPLAN_BUILD_DIR="$build_dir" CUPLAN_CI=0 bash scripts/test.sh || status=$?

# No CUDA compiler was used and no CUDA library is linked.
if ! grep -q '^CUPLAN_ENABLE_CUDA:BOOL=OFF$' "$build_dir/CMakeCache.txt"; then
  echo "FAILED: $build_dir is not a CPU-only build" >&2
  status=1
fi
if grep -E '^CMAKE_CUDA_COMPILER:' "$build_dir/CMakeCache.txt" | grep -v -E ':[A-Z]*=$'; then
  echo "FAILED: the CPU-only build found a CUDA compiler" >&2
  status=1
fi
library="$(ls "$build_dir"/src/libcuplan.so.*.*.* | head -n1)"
if ldd "$library" | grep -i cuda; then
  echo "FAILED: $library loads a CUDA library" >&2
  status=1
else
  echo "==> ldd $library: no CUDA library"
fi
echo "==> CPU-only build and suite: $((SECONDS - start)) s, status $status"
exit $status
