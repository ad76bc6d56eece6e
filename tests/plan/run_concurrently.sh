#!/usr/bin/env bash
# Runs COPIES processes of one GPU test at once, ROUNDS times. Other processes time-slice the GPU, which widens
# ordering windows that one process alone rarely opens (docs/misuse.md, "Threads and soak": a transform that ran
# before cuFFT's own plan setup failed here in 54 of 180 runs and never alone).
# Usage: run_concurrently.sh EXE GTEST_FILTER COPIES ROUNDS. Exit 77 (skipped) when the test skips (no GPU).
set -u
if [ $# -ne 4 ]; then
  echo "usage: $0 EXE GTEST_FILTER COPIES ROUNDS" >&2
  exit 2
fi
exe=$1 filter=$2 copies=$3 rounds=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for ((round = 1; round <= rounds; round++)); do
  pids=()
  for ((copy = 1; copy <= copies; copy++)); do
    "$exe" --gtest_filter="$filter" >"$dir/$copy.log" 2>&1 &
    pids+=($!)
  done
  failed=0
  for ((copy = 1; copy <= copies; copy++)); do
    if ! wait "${pids[copy - 1]}"; then
      failed=1
      echo "round $round, copy $copy of $copies failed:"
      tail -40 "$dir/$copy.log"
    fi
  done
  if [ "$failed" = 0 ] && grep -q "^\[  SKIPPED \]" "$dir/1.log"; then
    grep -m1 -A1 ": Skipped$" "$dir/1.log"
    exit 77
  fi
  [ "$failed" = 0 ] || exit 1
  for ((copy = 1; copy <= copies; copy++)); do
    if ! grep -q "^\[  PASSED  \] 1 test" "$dir/$copy.log"; then
      echo "round $round, copy $copy: expected the filter to select one test that passes, got:"
      tail -5 "$dir/$copy.log"
      exit 1
    fi
  done
done
echo "$((copies * rounds)) runs passed ($rounds rounds of $copies processes at once)"
