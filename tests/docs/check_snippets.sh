#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every C++ or CUDA code block of README.md, docs/*.md and docs/dev/*.md is either a snippet the test suite compiles
# or an excerpt of a named file of the repository:
#
#   <!-- snippet: NAME -->                  the block is compiled (and run) as the test docs.NAME
#   <!-- excerpt: samples/some_sample.cu -->  every line of the block appears in that file
#
# The marker is the last non-blank line before the opening fence. An excerpt's lines are compared with the file's
# lines with whitespace normalised (leading and trailing removed, runs collapsed); blank lines and lines that start
# with `// ...` (elided code) are not compared. Fences of other languages (bash, cmake, sh, none) need no marker.
#
#   check_snippets.sh <repo root> <page>:<name>...   the compiled snippets, e.g. README.md:readme_example
#   check_snippets.sh --self-test                      checks that the checker catches what it should
set -euo pipefail

check() {
  local root="$1"
  shift
  local compiled=" $* " page status=0
  local pages=("$root/README.md")
  for page in "$root"/docs/*.md "$root"/docs/dev/*.md; do pages+=("$page"); done
  for page in "${pages[@]}"; do
    [[ -f "$page" ]] || continue
    awk -v root="$root" -v page="${page#"$root"/}" -v compiled="$compiled" '
      function norm(s) { gsub(/[ \t\r]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s); return s }
      function fail(msg) { printf "%s:%d: %s\n", page, start, msg; bad = 1 }
      function finish(   i, n, line, src, file_line, missing) {
        if (marker ~ /^<!-- snippet: [A-Za-z0-9_]+ -->$/) {
          name = marker; sub(/^<!-- snippet: /, "", name); sub(/ -->$/, "", name)
          if (index(compiled, " " page ":" name " ") == 0)
            fail("snippet \"" name "\" is not among the snippets the tests compile (tests/CMakeLists.txt)")
          return
        }
        if (marker ~ /^<!-- excerpt: [^ ]+ -->$/) {
          src = marker; sub(/^<!-- excerpt: /, "", src); sub(/ -->$/, "", src)
          if ((getline file_line < (root "/" src)) < 0) { fail("excerpt of \"" src "\", which does not exist"); return }
          delete have
          have[norm(file_line)] = 1
          while ((getline file_line < (root "/" src)) > 0) have[norm(file_line)] = 1
          close(root "/" src)
          missing = 0
          for (i = 1; i <= nlines; ++i) {
            line = norm(lines[i])
            if (line == "" || line ~ /^\/\/ \.\.\./) continue
            if (!(line in have)) {
              printf "%s:%d: excerpt line not found in %s: %s\n", page, start + i, src, line; bad = 1
            }
          }
          return
        }
        fail("C++ block with neither <!-- snippet: NAME --> nor <!-- excerpt: FILE --> on the line before it")
      }
      {
        if (!inside && $0 ~ /^[ \t]*```/) {
          lang = $0; sub(/^[ \t]*```[ \t]*/, "", lang); sub(/[ \t\r]*$/, "", lang)
          inside = 1; start = NR; nlines = 0
          cxx = (lang ~ /^(cpp|c\+\+|cxx|cc|cu|cuda|c|h|hpp)$/)
          marker = norm(previous)
          next
        }
        if (inside && $0 ~ /^[ \t]*```[ \t\r]*$/) {
          inside = 0
          if (cxx) finish()
          previous = ""
          next
        }
        if (inside) { lines[++nlines] = $0; next }
        if ($0 !~ /^[ \t\r]*$/) previous = $0
      }
      END {
        if (inside) { printf "%s:%d: unclosed code block\n", page, start; bad = 1 }
        exit bad
      }' "$page" || status=1
  done
  return $status
}

# The pages below hold literal backticks, hence single quotes.
# shellcheck disable=SC2016
self_test() {
  local dir
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' RETURN
  mkdir -p "$dir/docs" "$dir/samples"
  printf 'int main() {\n  int answer = 42;\n  return answer - 42;\n}\n' > "$dir/samples/s.cpp"
  printf '# ok\n\n<!-- snippet: first -->\n```cpp\nint main() {}\n```\n\n<!-- excerpt: samples/s.cpp -->\n```cpp\n  int   answer = 42;\n// ... more\nreturn answer - 42;\n```\n\n```bash\necho no marker needed\n```\n' > "$dir/README.md"
  check "$dir" README.md:first || { echo "self-test: a correct page was rejected"; return 1; }
  local bad
  for bad in '```cpp\nint x;\n```\n' '<!-- excerpt: samples/s.cpp -->\n```cpp\nint answer = 43;\n```\n' \
             '<!-- excerpt: samples/none.cpp -->\n```cpp\nint x;\n```\n' '<!-- snippet: other -->\n```cpp\nint x;\n```\n' \
             '<!-- excerpt: samples/s.cpp -->\n```cuda\nkernel<<<1, 1>>>();\n```\n'; do
    printf '# bad\n\n%b' "$bad" > "$dir/docs/bad.md"
    if check "$dir" README.md:first >/dev/null; then
      printf 'self-test: this page was accepted:\n'; cat "$dir/docs/bad.md"
      return 1
    fi
  done
  echo "self-test passed"
}

if [[ "${1:-}" == --self-test ]]; then
  self_test
else
  [[ $# -ge 1 ]] || { echo "usage: $0 <repo root> <page>:<name>... | --self-test" >&2; exit 2; }
  check "$@" && echo "every C++ block is a compiled snippet or a checked excerpt"
fi
