#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs COPIES processes of one GPU test at once, ROUNDS times. Other processes time-slice the GPU, which widens
# ordering windows that one process alone rarely opens (docs/dev/testing.md, "Threads and soak": a transform that ran
# before cuFFT's own plan setup failed here in 54 of 180 runs and never alone).
# Usage: run_concurrently.sh EXE GTEST_FILTER COPIES ROUNDS [ROUND_LIMIT_S]. Exit 77 (skipped) when the test skips
# (no GPU). A copy still running ROUND_LIMIT_S seconds (default 120) after its round began is a hang: its threads'
# stacks are printed (cuda-gdb or gdb, else each thread's kernel wait channel), it is killed, and the run fails.
set -u
if [ $# -lt 4 ] || [ $# -gt 5 ]; then
  echo "usage: $0 EXE GTEST_FILTER COPIES ROUNDS [ROUND_LIMIT_S]" >&2
  exit 2
fi
exe=$1 filter=$2 copies=$3 rounds=$4 limit=${5:-120}
dir=$(mktemp -d)
pids=()
trap 'kill -9 "${pids[@]}" 2>/dev/null; rm -rf "$dir"' EXIT

print_stacks() {  # pid
  local pid=$1 debugger="" task
  for candidate in cuda-gdb gdb; do
    if command -v "$candidate" >/dev/null 2>&1; then
      debugger=$candidate
      break
    fi
  done
  if [ -n "$debugger" ]; then
    timeout 120 "$debugger" -batch -p "$pid" -ex "info threads" -ex "thread apply all bt 24" 2>&1 | tail -400
  else
    for task in /proc/"$pid"/task/*; do
      echo "thread ${task##*/} ($(cat "$task/comm" 2>/dev/null)): waits in $(cat "$task/wchan" 2>/dev/null)"
    done
  fi
}

for ((round = 1; round <= rounds; round++)); do
  pids=()
  for ((copy = 1; copy <= copies; copy++)); do
    "$exe" --gtest_filter="$filter" >"$dir/$copy.log" 2>&1 &
    pids+=($!)
  done
  start=$SECONDS
  hung=0
  while :; do
    running=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && running=1; done
    [ "$running" = 0 ] && break
    if ((SECONDS - start >= limit)); then
      hung=1
      break
    fi
    sleep 0.2
  done
  if [ "$hung" = 1 ]; then
    for ((copy = 1; copy <= copies; copy++)); do
      pid=${pids[copy - 1]}
      kill -0 "$pid" 2>/dev/null || continue
      echo "round $round, copy $copy of $copies (pid $pid) still running after ${limit} s: a hang. Its stacks:"
      print_stacks "$pid"
      kill -9 "$pid" 2>/dev/null
      echo "its output:"
      tail -40 "$dir/$copy.log"
    done
    exit 1
  fi
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
