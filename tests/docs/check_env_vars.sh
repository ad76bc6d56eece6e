#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every CUPLAN_* environment variable the library reads (std::getenv("CUPLAN_...") in src/) has a row in the
# environment-variable table of docs/getting-started.md, and every row names a variable the library reads.
#
#   check_env_vars.sh <repo root>     lists the variables read but not documented, and the rows of none read
#   check_env_vars.sh --self-test     checks that the checker catches both
set -euo pipefail

check() {
  local root="$1" status=0 name
  local read_names documented where
  read_names="$(grep -rhoE 'getenv\("CUPLAN_[A-Z0-9_]+"\)' "$root/src" |
                sed -E 's/getenv\("(CUPLAN_[A-Z0-9_]+)"\)/\1/' | LC_ALL=C sort -u)"
  # The table's rows: a first cell that starts with `CUPLAN_NAME
  documented="$(sed -n '/^## Environment variables/,/^## /p' "$root/docs/getting-started.md" |
                grep -oE '^\| `CUPLAN_[A-Z0-9_]+' | sed -E 's/^\| `//' | LC_ALL=C sort -u)"
  if [[ -z "$read_names" ]]; then
    echo "FAILED: no getenv(\"CUPLAN_...\") found under $root/src"
    return 1
  fi
  for name in $read_names; do
    if ! grep -qx "$name" <<<"$documented"; then
      where="$(grep -rlE "getenv\(\"$name\"\)" "$root/src" | sed "s|^$root/||" | head -1)"
      echo "FAILED: $name is read in src/ ($where) but has no row in docs/getting-started.md, \"Environment variables\""
      status=1
    fi
  done
  for name in $documented; do
    if ! grep -qx "$name" <<<"$read_names"; then
      echo "FAILED: docs/getting-started.md documents $name, which nothing in src/ reads"
      status=1
    fi
  done
  ((status == 0)) && echo "ok: $(wc -w <<<"$read_names") environment variables, each documented"
  return $status
}

self_test() {
  local scratch
  scratch="$(mktemp -d "${TMPDIR:-/tmp}/cuplan-env.XXXXXX")"
  trap 'rm -rf "$scratch"' RETURN
  mkdir -p "$scratch/src" "$scratch/docs"
  printf '%s\n' 'const char* a = std::getenv("CUPLAN_ONE");' 'const char* b = std::getenv("CUPLAN_TWO");' \
    >"$scratch/src/a.cpp"
  printf '%s\n' '# Start' '' '## Environment variables' '' '| variable | effect |' '| --- | --- |' \
    '| `CUPLAN_ONE=1` | one |' '| `CUPLAN_TWO=N` | two |' '' '## Next' '' '| `CUPLAN_ELSEWHERE` | not in the table |' \
    >"$scratch/docs/getting-started.md"
  check "$scratch" >/dev/null || { echo "self-test: a documented set was refused"; return 1; }
  printf 'const char* c = std::getenv("CUPLAN_THREE");\n' >>"$scratch/src/a.cpp"
  if check "$scratch" >/dev/null; then echo "self-test: an undocumented variable passed"; return 1; fi
  printf 'const char* c = 0;\n' >"$scratch/src/a.cpp"
  printf 'const char* a = std::getenv("CUPLAN_ONE");\n' >>"$scratch/src/a.cpp"
  if check "$scratch" >/dev/null; then echo "self-test: a row of a variable nothing reads passed"; return 1; fi
  echo "self-test: ok"
}

if [[ "${1:-}" == --self-test ]]; then
  self_test
else
  check "${1:?usage: check_env_vars.sh <repo root> | --self-test}"
fi
