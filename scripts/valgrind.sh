#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The lifetime and misuse tests under valgrind's memcheck (docs/dev/lifetimes.md): invalid reads and writes, uses of
# uninitialised values and definite leaks inside cuplan are errors. Run it for every change to a lifetime rule.
# Builds only the test executables it runs, in the normal build tree. Exit code: 0 when every program passed with
# 0 errors.
#
#   bash scripts/valgrind.sh                  # the default list below
#   bash scripts/valgrind.sh runtime_lifetime_test matmul_matmul_misuse_test
#
# Environment: CUPLAN_BUILD_DIR (default build; configured by scripts/setup.sh --no-samples when missing),
# CUPLAN_VALGRIND_JOBS (build jobs, default 2). On a GPU machine the CUDA driver's own allocations show as
# errors, so the programs run with CUDA_VISIBLE_DEVICES= there (the CPU rows; compute-sanitizer covers the GPU).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
build_dir="${CUPLAN_BUILD_DIR:-build}"
supp="$repo_root/tests/sanitize/valgrind.supp"

command -v valgrind >/dev/null 2>&1 || { echo "valgrind.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }

# The OpenBLAS thread-count test is left out: its 8,000 products, serialised by valgrind, take over 20 minutes, and
# what it checks is a race, which scripts/sanitize_cpu.sh's TSan run covers.
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(runtime_lifetime_test runtime_moved_from_test runtime_tensor_misuse_test runtime_stream_scope_test
           runtime_host_stream_test fft_fft_misuse_test matmul_matmul_misuse_test plan_read_only_test
           base_log_test fft_fftw_threads_test)
fi

[[ -f "$build_dir/build.ninja" ]] || CUPLAN_BUILD_DIR="$build_dir" bash scripts/setup.sh --no-samples
ninja -C "$build_dir" -j"${CUPLAN_VALGRIND_JOBS:-2}" "${targets[@]}"

failed=()
for t in "${targets[@]}"; do
  exe="$build_dir/tests/$t"
  log="$build_dir/$t.valgrind.log"
  # --error-exitcode: any memcheck error (definite leaks included) fails the program; the test's own failures
  # fail it with gtest's exit code.
  if CUDA_VISIBLE_DEVICES="" valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
       --errors-for-leak-kinds=definite --show-leak-kinds=definite --track-origins=yes \
       --suppressions="$supp" --log-file="$log" "$exe" --gtest_brief=1 >"$log.out" 2>&1; then
    status=0
  else
    status=$?
  fi
  summary="$(grep -E "ERROR SUMMARY" "$log" | tail -n 1 | sed 's/^==[0-9]*== //')"
  echo "$t: exit $status, $summary"
  if ((status != 0)); then
    failed+=("$t")
    tail -n 30 "$log.out"
  fi
done
if ((${#failed[@]})); then
  echo "FAILED under valgrind: ${failed[*]} (logs in $build_dir/<target>.valgrind.log)"
  exit 1
fi
echo "valgrind: ${#targets[@]} programs, 0 errors"
