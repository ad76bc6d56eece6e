#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark report: runs fft_bench and matmul_bench with --csv, records the machine, and draws PNG plots with gnuplot.
#
# usage: scripts/bench_report.sh [--out DIR] [--build-dir DIR] [--images DIR] [--quick] [--plot-only]
#
#   --out DIR        where the CSV, the printed tables and machine.txt go (default: build-gpu/bench-report)
#   --build-dir DIR  the build holding bench/fft_bench and bench/matmul_bench (default: build-gpu)
#   --images DIR     where the PNGs go (default: docs/images, the ones docs/performance.md shows)
#   --quick          pass --quick to the benchmarks (small sizes, few repetitions)
#   --plot-only      do not run anything: draw the plots from the CSV already in DIR
#
# Running and plotting are separable: run on the GPU machine (no gnuplot needed there; without gnuplot the script
# says so and stops after the CSV), copy DIR back, and draw with --plot-only where gnuplot is installed (Debian:
# gnuplot-nox). Files in DIR: fft.csv, matmul.csv (columns in bench/support/bench_csv.hpp), fft.txt, matmul.txt (the
# printed tables), machine.txt (GPU, driver, date, commit) and plot/ (the data and gnuplot scripts of each plot).
# Plots: fft_ratio.png (FFT GPU time cuplan / raw cuFFT), matmul_ratio.png (Matmul time raw cuBLASLt / cuplan),
# host_cost.png (host microseconds per call, cuplan's variants against the raw call).
# GNUPLOT names the gnuplot program (default: gnuplot). Exit status: 0 done (or CSV written and no gnuplot), 1 a
# benchmark failed or the CSV lacks the GPU rows a plot needs, 2 bad usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '4,10p' "$0" | sed 's/^# \{0,1\}//'; }

out="$root/build-gpu/bench-report"
build_dir="$root/build-gpu"
images="$root/docs/images"
quick=()
plot_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out | --build-dir | --images)
      if [ $# -lt 2 ] || [ -z "$2" ]; then
        echo "bench_report.sh: $1 needs a directory" >&2
        usage >&2
        exit 2
      fi
      case "$1" in
        --out) out="$2" ;;
        --build-dir) build_dir="$2" ;;
        --images) images="$2" ;;
      esac
      shift 2
      ;;
    --quick) quick=(--quick); shift ;;
    --plot-only) plot_only=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *)
      echo "bench_report.sh: unknown option '$1'" >&2
      usage >&2
      exit 2
      ;;
  esac
done

