#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (tests/fuzz) with clang under ASan+UBSan in build-fuzz and runs each for a set time,
# starting from the committed corpus (tests/fuzz/corpus/<target>, copied: the committed one is left as it is).
# Exit code 0 when no target found a crash; crash inputs are left in build-fuzz/artifacts/<target>/.
#
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET]      # default 60
#
# Environment: CUPLAN_FUZZ_JOBS (build jobs, default 2), CUDA_HOME (default /usr/local/cuda).
# Needs clang and its libFuzzer runtime (Debian: clang, libclang-rt-14-dev); installed here when missing.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
seconds="${1:-60}"
jobs="${CUPLAN_FUZZ_JOBS:-2}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
targets=(fuzz_fft fuzz_matmul fuzz_tensor_view)
# fuzz_distributed exists where the distributed component is built (NCCL found); added below once configured.

# Optional packages of this script only (the library and its tests build with g++).
fuzz_packages=(clang libclang-rt-14-dev)
missing=()
for p in "${fuzz_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=()
  [[ "$(id -u)" == 0 ]] || sudo=(sudo)
  echo "==> installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -q install "${missing[@]}" </dev/null
fi

cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" -DCMAKE_CUDA_ARCHITECTURES="${CUPLAN_CUDA_ARCHITECTURES:-90-real}" \
  -DCUPLAN_FUZZ=ON -DCUPLAN_SANITIZE=address,undefined -DCUPLAN_BUILD_TESTS=OFF -DCUPLAN_BUILD_SAMPLES=OFF \
  -DCUPLAN_BUILD_BENCHMARKS=OFF >/dev/null
# grep reads all of ninja's list (no -q): ninja must not die of a closed pipe under pipefail.
if ninja -C build-fuzz -t targets all | grep '^fuzz_distributed:' >/dev/null; then targets+=(fuzz_distributed); fi
ninja -C build-fuzz -j"$jobs" "${targets[@]}"

# allocator_may_return_null=1: a nothrow allocation that cannot be served returns null, as without ASan, so the
# library's OutOfMemory path runs instead of ASan ending the process.
export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=1:halt_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$repo_root/tests/sanitize/lsan.supp:print_suppressions=0"
status=0
for t in "${targets[@]}"; do
  work="build-fuzz/corpus/$t"
  artifacts="build-fuzz/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  cp -n "tests/fuzz/corpus/$t"/* "$work"/ 2>/dev/null || true
  echo "==> $t for ${seconds}s"
  if ! "build-fuzz/tests/fuzz/$t" "$work" -max_total_time="$seconds" -max_len=512 -timeout=20 \
      -artifact_prefix="$artifacts/" -print_final_stats=1 >"build-fuzz/$t.log" 2>&1; then
    status=1
    echo "$t: FOUND A CRASH (input in $artifacts/):"
    grep -E "ERROR|SUMMARY|runtime error" "build-fuzz/$t.log" | head -10
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added" "build-fuzz/$t.log" | sed "s/^/$t: /"
done
exit $status
