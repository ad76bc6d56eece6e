#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks scripts/sanitize_gpu.sh's bookkeeping without a GPU: a stand-in compute-sanitizer and nvidia-smi run stand-in
# programs of a fake build tree, and the summary lines must count what each tool's log reports (racecheck's own
# summary line, the reports of a program stopped at its time limit, racecheck's errors but not its warnings), pass
# tests/sanitize/program_args.txt's arguments, count a program without CUDA calls as such, and print the tools'
# summaries in order with --together, run tests/sanitize/program_alone.txt's programs alone after every pool, and run
# tests/sanitize/program_shards.txt's programs as shares of their tests that count as one program.
set -uo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/cuda/bin" "$work/bin" "$work/build/tests/plan" "$work/build/tests/r2r" "$work/build/samples"

cat >"$work/cuda/bin/compute-sanitizer" <<'SANITIZER'
#!/usr/bin/env bash
tool=""
while [[ "$1" == --* ]]; do
  case "$1" in
    --tool) tool="$2"; shift 2 ;;
    *) shift 2 ;;
  esac
done
echo "========= COMPUTE-SANITIZER"
if [[ "$(basename "$1")" == cpu_only_test || "${GTEST_SHARD_INDEX:-}" == "${FAKE_NO_CUDA_SHARE:-none}" ]]; then
  echo "========= Error: Target application terminated before first instrumented API call"
  exit 255
fi
"$@"
rc=$?
if [[ $tool == racecheck ]]; then
  echo "========= RACECHECK SUMMARY: 2 hazards displayed (${FAKE_RACE_ERRORS:-0} errors, 2 warnings)"
else
  echo "========= ERROR SUMMARY: 0 errors"
fi
exit $rc
SANITIZER
printf '#!/usr/bin/env bash\nexit 0\n' >"$work/bin/nvidia-smi"
# The sample echoes its arguments; the slow test prints two reports (each with an indented frame) and outlives its
# limit; the CPU-only test never reaches the GPU.
printf '#!/usr/bin/env bash\necho "args: $*"\n' >"$work/build/samples/batched_small_matmul"
cat >"$work/build/tests/slow_test" <<'PROGRAM'
#!/usr/bin/env bash
for i in 1 2; do
  echo "========= Uninitialized __global__ memory read of size 8 bytes"
  echo "=========     at k()"
