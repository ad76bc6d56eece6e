#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over every GPU test executable and every sample of
# a built tree (docs/dev/testing.md). Needs a GPU. Prints the error count per tool; exit code 0 when every tool reports
# 0 errors and every program passes.
#
#   bash scripts/sanitize_gpu.sh [--build-dir build-gpu] [--tools memcheck,racecheck,synccheck,initcheck]
#                                [--jobs N] [--timeout SECONDS] [--programs REGEX] [--together]
#
# --programs: only the executables whose name matches the extended regular expression (default: all).
# --together: the tools run at once, each with its own N programs at a time (so N times the tools in all), instead
# of one tool after another; the long programs of each tool then overlap.
#
# Programs run N at a time (default 8; each is its own process and CUDA context on the same GPU), each under a
# time limit (default 900 s; a program that exceeds it counts as failed), the slowest of the tool's last run in this
# build directory first (a program with no time yet counts as slowest), so that a few long programs do not finish
# last; each tool's five slowest programs of this run are printed after its summary line. The sanitizer slows every launch and API
# call by orders of magnitude, so the tests' long loops run shortened (CUPLAN_TEST_SHORT=1: 200 soak cycles instead
# of 100,000, 6 calls per thread instead of 60, 1,000 stress operations instead of 10,000); every test still runs.
#
# A sample whose loop is long takes a smaller count from tests/sanitize/program_args.txt (one
# "<executable> <arguments>  # why" line each); its checks are the same. A program whose host memory under a tool
# nears the machine's runs alone, after every pool has finished, from tests/sanitize/program_alone.txt (one
# "<tool> <executable>  # why" line each), so that the kernel's out-of-memory killer does not stop it. A test program
# whose tests take long runs as several processes, each a share of its tests (GoogleTest's sharding), from
# tests/sanitize/program_shards.txt (one "<executable> <processes>  # why" line each); every share has its own log,
# and the program counts once in the summary, with the errors of all its shares.
# Deliberate failures are suppressed explicitly and only by test filter, in tests/sanitize/gpu_filters.txt (one
# "<tool> <executable> <gtest negative filter>  # why" line each). Reports raised inside a third-party library and
# handled there are suppressed by compute-sanitizer suppression files, tests/sanitize/<tool>.supp.xml, each record
# matching one library call and result. Reports are never switched off.
set -uo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
build_dir=build-gpu
tools=memcheck,racecheck,synccheck,initcheck
jobs=8
timeout_s=900
only=""
together=0
while (($#)); do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --tools) tools="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --programs) only="$2"; shift 2 ;;
    --together) together=1; shift ;;
    -h | --help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "sanitize_gpu.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
sanitizer="${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer"
[[ -x "$sanitizer" ]] || { echo "error: $sanitizer not found" >&2; exit 1; }
nvidia-smi -L >/dev/null 2>&1 || { echo "error: no GPU: compute-sanitizer needs one" >&2; exit 1; }
[[ -d "$build_dir/tests" ]] || { echo "error: $build_dir/tests missing: build first (scripts/gpu_suite.sh)" >&2; exit 1; }

filters="$repo_root/tests/sanitize/gpu_filters.txt"
program_args="$repo_root/tests/sanitize/program_args.txt"
args_for() {  # executable name -> its arguments under the sanitizer, one a line (none when not listed)
  awk -v exe="$1" '$1 == exe { sub(/#.*/, ""); for (i = 2; i <= NF; ++i) print $i }' "$program_args"
}
program_alone="$repo_root/tests/sanitize/program_alone.txt"
runs_alone() {  # tool, executable name -> exit code 0 when the program runs alone under that tool
  awk -v tool="$1" -v exe="$2" '$1 == tool && $2 == exe { found = 1 } END { exit !found }' "$program_alone"
}
program_shards="$repo_root/tests/sanitize/program_shards.txt"
entries_of() {  # executable -> what the pool runs for it, one a line: the executable, or "<executable>|<i>/<n>" per share
  local exe="$1" n i
  n=$(awk -v exe="$(basename "$exe")" '$1 == exe && $2 + 0 > 1 { n = $2 + 0 } END { print n + 0 }' "$program_shards")
  if ((n > 1)); then for ((i = 0; i < n; ++i)); do printf '%s|%d/%d\n' "$exe" "$i" "$n"; done; else printf '%s\n' "$exe"; fi
}
log_of() {  # tool, entry -> its log: <tool>.<executable>.log, or <tool>.<executable>.share<i>of<n>.log
  local tool="$1" entry="$2" share=""
  if [[ "$entry" == *"|"* ]]; then
    share="${entry##*|}"
    share=".share${share%/*}of${share#*/}"
    entry="${entry%|*}"
  fi
  printf '%s/%s.%s%s.log\n' "$logs" "$tool" "$(basename "$entry")" "$share"
}
filter_for() {  # tool, executable name -> gtest filter argument (empty when none)
  local f
  f=$(awk -v tool="$1" -v exe="$2" '$1 == tool && $2 == exe { print $3 }' "$filters" | paste -sd: -)
  [[ -n "$f" ]] && printf -- '--gtest_filter=-%s' "$f"
}

logs="$build_dir/sanitize"
mkdir -p "$logs"
programs=()
for exe in "$build_dir"/tests/*_test "$build_dir"/tests/*/*_test "$build_dir"/samples/*; do
  [[ -x "$exe" && -f "$exe" ]] || continue
  [[ -z "$only" ]] || basename "$exe" | grep -Eq -- "$only" || continue
  programs+=("$exe")
done

export CUPLAN_TEST_SHORT=1

run_one() {  # tool, entry (entries_of) -> writes <log> and <log>.rc
  local tool="$1" exe="$2" name log filter extra=() args=() shard=()
  log=$(log_of "$tool" "$exe")
  if [[ "$exe" == *"|"* ]]; then
    local share="${exe##*|}"
    shard=(GTEST_SHARD_INDEX="${share%/*}" GTEST_TOTAL_SHARDS="${share#*/}")
    exe="${exe%|*}"
  fi
  name=$(basename "$exe")
  rm -f "$log.rc"  # a run that never ends writes none: the summary counts it failed, not the last run's result
  [[ "$tool" == racecheck ]] && extra=(--racecheck-report all)
  # initcheck reads the NVTX marks cuplan leaves where a library kernel wrote memory the tool cannot follow
  # (a cuBLASLt result; src/base/nvtx_memory.hpp).
  [[ "$tool" == initcheck ]] && extra=(--nvtx yes)
  [[ -f "$supp_dir/$tool.supp.xml" ]] && extra+=(--suppressions "$supp_dir/$tool.supp.xml")
  mapfile -t args < <(args_for "$name")
  filter=$(filter_for "$tool" "$name")
  [[ -n "$filter" ]] && args+=("$filter")
  # application-only: the child processes some tests start (gtest death tests, second-process tests) run
  # unchecked; tracking a child that a checked process starts stalls the sanitizer (docs/dev/testing.md).
  local start=$SECONDS
  env "${shard[@]}" timeout --kill-after=30 "$timeout_s" "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 \
    --target-processes application-only \
    "${extra[@]}" "$exe" "${args[@]}" >"$log" 2>&1
  echo $? >"$log.rc"
  echo $((SECONDS - start)) >"$log.seconds"
}
slowest_first() {  # tool; entries on stdin, one a line -> the entries, the slowest of the tool's last run first
  local tool="$1" exe seconds
  while IFS= read -r exe; do
    seconds=$(cat "$(log_of "$tool" "$exe").seconds" 2>/dev/null || echo 999999)
    printf '%s\t%s\n' "$seconds" "$exe"
  done | sort -t$'\t' -k1,1nr | cut -f2
}
export -f run_one filter_for args_for log_of
supp_dir="$repo_root/tests/sanitize"
export sanitizer logs filters program_args timeout_s supp_dir

