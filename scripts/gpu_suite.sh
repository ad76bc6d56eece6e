#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build for Hopper and run the whole test suite on a machine with a GPU, then (with --bench) the benchmarks.
# Logs go to $1 (default: build-gpu/logs). Usage: scripts/gpu_suite.sh [LOG_DIR] [--bench] [--quick] [--sanitize]
# --sanitize: afterwards, compute-sanitizer over the tests and samples (scripts/sanitize_gpu.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
logs=build-gpu/logs
bench=0; quick=""; sanitize=0
for arg in "$@"; do
  case "$arg" in
    --bench) bench=1 ;;
    --quick) quick="--quick" ;;
    --sanitize) sanitize=1 ;;
    *) logs="$arg" ;;
  esac
done
mkdir -p "$logs"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/gpu.txt"
cmake -S . -B build-gpu -G Ninja -DCMAKE_CUDA_ARCHITECTURES=${CUPLAN_CUDA_ARCHITECTURES:-90-real} \
  -DCUPLAN_BUILD_BENCHMARKS=ON -DCUPLAN_BUILD_TESTS=ON -DCUPLAN_STRICT_WARNINGS=ON >"$logs/configure.log" 2>&1 || { tail -50 "$logs/configure.log"; exit 1; }
cmake --build build-gpu -j"$(nproc)" -- -k 0 >"$logs/build.log" 2>&1 || { echo "BUILD FAILED (continuing with what built):"; grep -E "error" "$logs/build.log" | head -40; }
ctest --test-dir build-gpu --output-on-failure -j4 --timeout 600 >"$logs/ctest.log" 2>&1
status=$?
grep -E "tests passed|tests failed|Failed|\*\*\*|Not Run|Skipped" "$logs/ctest.log" | tail -40
if [ "$bench" = 1 ]; then
  for exe in build-gpu/bench/*_bench; do
    [ -x "$exe" ] || continue
    name=$(basename "$exe")
    echo "== $name"
    "$exe" $quick 2>&1 | tee "$logs/$name.txt" | tail -40
  done
fi
if [ "$sanitize" = 1 ]; then
  bash scripts/sanitize_gpu.sh --build-dir build-gpu 2>&1 | tee "$logs/sanitize.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
exit $status
