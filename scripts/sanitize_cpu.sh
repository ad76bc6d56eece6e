#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every CPU test and every CPU sample under AddressSanitizer + UndefinedBehaviorSanitizer, and again under
# ThreadSanitizer, each sanitizer in its own build tree (docs/dev/testing.md). The library itself is built with the
# sanitizer in each tree (CUPLAN_SANITIZE applies to every target), so reports inside libcuplan are seen. Builds
# only the library and the programs it runs, and runs those programs a few at a time (each with its own log). Exit
# code: 0 when every program passed with no sanitizer report.
#
# The trees are CUDA builds unless CUPLAN_SANITIZE_CUDA=OFF: then they are CPU-only builds (CUPLAN_ENABLE_CUDA=OFF,
# no CUDA directory on PATH) and build and run the CPU tests and samples that a CPU-only build has. CI does that
# (.ci/run), for about 30 % less time: it leaves out of the sanitizers the CUDA build's host code and the CPU tests
# that exist only with CUDA (the distributed component's, most of the NVRTC compilation of FFT callbacks), which a
# CUDA tree runs (docs/dev/testing.md).
#
#   bash scripts/sanitize_cpu.sh            # both
#   bash scripts/sanitize_cpu.sh asan       # ASan + UBSan only
#   bash scripts/sanitize_cpu.sh tsan       # TSan only
#
# Environment: CUPLAN_SANITIZE_CUDA (ON, the default: CUDA trees; OFF: CPU-only trees), CUPLAN_SANITIZE_JOBS (build
# jobs, and programs run at once; default 2), CUPLAN_CUDA_ARCHITECTURES (CUDA trees; default 90-real), CUDA_HOME
# (default /usr/local/cuda), CUPLAN_SANITIZE_CODEGEN (optimisation and debug-info flags of the trees, a CMake list;
# default the CMake option's, -Og;-g1), CUPLAN_SANITIZE_TARGETS (space-separated test or sample targets to run
# instead of all of them, e.g. "fft_fft_misuse_test runtime_copy_test fft_host_blocking").
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
jobs="${CUPLAN_SANITIZE_JOBS:-2}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
which="${1:-all}"
supp="$repo_root/tests/sanitize"
cuda=1
source "$repo_root/scripts/cuda_off.sh"
if cuplan_is_off "${CUPLAN_SANITIZE_CUDA:-ON}"; then
  cuda=0
  cuplan_hide_cuda  # as for the CPU-only build of scripts/setup.sh
fi

log() { printf '==> %s\n' "$*"; }

# Test targets are <folder>_<file stem> (tests/CMakeLists.txt). The CPU tests are the .cpp ones; their GPU cases
# skip without a GPU; the tests under tests/*/mpi/ are left out (they run only under mpiexec, see
# tests/distributed/CMakeLists.txt, and their target is built only where MPI is found). The CPU samples are the .cpp ones of samples/ (target: the file stem); they run as a user runs
# them (exit 77: needs a GPU, skipped).
cpu_targets=()
while IFS= read -r file; do
  rel="${file#tests/}"
  cpu_targets+=("$(dirname "$rel" | tr / _)_$(basename "$rel" .cpp)")
done < <(git ls-files --cached --others --exclude-standard 'tests/*_test.cpp' | grep -v '/mpi/' | sort)
while IFS= read -r file; do
  cpu_targets+=("$(basename "$file" .cpp)")
done < <(git ls-files --cached --others --exclude-standard 'samples/*.cpp' | sort)
if [[ -n "${CUPLAN_SANITIZE_TARGETS:-}" ]]; then
  read -ra cpu_targets <<<"$CUPLAN_SANITIZE_TARGETS"
fi

configure() {  # build dir, sanitizer list
  local codegen=() kind=()
  [[ -n "${CUPLAN_SANITIZE_CODEGEN:-}" ]] && codegen=(-DCUPLAN_SANITIZE_CODEGEN="$CUPLAN_SANITIZE_CODEGEN")
  if ((cuda)); then
    kind=(-DCUPLAN_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc"
          -DCMAKE_CUDA_ARCHITECTURES="${CUPLAN_CUDA_ARCHITECTURES:-90-real}" -DCUPLAN_ENABLE_FUSED_FFT=OFF)
  else
    kind=(-DCUPLAN_ENABLE_CUDA=OFF)
  fi
  # A tree configured as the other kind (CUDA or CPU-only) is configured afresh.
  if [[ -f "$1/CMakeCache.txt" ]] &&
     ! grep -qx "CUPLAN_ENABLE_CUDA:BOOL=$( ((cuda)) && echo ON || echo OFF)" "$1/CMakeCache.txt"; then
    log "$1 was configured with the other CUPLAN_ENABLE_CUDA: configuring it afresh"
    rm -rf "$1/CMakeCache.txt" "$1/CMakeFiles"
  fi
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release "${kind[@]}" -DCUPLAN_SANITIZE="$2" "${codegen[@]}" \
    -DCUPLAN_BUILD_SAMPLES=ON -DCUPLAN_BUILD_BENCHMARKS=OFF -DCUPLAN_BUILD_TESTS=ON >/dev/null
}

