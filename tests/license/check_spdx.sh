#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file of the repository names its license in an SPDX line within its first three lines:
#
#   bash tests/license/check_spdx.sh [REPO_ROOT]   # lists the files without one; exit 1 if there are any
#   bash tests/license/check_spdx.sh --self-test   # checks the check on a scratch tree
#
# Source files: C++ and CUDA sources and headers, shell and Python scripts, CMake files and configured templates
# (*.in), doxygen pages (*.dox) and .ci/run. Files listed in tests/license/spdx_pending.txt (a path, or a folder
# ending in /) are reported as pending and do not fail the check; a listed file that has its line, or a listed path
# that no longer has a file without one, fails it, so the list only shrinks.
set -euo pipefail

expected='SPDX-License-Identifier: Apache-2.0'

# The files of the tree at $1: git's list where $1 is the top of a git checkout; otherwise (a tree exported with
# `git archive`, a release tarball, possibly unpacked inside another checkout) every file, leaving out version
# control folders and build trees (a folder named build* or holding a CMakeCache.txt), which hold generated files.
source_files() {
  local root="$1" top
  top="$(git -C "$root" rev-parse --show-toplevel 2>/dev/null)" || top=""
  if [[ -n "$top" && "$(cd "$top" && pwd -P)" == "$(cd "$root" && pwd -P)" ]]; then
    git -C "$root" ls-files --cached --others --exclude-standard
  else
    (cd "$root" && find . \( -name .git -o -path './build*' -o \( -type d -exec test -e '{}/CMakeCache.txt' \; \) \) \
      -prune -o -type f -print | sed 's|^\./||')
  fi | grep -E '(\.(cpp|hpp|h|cu|cuh|py|sh|cmake|in|dox)|(^|/)CMakeLists\.txt|^\.ci/run)$' | LC_ALL=C sort
}

check() {
  local root="$1" pending_file="$1/tests/license/spdx_pending.txt" file missing=() pending=() stale=()
  local -A listed=() used=()
  local entry
  if [[ -f "$pending_file" ]]; then
    while IFS= read -r entry; do
      [[ -z "$entry" || "$entry" == \#* ]] || listed["$entry"]=1
    done <"$pending_file"
  fi
  # The pending entry that covers a file: the file itself, or a listed folder above it.
  covering() {
    local path="$1" dir
    [[ -n "${listed[$path]:-}" ]] && { echo "$path"; return; }
    dir="$path"
    while [[ "$dir" == */* ]]; do
      dir="${dir%/*}"
      [[ -n "${listed[$dir/]:-}" ]] && { echo "$dir/"; return; }
    done
    return 0
  }
  while IFS= read -r file; do
    [[ -f "$root/$file" ]] || continue
    entry="$(covering "$file")"
    if head -n 3 "$root/$file" | grep -qF "$expected"; then
      [[ "$entry" != "$file" ]] || stale+=("$file (has its SPDX line)")
    elif [[ -n "$entry" ]]; then
      pending+=("$file")
      used["$entry"]=1
    else
      missing+=("$file")
    fi
  done < <(source_files "$root")
  for entry in "${!listed[@]}"; do
    [[ -n "${used[$entry]:-}" ]] || stale+=("$entry (no file without its SPDX line)")
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
  mkdir -p "$scratch/src/part/deeper"
  printf 'int d;\n' >"$scratch/src/part/deeper/d.cpp"
  echo "src/part/" >"$scratch/tests/license/spdx_pending.txt"
  check "$scratch" >/dev/null || { echo "self-test: a file under a pending folder was refused"; return 1; }
  printf '// SPDX-License-Identifier: Apache-2.0\n' >"$scratch/src/part/deeper/d.cpp"
  if check "$scratch" >/dev/null; then echo "self-test: a pending folder with nothing pending passed"; return 1; fi
  # A tree without git of its own (an exported tarball), unpacked inside another checkout that ignores it, with a
  # build tree in it: the tree's own files are checked, the build tree's generated files are not.
  printf '// SPDX-License-Identifier: Apache-2.0\n' >"$scratch/src/part/deeper/d.cpp"
  : >"$scratch/tests/license/spdx_pending.txt"
  local outer="$scratch/outer"
  mkdir -p "$outer"
  git -C "$outer" init -q && printf '/exported/\n' >"$outer/.gitignore"
  mkdir -p "$outer/exported" && cp -r "$scratch/src" "$scratch/tests" "$outer/exported/"
  mkdir -p "$outer/exported/b/CMakeFiles" && touch "$outer/exported/b/CMakeCache.txt"
  printf 'generated\n' >"$outer/exported/b/cmake_install.cmake"
  local out
  out="$(check "$outer/exported")" || { echo "self-test: an exported tree inside a checkout was refused: $out"; return 1; }
  [[ "$out" == *" of 4 source files"* ]] || { echo "self-test: expected the exported tree's 4 files, got: $out"; return 1; }
  printf 'int e;\n' >"$outer/exported/src/e.cpp"
  if check "$outer/exported" >/dev/null; then echo "self-test: an exported tree's unlicensed file passed"; return 1; fi
  echo "self-test: ok"
}

if [[ "${1:-}" == --self-test ]]; then
  self_test
else
  check "$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)"
fi