# --- Run ---------------------------------------------------------------------------------------------------------
status=0
if [ "$plot_only" = 0 ]; then
  for exe in fft_bench matmul_bench; do
    if [ ! -x "$build_dir/bench/$exe" ]; then
      echo "bench_report.sh: $build_dir/bench/$exe not found; build it first:" >&2
      echo "  cmake --build $build_dir --target fft_bench matmul_bench" >&2
      exit 1
    fi
  done
  mkdir -p "$out"
  {
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    if command -v nvidia-smi >/dev/null 2>&1; then
      # The benchmarks use CUDA device 0: the first GPU visible to them.
      gpu_line=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || true)
      echo "gpu=${gpu_line%%,*}"
      driver="${gpu_line#*,}"
      echo "driver=${driver# }"
      cuda=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1 || true)
      echo "cuda=${cuda}"
    else
      echo "gpu=none (nvidia-smi not found)"
      echo "driver="
      echo "cuda="
    fi
    echo "host_cores=$(nproc 2>/dev/null || echo unknown)"
    echo "commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)"
    if [ ${#quick[@]} -gt 0 ]; then echo "mode=quick"; else echo "mode=full"; fi
  } >"$out/machine.txt"
  echo "== machine"
  cat "$out/machine.txt"
  for bench in fft matmul; do
    echo "== ${bench}_bench ${quick[*]:-}"
    if ! "$build_dir/bench/${bench}_bench" "${quick[@]}" --csv "$out/$bench.csv" | tee "$out/$bench.txt"; then
      echo "bench_report.sh: ${bench}_bench failed (its rows so far are in $out/$bench.csv)" >&2
      status=1
    fi
  done
  echo "CSV written: $out/fft.csv, $out/matmul.csv"
  [ "$status" = 0 ] || exit "$status"
fi

# --- Plot --------------------------------------------------------------------------------------------------------
gnuplot_exe="${GNUPLOT:-gnuplot}"
if ! command -v "$gnuplot_exe" >/dev/null 2>&1; then
  echo "gnuplot not found: no plots drawn. The CSV is in $out; to draw the plots where gnuplot is installed" \
    "(Debian: gnuplot-nox), copy that directory there and run: scripts/bench_report.sh --plot-only --out DIR"
  exit 0
fi
for f in fft.csv matmul.csv machine.txt; do
  if [ ! -f "$out/$f" ]; then
    echo "bench_report.sh: $out/$f not found (run without --plot-only first, on a machine with a GPU)" >&2
    exit 1
  fi
done

# pngcairo draws antialiased text; the plain png terminal (libgd) is the fallback.
if [ -z "$("$gnuplot_exe" -e 'set terminal pngcairo' </dev/null 2>&1)" ]; then
  terminal='pngcairo noenhanced font "Sans,11"'
else
  terminal='png noenhanced font "Sans,11"'
fi

machine_value() { sed -n "s/^$1=//p" "$out/machine.txt" | head -n 1 | tr -d "\"'\\\\"; }
gpu=$(machine_value gpu)
driver=$(machine_value driver)
date_run=$(machine_value date)
mode=$(machine_value mode)
subtitle="${gpu:-unknown GPU}"
[ -n "$driver" ] && subtitle="$subtitle, driver $driver"
[ -n "$date_run" ] && subtitle="$subtitle, $date_run"
[ "$mode" = quick ] && subtitle="$subtitle (--quick run)"

plot_dir="$out/plot"
mkdir -p "$plot_dir" "$images"

# Reads fft.csv and matmul.csv (RFC 4180 quoting, columns found by name) and writes the tab-separated data of each
# plot, plus ranges.gp with the axis ranges and the matmul type groups. Portable awk (no gawk extensions).
awk -v dir="$plot_dir" '
function parse(line,   n, i, c, f, q) {
  n = 0; f = ""; q = 0
  sub(/\r$/, "", line)
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (q) {
      if (c == "\"") {
        if (substr(line, i + 1, 1) == "\"") { f = f "\""; i++ } else q = 0
      } else f = f c
    } else if (c == "\"") q = 1
    else if (c == ",") { field[++n] = f; f = "" }
    else f = f c
  }
  field[++n] = f
  return n
}
BEGIN { nfft = 0; nmm = 0; nhf = 0; nhm = 0 }
function get(name) { return (name in column) ? field[column[name]] : "" }
function shape_label(s,   p) {
  split(s, p, "x")
  if (p[1] == p[2] && p[2] == p[3]) return p[1] "\xc2\xb3"
  return p[1] "\\n\xc3\x97" p[2] "\\n\xc3\x97" p[3]
}
# A tic label for gnuplot: no double quotes, ^2 and ^3 as superscripts.
function tic(s) {
  gsub(/"/, "", s); gsub(/\^3/, "\xc2\xb3", s); gsub(/\^2/, "\xc2\xb2", s)
  return s
}
function fmt(v) { return sprintf("%.4f", v) }
FNR == 1 {
  n = parse($0)
  split("", column)
  for (i = 1; i <= n; i++) column[field[i]] = i
  next
}
{
  parse($0)
  bench = get("bench"); section = get("section"); cs = get("case"); variant = get("variant")
  value = get("value") + 0; base = get("baseline_value") + 0; baseline = get("baseline")
  if (base <= 0 || value <= 0) next
  if (bench == "fft" && section == "a") {
    if (!(cs in fft_index)) { fft_index[cs] = nfft; fft_case[nfft++] = cs }
    if (variant == "execute into out") fft_out[cs] = value / base
    else if (variant == "execute with a new result") fft_new[cs] = value / base
  } else if (bench == "fft" && (section == "b" || section == "c")) {
    if (nhf == 0) { host_fft_label[nhf] = "raw " baseline; host_fft_value[nhf++] = base; host_fft_case = cs }
    host_fft_label[nhf] = variant; host_fft_value[nhf++] = value
  } else if (bench == "matmul" && section == "d") {
    if (nhm == 0) { host_mm_label[nhm] = "raw " baseline; host_mm_value[nhm++] = base; host_mm_case = cs }
    host_mm_label[nhm] = variant; host_mm_value[nhm++] = value
  } else if (bench == "matmul" && (section == "a" || section == "b")) {
    if (!(cs in mm_index)) { mm_index[cs] = nmm; mm_case[nmm++] = cs }
    # raw time / cuplan time: >= 1 means cuplan is as fast.
    if (section == "a" && variant == "execute into out" && baseline == "raw first choice") mm_first[cs] = base / value
    else if (section == "a" && variant == "execute into out, as planned") mm_planned[cs] = base / value
    else if (section == "b") mm_tuned[cs] = base / value
  }
}
END {
  f = dir "/fft_ratio.dat"; printf "" > f
  x = dir "/fft_xtics.gp"; printf "set xtics (" > x
  fmin = 1; fmax = 1
  for (i = 0; i < nfft; i++) {
    cs = fft_case[i]
    printf "%s\"%s\" %d", i ? ", " : "", tic(cs), i > x
    a = (cs in fft_out) ? fft_out[cs] : "NaN"; b = (cs in fft_new) ? fft_new[cs] : "NaN"
    printf "%d\t%s\t%s\t%s\n", i, cs, a, b > f
    if (a != "NaN") { if (a < fmin) fmin = a; if (a > fmax) fmax = a }
    if (b != "NaN") { if (b < fmin) fmin = b; if (b > fmax) fmax = b }
  }
  close(f); print ")" > x; close(x)
  f = dir "/matmul_ratio.dat"; printf "" > f
  x = dir "/matmul_xtics.gp"; printf "set xtics (" > x
  mmin = 1; mmax = 1; ngroups = 0
  for (i = 0; i < nmm; i++) {
    cs = mm_case[i]
    type = cs; sub(/ .*/, "", type); shape = cs; sub(/^[^ ]* /, "", shape)
    r1 = (cs in mm_first) ? mm_first[cs] : "NaN"
    r2 = (cs in mm_planned) ? mm_planned[cs] : "NaN"
    r3 = (cs in mm_tuned) ? mm_tuned[cs] : "NaN"
    printf "%d\t%s\t%s\t%s\t%s\t%s\n", i, type, shape, r1, r2, r3 > f
    printf "%s\"%s\" %d", i ? ", " : "", tic(shape_label(shape)), i > x
    if (r1 != "NaN") { if (r1 < mmin) mmin = r1; if (r1 > mmax) mmax = r1 }
    if (r2 != "NaN") { if (r2 < mmin) mmin = r2; if (r2 > mmax) mmax = r2 }
    if (r3 != "NaN") { if (r3 < mmin) mmin = r3; if (r3 > mmax) mmax = r3 }
    if (ngroups == 0 || group_type[ngroups - 1] != type) {
      group_type[ngroups] = type; group_first[ngroups] = i; ngroups++
    }
    group_last[ngroups - 1] = i
  }
  close(f); print ")" > x; close(x)
  f = dir "/host_fft.dat"; printf "" > f
  hmax = 0
  for (i = 0; i < nhf; i++) {
    printf "%d\t%s\t%s\t%s\n", i, host_fft_label[i], host_fft_value[i],
           i == 0 ? "" : sprintf("%+.2f", host_fft_value[i] - host_fft_value[0]) > f
    if (host_fft_value[i] > hmax) hmax = host_fft_value[i]
  }
  close(f)
  f = dir "/host_matmul.dat"; printf "" > f
  for (i = 0; i < nhm; i++) {
    printf "%d\t%s\t%s\t%s\n", i, host_mm_label[i], host_mm_value[i],
           i == 0 ? "" : sprintf("%+.2f", host_mm_value[i] - host_mm_value[0]) > f
    if (host_mm_value[i] > hmax) hmax = host_mm_value[i]
  }
  close(f)
  # Axis ranges: the data and the 1.0 reference line, with a margin for the value labels.
  f = dir "/ranges.gp"
  fpad = (fmax - fmin) * 0.25 + 0.005
  printf "fft_n = %d\nfft_ymin = %s\nfft_ymax = %s\n", nfft, fmt(fmin - fpad), fmt(fmax + fpad * 2) > f
  # The matmul plot keeps its top third free for the type names and the key.
  mpad = (mmax - mmin) * 0.08 + 0.005
  printf "mm_n = %d\nmm_ymin = %s\nmm_ymax = %s\n", nmm, fmt(mmin - mpad), fmt(mmax + (mmax - mmin) * 0.5 + 0.02) > f
  printf "host_fft_n = %d\nhost_mm_n = %d\nhost_xmax = %s\n", nhf, nhm, fmt(hmax * 1.3) > f
  printf "host_fft_case = \"%s\"\nhost_mm_case = \"%s\"\n", host_fft_case, host_mm_case > f
  printf "mm_groups = %d\n", ngroups > f
  for (g = 0; g < ngroups; g++)
    printf "mm_group_%d = \"%s\"; mm_group_first_%d = %d; mm_group_last_%d = %d\n", g, group_type[g], g,
           group_first[g], g, group_last[g] > f
  close(f)
}' "$out/fft.csv" "$out/matmul.csv"

missing=""
[ -s "$plot_dir/fft_ratio.dat" ] || missing="$missing FFT (a)"
[ -s "$plot_dir/matmul_ratio.dat" ] || missing="$missing Matmul (a)/(b)"
[ -s "$plot_dir/host_fft.dat" ] || missing="$missing FFT (b)/(c)"
[ -s "$plot_dir/host_matmul.dat" ] || missing="$missing Matmul (d)"
if [ -n "$missing" ]; then
  echo "bench_report.sh: no rows for:$missing in $out (the GPU sections write rows only on a machine with a GPU)" >&2
  exit 1
fi

common="set encoding utf8
set datafile separator '\t'
set datafile missing 'NaN'
set style fill solid 0.85 noborder
set grid ytics lc rgb '#d8d8d8' lw 1
set border 3
set xtics nomirror
set ytics nomirror
load '$plot_dir/ranges.gp'"

# (1) FFT GPU time ratio cuplan / raw per transform: two bars per transform, drawn from 1.0 up or down.
cat >"$plot_dir/fft_ratio.gp" <<EOF
$common
set output '$images/fft_ratio.png'
set terminal $terminal size 1000,600
set title "FFT: GPU time per transform, cuplan / raw cufftExecC2C (median, CUDA events; below 1.0: cuplan faster)\n$subtitle"
set ylabel 'GPU time ratio cuplan / raw cuFFT'
set xlabel 'transform (C2C c64, same data and stream)'
set xrange [-0.6:fft_n - 0.4]
set yrange [fft_ymin:fft_ymax]
set ytics format '%.3f'
set key at graph 0.01, graph 0.99 left top vertical reverse Left samplen 2 opaque box lc rgb '#bbbbbb'
load '$plot_dir/fft_xtics.gp'
w = 0.36
# A bar's value label sits beyond its end: above a bar that rises from 1.0, below one that falls.
above(r) = r < 1 ? r - (fft_ymax - fft_ymin) * 0.035 : r + (fft_ymax - fft_ymin) * 0.035
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lc rgb '#444444' lw 1.5 dt 2 front
plot '$plot_dir/fft_ratio.dat' using (\$1 - w/2):(1):(\$1 - w + 0.02):(\$1 - 0.02):(\$3 < 1 ? \$3 : 1):(\$3 < 1 ? 1 : \$3) \
       with boxxyerror lc rgb '#1f77b4' title 'execute into a preallocated out', \
     '' using (\$1 + w/2):(1):(\$1 + 0.02):(\$1 + w - 0.02):(\$4 < 1 ? \$4 : 1):(\$4 < 1 ? 1 : \$4) \
       with boxxyerror lc rgb '#ff7f0e' title 'execute returning a new result tensor', \
     '' using (\$1 - w/2):(above(\$3)):(sprintf('%.4f', \$3)) with labels font ',10' notitle, \
     '' using (\$1 + w/2):(above(\$4)):(sprintf('%.4f', \$4)) with labels font ',10' notitle, \
     NaN with lines lc rgb '#444444' lw 1.5 dt 2 title 'raw cuFFT (ratio 1.0)'
EOF

# (2) Matmul time ratio raw / cuplan per type and shape: three bars per product, grouped by type.
{
  cat <<EOF
$common
set output '$images/matmul_ratio.png'
set terminal $terminal size 1600,700
set title "Matmul: GPU time per call, raw cuBLASLt / cuplan (median of interleaved batches; above 1.0: cuplan faster)\n$subtitle"
set ylabel 'time ratio raw cuBLASLt / cuplan'
set xlabel 'M × N × K (row-major, same preallocated output)' offset 0, -2.6
set bmargin 7.5
set xrange [-0.6:mm_n - 0.4]
set yrange [mm_ymin:mm_ymax]
set ytics format '%.2f'
set key at graph 0.995, graph 0.9 right top vertical reverse Left samplen 2 opaque box lc rgb '#bbbbbb'
load '$plot_dir/matmul_xtics.gp'
w = 0.27
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lc rgb '#444444' lw 1.5 dt 2 front
EOF
  # Type groups: a separator between groups and the type's name above its bars.
  cat <<'EOF'
do for [g = 0:mm_groups - 1] {
  eval sprintf('first_ = mm_group_first_%d; last_ = mm_group_last_%d; name_ = mm_group_%d', g, g, g)
  set label (10 + g) name_ at first (first_ + last_) / 2.0, graph 0.96 center font ',13' front
  if (g > 0) { set arrow (10 + g) from first first_ - 0.5, graph 0 to first first_ - 0.5, graph 1 nohead lc rgb '#999999' lw 1 }
}
EOF
  cat <<EOF
bar(x, r) = r < 1 ? r : 1
top(x, r) = r < 1 ? 1 : r
plot '$plot_dir/matmul_ratio.dat' using (\$1 - w):(1):(\$1 - 1.5*w + 0.01):(\$1 - 0.5*w - 0.01):(bar(0, \$4)):(top(0, \$4)) \
       with boxxyerror lc rgb '#1f77b4' title '(a) cuplan as planned vs raw first heuristic choice', \
     '' using (\$1):(1):(\$1 - 0.5*w + 0.01):(\$1 + 0.5*w - 0.01):(bar(0, \$5)):(top(0, \$5)) \
       with boxxyerror lc rgb '#aec7e8' title '(a) cuplan as planned vs raw best of its top 8', \
     '' using (\$1 + w):(1):(\$1 + 0.5*w + 0.01):(\$1 + 1.5*w - 0.01):(bar(0, \$6)):(top(0, \$6)) \
       with boxxyerror lc rgb '#2ca02c' title '(b) cuplan after autotune vs raw best of its top 8', \
     NaN with lines lc rgb '#444444' lw 1.5 dt 2 title 'raw cuBLASLt (ratio 1.0)'
EOF
} >"$plot_dir/matmul_ratio.gp"

# (3) Host microseconds per call: the raw call and cuplan's variants, FFT above, Matmul below.
cat >"$plot_dir/host_cost.gp" <<EOF
$common
set output '$images/host_cost.png'
set terminal $terminal size 1100,750
set grid noytics xtics
set xrange [0:host_xmax]
set xlabel 'host time per call (µs; median of interleaved rounds, GPU kept busy)'
set ytics nomirror scale 0
unset key
set multiplot layout 2,1 title "Host cost per call: cuplan against the raw library call (shorter is cheaper)\n$subtitle"
set lmargin 44
set title 'FFT, ' . host_fft_case . ' (raw: cufftExecC2C)'
set yrange [host_fft_n - 0.5:-0.5]
plot '$plot_dir/host_fft.dat' using (\$3/2):1:(0):(\$3):(\$1 - 0.35):(\$1 + 0.35):(\$1 == 0 ? 0x888888 : 0x1f77b4):ytic(2) \
       with boxxyerror lc rgb variable, \
     '' using 3:1:(\$1 == 0 ? sprintf(' %.2f µs', \$3) : sprintf(' %.2f µs (%s vs raw)', \$3, strcol(4))) with labels left font ',10'
set title 'Matmul, ' . host_mm_case . ' (raw: cublasLtMatmul)'
set yrange [host_mm_n - 0.5:-0.5]
plot '$plot_dir/host_matmul.dat' using (\$3/2):1:(0):(\$3):(\$1 - 0.35):(\$1 + 0.35):(\$1 == 0 ? 0x888888 : 0x2ca02c):ytic(2) \
       with boxxyerror lc rgb variable, \
     '' using 3:1:(\$1 == 0 ? sprintf(' %.2f µs', \$3) : sprintf(' %.2f µs (%s vs raw)', \$3, strcol(4))) with labels left font ',10'
unset multiplot
EOF

for plot in fft_ratio matmul_ratio host_cost; do
  "$gnuplot_exe" "$plot_dir/$plot.gp"
  echo "drawn: $images/$plot.png"
done