# The errors a log reports: its summary line (memcheck, synccheck and initcheck print "ERROR SUMMARY: N errors",
# racecheck "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)"); a program stopped before its summary
# (time limit, signal) counts the reports it printed, each a line "========= <what>" (backtrace lines are indented
# further; racecheck's "Error: Race reported ..." counts, its "Warning: ..." does not, as in its summary), less the
# tool's own lines (the banner, the summaries, "Error: ..." about the process itself).
reported_errors() {
  local log="$1" n
  n=$(grep -Eo "ERROR SUMMARY: [0-9]+|RACECHECK SUMMARY: [0-9]+ hazards displayed \([0-9]+ errors" "$log" | tail -1 |
    grep -Eo "[0-9]+" | tail -1)
  if [[ -z "$n" ]]; then
    n=$(grep -E "^========= [^ ]" "$log" |
      grep -cvE "^========= (COMPUTE-SANITIZER|Warning: |Error: process didn't|Error: Target application|Target application)|SUMMARY")
  fi
  echo "${n:-0}"
}

# Runs one tool over every program but those that run alone, --jobs at a time.
run_pool() {
  local tool="$1" exe
  for exe in "${programs[@]}"; do
    runs_alone "$tool" "$(basename "$exe")" || entries_of "$exe"
  done | slowest_first "$tool" | xargs -P "$jobs" -I{} bash -c 'run_one "$0" "$1"' "$tool" {}
}

