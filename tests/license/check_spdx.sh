#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file of the repository names its license in an SPDX line within its first three lines:
#
#   bash tests/license/check_spdx.sh [REPO_ROOT]   # lists the files without one; exit 1 if there are any
#   bash tests/license/check_spdx.sh --self-test   # checks the check on a scratch tree
#
# Source files: C++ and CUDA sources and headers, shell and Python scripts, CMake files and configured templates
# (*.in), doxygen pages (*.dox) and .ci/run. Files listed in tests/license/spdx_pending.txt are reported as pending
# and do not fail the check; a listed file that has its line, or no longer exists, fails it, so the list only shrinks.
set -euo pipefail

expected='SPDX-License-Identifier: Apache-2.0'

source_files() {
  local root="$1"
  if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$root" ls-files --cached --others --exclude-standard
  else
    (cd "$root" && find . -path ./.git -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||')
  fi | grep -E '(\.(cpp|hpp|h|cu|cuh|py|sh|cmake|in|dox)|(^|/)CMakeLists\.txt|^\.ci/run)$' | LC_ALL=C sort
}

check() {
  local root="$1" pending_file="$1/tests/license/spdx_pending.txt" file missing=() pending=() stale=()
  local -A listed=()
  if [[ -f "$pending_file" ]]; then
    while IFS= read -r file; do
      [[ -z "$file" || "$file" == \#* ]] || listed["$file"]=1
    done <"$pending_file"
  fi
  while IFS= read -r file; do
    [[ -f "$root/$file" ]] || continue
    if head -n 3 "$root/$file" | grep -qF "$expected"; then
      [[ -z "${listed[$file]:-}" ]] || stale+=("$file (has its SPDX line)")
    elif [[ -n "${listed[$file]:-}" ]]; then
      pending+=("$file")
    else
      missing+=("$file")
    fi
  done < <(source_files "$root")
  for file in "${!listed[@]}"; do
    [[ -f "$root/$file" ]] || stale+=("$file (no such file)")
  done
  local count
  count="$(source_files "$root" | wc -l)"
  if ((${#pending[@]} > 0)); then
    echo "pending (tests/license/spdx_pending.txt): ${#pending[@]} file(s) without '$expected':"
    printf '  %s\n' "${pending[@]}"
  fi
  if ((${#stale[@]} > 0)); then
    echo "FAILED: remove from tests/license/spdx_pending.txt:"
    printf '  %s\n' "${stale[@]}"
  fi
  if ((${#missing[@]} > 0)); then
    echo "FAILED: ${#missing[@]} source file(s) without '$expected' in their first three lines:"
    printf '  %s\n' "${missing[@]}"
  fi
  ((${#missing[@]} == 0 && ${#stale[@]} == 0)) || return 1
  echo "ok: $((count - ${#pending[@]})) of $count source files carry '$expected'"
}

self_test() {
  local scratch
  scratch="$(mktemp -d "${TMPDIR:-/tmp}/cuplan-spdx.XXXXXX")"
  trap 'rm -rf "$scratch"' RETURN
  mkdir -p "$scratch/src" "$scratch/tests/license"
  printf '// SPDX-License-Identifier: Apache-2.0\nint a;\n' >"$scratch/src/a.cpp"
  printf '#!/bin/sh\n# SPDX-License-Identifier: Apache-2.0\n' >"$scratch/src/b.sh"
  printf 'no license here\n' >"$scratch/notes.txt"  # not a source file
  check "$scratch" >/dev/null || { echo "self-test: a licensed tree was refused"; return 1; }
  printf 'int c;\n' >"$scratch/src/c.cu"
  if check "$scratch" >/dev/null; then echo "self-test: src/c.cu without a line passed"; return 1; fi
  echo "src/c.cu" >"$scratch/tests/license/spdx_pending.txt"
  check "$scratch" >/dev/null || { echo "self-test: a pending file was refused"; return 1; }
  printf '// SPDX-License-Identifier: Apache-2.0\n' >"$scratch/src/c.cu"
  if check "$scratch" >/dev/null; then echo "self-test: a stale pending entry passed"; return 1; fi
  echo "self-test: ok"
}

if [[ "${1:-}" == --self-test ]]; then
  self_test
else
  check "$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)"
fi
