#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures the project as a machine without GoogleTest would (CMAKE_DISABLE_FIND_PACKAGE_GTest) and checks that
# the configuration succeeds, that the unit tests are absent, and that CTest reports them skipped with the reason
# (the test gtest.missing), while the checks that need no GoogleTest are still there.
#
#   bash tests/package/check_no_gtest.sh SOURCE_DIR BUILD_DIR
set -euo pipefail

source_dir="$(cd "${1:?usage: check_no_gtest.sh SOURCE_DIR BUILD_DIR}" && pwd)"
build_dir="$(cd "${2:?usage: check_no_gtest.sh SOURCE_DIR BUILD_DIR}" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/cuplan-no-gtest.XXXXXX")"
trap 'rm -rf "$work"' EXIT

args=(-S "$source_dir" -B "$work/build" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCUPLAN_BUILD_TESTS=ON
      -DCUPLAN_BUILD_SAMPLES=OFF -DCUPLAN_BUILD_BENCHMARKS=OFF)
command -v ninja >/dev/null 2>&1 && args+=(-G Ninja)
for variable in CUPLAN_ENABLE_CUDA CMAKE_CUDA_COMPILER CMAKE_CUDA_ARCHITECTURES; do
  value="$(sed -n "s/^$variable:[A-Z]*=//p" "$build_dir/CMakeCache.txt")"
  [[ -n "$value" ]] && args+=("-D$variable=$value")
done
echo "== configuring without GoogleTest"
cmake "${args[@]}" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; echo "FAILED: configure" >&2; exit 1; }
grep -q "GoogleTest not found" "$work/configure.log" ||
  { echo "FAILED: configuring said nothing about the missing GoogleTest" >&2; exit 1; }
tests="$(ctest --test-dir "$work/build" -N)"
grep -q "gtest.missing" <<<"$tests" || { echo "FAILED: no gtest.missing test" >&2; exit 1; }
grep -q "layering.includes" <<<"$tests" || { echo "FAILED: the checks without GoogleTest are gone too" >&2; exit 1; }
if grep -qE "runtime\\.|fft\\.|matmul\\." <<<"$tests"; then
  echo "FAILED: unit tests listed without GoogleTest" >&2
  exit 1
fi
output="$(ctest --test-dir "$work/build" -R '^gtest\.missing$' -V)"
if ! grep -q "skipped: GoogleTest was not found" <<<"$output"; then
  echo "$output"
  echo "FAILED: no reason given" >&2
  exit 1
fi
if ! grep -q "Skipped" <<<"$output"; then
  echo "$output"
  echo "FAILED: not reported skipped" >&2
  exit 1
fi
echo "== without GoogleTest: configured, unit tests reported skipped with the reason"