# Prints one tool's summary; exit code 0 when it found no error and no program failed. A program run as shares
# counts once: its errors are those of every share, it failed if a share did (named with the share), and it is
# without CUDA calls only if every share is (a share can hold no test that reaches the GPU).
summarize() {
  local tool="$1" exe entry name log rc n errors=0 no_cuda=0 failed=() with_cuda
  for exe in "${programs[@]}"; do
    name=$(basename "$exe")
    with_cuda=0
    while IFS= read -r entry; do
      log=$(log_of "$tool" "$entry")
      rc=$(cat "$log.rc" 2>/dev/null || echo 1)
      # 77: a sample that needs what this machine lacks (reported as skipped, like ctest does); 124: time limit.
      # A program that never calls CUDA (a CPU-only test) has nothing to check: the sanitizer says so and exits 255.
      if [[ $rc -eq 255 ]] && grep -q "terminated before first instrumented API call" "$log"; then continue; fi
      with_cuda=$((with_cuda + 1))
      n=$(reported_errors "$log")
      errors=$((errors + n))
      if [[ $rc -ne 0 && $rc -ne 77 ]]; then
        [[ "$entry" == *"|"* ]] && name="$(basename "$exe")[${entry##*|}]"
        failed+=("$name(rc=$rc, errors=${n:-0})")
      fi
    done < <(entries_of "$exe")
    ((with_cuda == 0)) && no_cuda=$((no_cuda + 1))
  done
  echo "$tool: $errors error(s) over ${#programs[@]} programs ($no_cuda without CUDA calls)${failed:+; failed: ${failed[*]}}"
  echo "  $tool, slowest: $(for exe in "${programs[@]}"; do
    entries_of "$exe" | while IFS= read -r entry; do
      name=$(basename "${entry%|*}")
      [[ "$entry" == *"|"* ]] && name="${name}[${entry##*|}]"
      printf '%s %s\n' "$(cat "$(log_of "$tool" "$entry").seconds" 2>/dev/null || echo 0)" "$name"
    done
  done | sort -k1,1nr | head -5 | awk '{printf "%s%s %s s", (NR > 1 ? ", " : ""), $2, $1}')"
  ((errors == 0 && ${#failed[@]} == 0))
}

IFS=, read -ra tool_list <<<"$tools"
if ((together)); then
  # Each tool its own pool of --jobs programs, all tools at once.
  pids=()
  for tool in "${tool_list[@]}"; do
    run_pool "$tool" >"$logs/$tool.pool.out" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
else
  for tool in "${tool_list[@]}"; do run_pool "$tool"; done
fi
# Then the programs that run alone, one at a time with nothing else on the machine.
for tool in "${tool_list[@]}"; do
  for exe in "${programs[@]}"; do
    name=$(basename "$exe")
    runs_alone "$tool" "$name" || continue
    echo "$tool: $name runs alone (tests/sanitize/program_alone.txt)"
    while IFS= read -r entry; do run_one "$tool" "$entry"; done < <(entries_of "$exe")
  done
done
status=0
for tool in "${tool_list[@]}"; do summarize "$tool" || status=1; done
echo "logs: $logs"
exit $status
