#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over every GPU test executable and every sample of
# a built tree (docs/misuse.md). Needs a GPU. Prints the error count per tool; exit code 0 when every tool reports
# 0 errors and every program passes.
#
#   bash scripts/sanitize_gpu.sh [--build-dir build-gpu] [--tools memcheck,racecheck,synccheck,initcheck]
#                                [--jobs N] [--timeout SECONDS]
#
# Programs run N at a time (default 8; each is its own process and CUDA context on the same GPU), each under a
# time limit (default 900 s; a program that exceeds it counts as failed). The 100,000-cycle soak runs 2,000 cycles
# under the sanitizer (CUPLAN_SOAK_CYCLES), which slows every launch by orders of magnitude.
#
# Deliberate failures are suppressed explicitly and only by test filter, in tests/sanitize/gpu_filters.txt (one
# "<tool> <executable> <gtest negative filter>  # why" line each); reports are never switched off.
set -uo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
build_dir=build-gpu
tools=memcheck,racecheck,synccheck,initcheck
jobs=8
timeout_s=900
while (($#)); do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --tools) tools="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "sanitize_gpu.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
sanitizer="${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer"
[[ -x "$sanitizer" ]] || { echo "error: $sanitizer not found" >&2; exit 1; }
nvidia-smi -L >/dev/null 2>&1 || { echo "error: no GPU: compute-sanitizer needs one" >&2; exit 1; }
[[ -d "$build_dir/tests" ]] || { echo "error: $build_dir/tests missing: build first (scripts/gpu_suite.sh)" >&2; exit 1; }

filters="$repo_root/tests/sanitize/gpu_filters.txt"
filter_for() {  # tool, executable name -> gtest filter argument (empty when none)
  local f
  f=$(awk -v tool="$1" -v exe="$2" '$1 == tool && $2 == exe { print $3 }' "$filters" | paste -sd: -)
  [[ -n "$f" ]] && printf -- '--gtest_filter=-%s' "$f"
}

logs="$build_dir/sanitize"
mkdir -p "$logs"
programs=()
for exe in "$build_dir"/tests/*_test "$build_dir"/tests/*/*_test "$build_dir"/samples/*; do
  [[ -x "$exe" && -f "$exe" ]] && programs+=("$exe")
done

export CUPLAN_SOAK_CYCLES="${CUPLAN_SOAK_CYCLES:-2000}"

run_one() {  # tool, executable -> writes <log> and <log>.rc
  local tool="$1" exe="$2" name log filter extra=() args=()
  name=$(basename "$exe")
  log="$logs/$tool.$name.log"
  [[ "$tool" == racecheck ]] && extra=(--racecheck-report all)
  filter=$(filter_for "$tool" "$name")
  [[ -n "$filter" ]] && args+=("$filter")
  timeout --kill-after=30 "$timeout_s" "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 \
    "${extra[@]}" "$exe" "${args[@]}" >"$log" 2>&1
  echo $? >"$log.rc"
}
export -f run_one filter_for
export sanitizer logs filters timeout_s

status=0
IFS=, read -ra tool_list <<<"$tools"
for tool in "${tool_list[@]}"; do
  printf '%s\n' "${programs[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$0" "$1"' "$tool" {}
  errors=0 failed=() no_cuda=0
  for exe in "${programs[@]}"; do
    name=$(basename "$exe")
    log="$logs/$tool.$name.log"
    rc=$(cat "$log.rc" 2>/dev/null || echo 1)
    n=$(grep -Eo "ERROR SUMMARY: [0-9]+" "$log" | tail -1 | grep -Eo "[0-9]+" || echo 0)
    errors=$((errors + ${n:-0}))
    # 77: a sample that needs what this machine lacks (reported as skipped, like ctest does); 124: time limit.
    # A program that never calls CUDA (a CPU-only test) has nothing to check: the sanitizer says so and exits 255.
    if [[ $rc -eq 255 ]] && grep -q "terminated before first instrumented API call" "$log"; then
      no_cuda=$((no_cuda + 1))
      continue
    fi
    if [[ $rc -ne 0 && $rc -ne 77 ]]; then failed+=("$name(rc=$rc, errors=${n:-0})"); fi
  done
  echo "$tool: $errors error(s) over ${#programs[@]} programs ($no_cuda without CUDA calls)${failed:+; failed: ${failed[*]}}"
  ((errors == 0 && ${#failed[@]} == 0)) || status=1
done
echo "logs: $logs"
exit $status
