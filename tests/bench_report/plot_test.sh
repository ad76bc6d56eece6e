#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the plotting step of scripts/bench_report.sh on the fixture in fixture/ (CSV in the benchmarks' format;
# its GPU rows are copied from the tables in docs/performance.md, its CPU rows from a --quick run of a 2-core host;
# they only exercise the plotting and are no result).
#
#   plot_test.sh plot WORK_DIR        --plot-only draws the three PNGs, each a non-empty PNG file; exit 77 (skipped)
#                                     when gnuplot is not installed
#   plot_test.sh no_gnuplot WORK_DIR  without gnuplot the script says so, draws nothing and exits 0
#   plot_test.sh usage WORK_DIR       an unknown option exits 2; --plot-only on a directory without CSV exits 1
#
# WORK_DIR is emptied first; the PNGs stay there for a look.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script="$here/../../scripts/bench_report.sh"
mode="${1:?mode: plot, no_gnuplot or usage}"
work="${2:?work directory}"
rm -rf "$work"
mkdir -p "$work/report" "$work/images"
cp "$here"/fixture/fft.csv "$here"/fixture/matmul.csv "$here"/fixture/machine.txt "$work/report/"

fail() {
  echo "FAIL: $*"
  exit 1
}

case "$mode" in
  plot)
    if ! command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
      echo "SKIP: gnuplot is not installed (Debian package gnuplot-nox), so the plots cannot be drawn"
      exit 77
    fi
    bash "$script" --plot-only --out "$work/report" --images "$work/images" || fail "bench_report.sh exited $?"
    for png in fft_ratio host_cost matmul_ratio; do
      file="$work/images/$png.png"
      [ -s "$file" ] || fail "$file missing or empty"
      [ "$(head -c 8 "$file" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$file is not a PNG"
      size=$(wc -c <"$file")
      [ "$size" -gt 10000 ] || fail "$file is only $size bytes: nothing plotted?"
      echo "ok: $file ($size bytes)"
    done
    ;;
  no_gnuplot)
    output=$(GNUPLOT="$work/no-such-gnuplot" bash "$script" --plot-only --out "$work/report" --images "$work/images")
    status=$?
    echo "$output"
    [ "$status" = 0 ] || fail "exit status $status without gnuplot, expected 0"
    grep -q "gnuplot not found" <<<"$output" || fail "no 'gnuplot not found' message"
    [ -z "$(ls -A "$work/images")" ] || fail "files drawn without gnuplot"
    ;;
  usage)
    bash "$script" --no-such-option >/dev/null 2>&1
    status=$?
    [ "$status" = 2 ] || fail "unknown option: exit status $status, expected 2"
    bash "$script" --out >/dev/null 2>&1
    status=$?
    [ "$status" = 2 ] || fail "--out without a directory: exit status $status, expected 2"
    mkdir -p "$work/empty"
    # Any program passes the check for gnuplot: the missing CSV must stop the script before it is called.
    GNUPLOT=bash bash "$script" --plot-only --out "$work/empty" --images "$work/images" >/dev/null 2>&1
    status=$?
    [ "$status" = 1 ] || fail "--plot-only without CSV: exit status $status, expected 1"
    ;;
  *)
    fail "unknown mode '$mode'"
    ;;
esac
echo "PASS: $mode"
