#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CPU tests under AddressSanitizer + UndefinedBehaviorSanitizer, and the threaded tests under ThreadSanitizer,
# each in its own build tree (docs/dev/testing.md). Builds only the test executables it runs. Exit code: 0 when every
# test passed with no sanitizer report.
#
#   bash scripts/sanitize_cpu.sh            # both
#   bash scripts/sanitize_cpu.sh asan       # ASan + UBSan only
#   bash scripts/sanitize_cpu.sh tsan       # TSan only
#
# Environment: CUPLAN_SANITIZE_JOBS (build jobs, default 2), CUPLAN_CUDA_ARCHITECTURES (default 90-real),
# CUDA_HOME (default /usr/local/cuda), CUPLAN_SANITIZE_TARGETS (space-separated test targets to run instead of all
# of them, e.g. "fft_fft_misuse_test runtime_copy_test").
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
jobs="${CUPLAN_SANITIZE_JOBS:-2}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
which="${1:-all}"
supp="$repo_root/tests/sanitize"

log() { printf '==> %s\n' "$*"; }

# Test targets are <folder>_<file stem> (tests/CMakeLists.txt). The CPU tests are the .cpp ones; their GPU cases
# skip without a GPU. The threaded ones start threads themselves (std::thread) or run FFTW/OpenBLAS threads.
cpu_targets=()
while IFS= read -r file; do
  rel="${file#tests/}"
  cpu_targets+=("$(dirname "$rel" | tr / _)_$(basename "$rel" .cpp)")
done < <(git ls-files 'tests/*_test.cpp' | sort)
if [[ -n "${CUPLAN_SANITIZE_TARGETS:-}" ]]; then
  read -ra cpu_targets <<<"$CUPLAN_SANITIZE_TARGETS"
fi
threaded_targets=(plan_plan_cache_test plan_staging_chunking_test plan_threads_soak_test fft_fft_function_test
                  runtime_stream_scope_test fft_fft_misuse_test matmul_matmul_misuse_test)

configure() {  # build dir, sanitizer list
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" \
    -DCMAKE_CUDA_ARCHITECTURES="${CUPLAN_CUDA_ARCHITECTURES:-90-real}" -DCUPLAN_SANITIZE="$2" \
    -DCUPLAN_BUILD_SAMPLES=OFF -DCUPLAN_BUILD_BENCHMARKS=OFF -DCUPLAN_BUILD_TESTS=ON >/dev/null
}

run_all() {  # build dir, targets...
  local dir="$1" failed=() t exe
  shift
  for t in "$@"; do
    # Most tests build into tests/; a component's tests into a folder of their own (tests/distributed).
    exe="$dir/tests/$t"
    [[ -x "$exe" ]] || exe="$(find "$dir/tests" -name "$t" -type f -perm -u+x | head -n 1)"
    if ! "$exe" --gtest_brief=1 >"$dir/$t.log" 2>&1; then
      failed+=("$t")
      tail -40 "$dir/$t.log"
    fi
    grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$dir/$t.log" | sed "s/^/$t: /" || true
  done
  if ((${#failed[@]})); then
    echo "FAILED under sanitizers: ${failed[*]} (logs in $dir/<target>.log)"
    return 1
  fi
}

status=0
if [[ "$which" == all || "$which" == asan ]]; then
  log "ASan + UBSan: configuring build-asan"
  configure build-asan address,undefined
  log "building ${#cpu_targets[@]} CPU test targets"
  ninja -C build-asan -j"$jobs" "${cpu_targets[@]}"
  # protect_shadow_gap=0: the CUDA driver maps memory where ASan's shadow gap would be (GPU machines).
  # allocator_may_return_null=1: a nothrow allocation that cannot be served returns null, as without ASan, so the
  # tests of the OutOfMemory path run under ASan too.
  export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1:allocator_may_return_null=1"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  run_all build-asan "${cpu_targets[@]}" || status=1
fi
if [[ "$which" == all || "$which" == tsan ]]; then
  log "TSan: configuring build-tsan"
  configure build-tsan thread
  ninja -C build-tsan -j"$jobs" "${threaded_targets[@]}"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
  run_all build-tsan "${threaded_targets[@]}" || status=1
fi
exit $status