done
sleep 8
PROGRAM
# racecheck's hazards: an error and a warning, each with its second line; then the limit.
cat >"$work/build/tests/racy_test" <<'PROGRAM'
#!/usr/bin/env bash
echo "========= Error: Race reported between Write access at k()+0x10"
echo "=========     and Read access at k()+0x20 [4 hazards]"
echo "========= Warning: Race reported between Read access at k()+0x30"
echo "=========     and Write access at k()+0x40 [2 hazards]"
sleep 8
PROGRAM
printf '#!/usr/bin/env bash\nexit 0\n' >"$work/build/tests/plan/cpu_only_test"
# Listed in program_alone.txt for racecheck: it says whether a test program is running beside it.
cat >"$work/build/samples/matmul_autotune_loop" <<PROGRAM
#!/usr/bin/env bash
if grep -qs "$work/build/tests/" /proc/[0-9]*/cmdline; then echo "alone: no"; else echo "alone: yes"; fi
PROGRAM
# Listed in program_shards.txt (4 shares): says which share it is; share 2 has a failing test.
cat >"$work/build/tests/r2r/r2r_r2r_fused_gpu_test" <<'PROGRAM'
#!/usr/bin/env bash
echo "share ${GTEST_SHARD_INDEX:-none} of ${GTEST_TOTAL_SHARDS:-none}"
[[ "${GTEST_SHARD_INDEX:-}" != 2 ]]
PROGRAM
chmod +x "$work/build/tests/r2r/r2r_r2r_fused_gpu_test"
chmod +x "$work"/cuda/bin/* "$work"/bin/* "$work"/build/samples/* "$work"/build/tests/*_test "$work"/build/tests/plan/cpu_only_test

fail=0
expect() {  # text, pattern, what
  if grep -Eq -- "$2" <<<"$1"; then echo "ok: $3"; else echo "FAILED: $3: no line matching '$2' in:"; echo "$1"; fail=1; fi
}
run() { PATH="$work/bin:$PATH" CUDA_HOME="$work/cuda" bash "$repo_root/scripts/sanitize_gpu.sh" --build-dir "$work/build" "$@"; }

out=$(FAKE_RACE_ERRORS=3 run --tools racecheck,initcheck --jobs 3 --timeout 2 --together --programs 'batched|slow|cpu_only')
rc=$?
# racecheck: the sample's summary line says 3 errors; the stopped test printed 2 reports.
expect "$out" "^racecheck: 5 error\(s\) over 3 programs \(1 without CUDA calls\); failed: slow_test\(rc=124, errors=2\)" \
  "racecheck's errors are read from its own summary line"
expect "$out" "^initcheck: 2 error\(s\) over 3 programs \(1 without CUDA calls\); failed: slow_test\(rc=124, errors=2\)" \
  "a program stopped at its limit counts the reports it printed"
expect "$(sed -n 1p <<<"$out")" "^racecheck:" "--together prints the summaries in the order given"
out_racy=$(run --tools racecheck --timeout 2 --programs racy)
expect "$out_racy" "^racecheck: 1 error\(s\) over 1 programs \(0 without CUDA calls\); failed: racy_test\(rc=124, errors=1\)" \
  "a stopped program's racecheck errors count, its warnings do not"
expect "$rc" "^1$" "exit code 1 when a tool found errors"
expect "$(cat "$work/build/sanitize/initcheck.batched_small_matmul.log")" "^args: 2000$" \
  "the sample gets its arguments from program_args.txt"

out=$(run --tools racecheck,initcheck --jobs 4 --timeout 3 --together --programs 'autotune|slow|racy')
expect "$out" "^racecheck: matmul_autotune_loop runs alone" "a program of program_alone.txt is named when it runs"
expect "$(cat "$work/build/sanitize/racecheck.matmul_autotune_loop.log")" "^alone: yes$" \
  "a program of program_alone.txt runs after every tool's pool, with nothing beside it"
expect "$(cat "$work/build/sanitize/initcheck.matmul_autotune_loop.log")" "^alone: (yes|no)$" \
  "under a tool it is not listed for, it runs too (in the pool)"
expect "$out" "^racecheck: 3 error\(s\) over 3 programs \(0 without CUDA calls\); failed: racy_test\(rc=124, errors=1\) slow_test" \
  "the program run alone is counted in its tool's summary"

out=$(FAKE_RACE_ERRORS=1 FAKE_NO_CUDA_SHARE=3 run --tools racecheck,memcheck --jobs 2 --together --programs 'r2r_fused')
for i in 0 1 2; do  # share 3 has no CUDA calls here
  expect "$(cat "$work/build/sanitize/memcheck.r2r_r2r_fused_gpu_test.share${i}of4.log" 2>&1)" "^share $i of 4$" \
    "share $i of a program of program_shards.txt runs with its own log"
done
expect "$out" "^racecheck: 3 error\(s\) over 1 programs \(0 without CUDA calls\); failed: r2r_r2r_fused_gpu_test\[2/4\]\(rc=1, errors=1\)$" \
  "a program run as shares counts once, with every share's errors, the failing share named"
expect "$out" "^  racecheck, slowest: r2r_r2r_fused_gpu_test\[[0-3]/4\] [0-9]+ s" "the slowest list names shares"
out=$(FAKE_NO_CUDA_SHARE=0 run --tools memcheck --programs 'r2r_fused|cpu_only')
expect "$out" "^memcheck: 0 error\(s\) over 2 programs \(1 without CUDA calls\); failed: r2r_r2r_fused_gpu_test\[2/4\]" \
  "a share without CUDA calls leaves its program counted with CUDA"

out=$(run --tools memcheck --programs 'batched|cpu_only')
rc=$?
expect "$out" "^memcheck: 0 error\(s\) over 2 programs \(1 without CUDA calls\)$" "a clean run has no failed program"
expect "$rc" "^0$" "exit code 0 when every tool is clean"
exit $fail
