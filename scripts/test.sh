#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the whole test suite (unit tests, GPU tests, samples). Installs, configures and builds the library, samples,
# tests and benchmarks first when needed, through scripts/setup.sh --no-samples --with-tests. GPU tests and GPU
# samples report "skipped" on a machine without a GPU. The exit code is ctest's.
#
# Environment: as scripts/setup.sh (CUPLAN_BUILD_DIR, CUPLAN_CUDA_ARCHITECTURES, CUPLAN_BUILD_TYPE, CUDA_HOME),
# plus CUPLAN_TEST_JOBS (parallel tests, default 2). Tests, samples and benchmarks build with warnings as errors
# (CUPLAN_STRICT_WARNINGS=ON unless set otherwise), as in CI. With CUPLAN_CI=1 (set by .ci/run) the CPU tests and
# samples then run again under ASan+UBSan and under TSan (scripts/sanitize_cpu.sh, separate build trees, CPU-only
# builds where CUPLAN_SANITIZE_CUDA=OFF, as .ci/run sets it), and
# the CPU-only build (CUPLAN_ENABLE_CUDA=OFF, scripts/cpu_only.sh, its own build tree) builds and runs its suite.
# CUPLAN_ENABLE_CUDA=OFF runs this script on the CPU-only build itself (see scripts/setup.sh).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
build_dir="${CUPLAN_BUILD_DIR:-build}"

# Cheap when everything is in place: no package is missing, the configure step is cached and the build is current.
start=$SECONDS
CUPLAN_STRICT_WARNINGS="${CUPLAN_STRICT_WARNINGS:-ON}" bash scripts/setup.sh --no-samples --with-tests
echo "==> $build_dir: set up and built in $((SECONDS - start)) s"

status=0
start=$SECONDS
ctest --test-dir "$build_dir" --output-on-failure -j"${CUPLAN_TEST_JOBS:-2}" || status=$?
echo "==> $build_dir: tests ran in $((SECONDS - start)) s"
if [[ "${CUPLAN_CI:-0}" == 1 ]]; then
  bash scripts/sanitize_cpu.sh || status=1
  bash scripts/cpu_only.sh || status=1
fi
exit $status