# The targets a tree has: in a CPU-only tree, the CPU tests and samples that exist only with CUDA are named and left
# out; a CUDA tree has every one, and a missing one stops the build.
targets_of() {  # build dir, targets...
  local dir="$1" t missing=()
  shift
  if ((cuda)); then
    printf '%s\n' "$@"
    return 0
  fi
  local have
  have="$(ninja -C "$dir" -t targets all | sed -n 's/^\([^/:]*\): phony$/\1/p')"
  for t in "$@"; do
    if grep -qx -- "$t" <<<"$have"; then echo "$t"; else missing+=("$t"); fi
  done
  ((${#missing[@]} == 0)) || log "not in a CPU-only build (CUDA only), left out: ${missing[*]}" >&2
}

run_one() {  # build dir, target: runs one program; writes "<exit status> <seconds> <sample: 1, test: 0>" to
  local dir="$1" t="$2" exe start=$SECONDS status=0 sample=0  # <dir>/<target>.status
  # Most tests build into tests/; a component's tests into a folder of their own (tests/distributed); samples
  # into samples/, and run without arguments (exit 77: needs a GPU, skipped).
  exe="$dir/tests/$t"
  [[ -x "$exe" ]] || exe="$(find "$dir/tests" "$dir/samples" -name "$t" -type f -perm -u+x | head -n 1)"
  [[ "$exe" == "$dir/samples/"* ]] && sample=1
  if ((sample)); then
    "$exe" >"$dir/$t.log" 2>&1 || status=$?
  else
    "$exe" --gtest_brief=1 >"$dir/$t.log" 2>&1 || status=$?
  fi
  echo "$status $((SECONDS - start)) $sample" >"$dir/$t.status"
}

run_all() {  # build dir, targets...
  local dir="$1" failed=() t status seconds sample start=$SECONDS
  shift
  # $jobs programs at a time (one at a time left part of the 2-core CI host idle); the results are reported
  # afterwards, in the order of the targets.
  for t in "$@"; do rm -f "$dir/$t.status"; done
  for t in "$@"; do
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
    run_one "$dir" "$t" &
  done
  wait
  for t in "$@"; do
    status=1 seconds="?" sample=0
    # No status file: the runner itself failed; that is a failure.
    if [[ -f "$dir/$t.status" ]]; then read -r status seconds sample <"$dir/$t.status"; fi
    if ((sample)); then
      echo "$t: sample exit $status$( ((status == 77)) && echo ' (needs a GPU: skipped)') (${seconds} s)"
      if ((status == 77)); then status=0; fi
    else
      echo "$t: exit $status (${seconds} s)"
    fi
    if ((status != 0)); then
      failed+=("$t")
      tail -40 "$dir/$t.log" 2>/dev/null || true
    fi
    grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$dir/$t.log" 2>/dev/null | sed "s/^/$t: /" || true
  done
  log "ran $# programs in $((SECONDS - start)) s, $jobs at a time"
  if ((${#failed[@]})); then
    echo "FAILED under sanitizers: ${failed[*]} (logs in $dir/<target>.log)"
    return 1
  fi
}

status=0
if [[ "$which" == all || "$which" == asan ]]; then
  log "ASan + UBSan: configuring build-asan"
  start=$SECONDS
  configure build-asan address,undefined
  mapfile -t targets < <(targets_of build-asan "${cpu_targets[@]}")
  ((${#targets[@]})) || { echo "FAILED: no program to build in build-asan"; exit 1; }
  log "building the library and ${#targets[@]} CPU tests and samples ($( ((cuda)) && echo CUDA || echo CPU-only) tree)"
  # Checked by hand: a caller's `|| status=1` turns set -e off in here, and a failed build must not run old programs.
  if ! ninja -C build-asan -j"$jobs" "${targets[@]}"; then
    echo "FAILED: building build-asan"
    exit 1
  fi
  log "build-asan: configured and built in $((SECONDS - start)) s"
  # protect_shadow_gap=0: the CUDA driver maps memory where ASan's shadow gap would be (GPU machines).
  # allocator_may_return_null=1: a nothrow allocation that cannot be served returns null, as without ASan, so the
  # tests of the OutOfMemory path run under ASan too.
  export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1:allocator_may_return_null=1"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  run_all build-asan "${targets[@]}" || status=1
fi
if [[ "$which" == all || "$which" == tsan ]]; then
  log "TSan: configuring build-tsan"
  start=$SECONDS
  configure build-tsan thread
  mapfile -t targets < <(targets_of build-tsan "${cpu_targets[@]}")
  ((${#targets[@]})) || { echo "FAILED: no program to build in build-tsan"; exit 1; }
  log "building the library and ${#targets[@]} CPU tests and samples ($( ((cuda)) && echo CUDA || echo CPU-only) tree)"
  # Checked by hand: a caller's `|| status=1` turns set -e off in here, and a failed build must not run old programs.
  if ! ninja -C build-tsan -j"$jobs" "${targets[@]}"; then
    echo "FAILED: building build-tsan"
    exit 1
  fi
  log "build-tsan: configured and built in $((SECONDS - start)) s"
  # allocator_may_return_null=1: as for ASan, the tests of the OutOfMemory path (a nothrow allocation that cannot be
  # served) run here too.
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1:suppressions=$supp/tsan.supp"
  run_all build-tsan "${targets[@]}" || status=1
fi
exit $status
