#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CuPy's cupyx.scipy.fft beside cuplan's real-to-real transforms, on the shapes of bench/r2r_bench.cpp.

Times (CUDA events, warm-up, median) CuPy's dct / dst along the last axis of [4096, 16384] and [16384, 4096] f32
and dctn of 512^3 over all axes, with CuPy's own rfft / rfftn as its baseline. Given the CSV of r2r_bench
(--cuplan-csv, from `r2r_bench --csv PATH` in the same session), it prints cuplan's times and how many times faster
cuplan is than CuPy for each transform.

Usage: python3 bench/r2r_cupy_bench.py [--quick] [--reps N] [--cuplan-csv PATH]
"""

import argparse
import csv
import sys


def median_ms(cp, fn, reps, warmup=3):
    for _ in range(warmup):
        fn()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    times.sort()
    return times[len(times) // 2]


def shape_text(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def read_cuplan(path):
    """{(case, variant): ms} from r2r_bench's CSV (section a)."""
    rows = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("section") == "a":
                rows[(row["case"], row["variant"])] = float(row["value"])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the small shapes of r2r_bench --quick")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--cuplan-csv", help="CSV written by r2r_bench --csv, for the side-by-side ratios")
    args = parser.parse_args()
    try:
        import cupy as cp
        import cupyx.scipy.fft as cfft
    except ImportError as error:
        print(f"CuPy is not available here ({error}); nothing measured")
        return 77
    cuplan = read_cuplan(args.cuplan_csv) if args.cuplan_csv else {}
    big, small, cube = (2048, 1024, 128) if args.quick else (16384, 4096, 512)
    print(f"CuPy {cp.__version__} on {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    rng = cp.random.default_rng(2024)

    cases = [((small, big), "last"), ((big, small), "last"), ((cube, cube, cube), "all")]
    print(f"{'case':34s} {'transform':8s} {'CuPy ms':>10s} {'CuPy/rfft':>10s} {'cuplan ms':>10s} {'speedup':>8s}")
    for shape, axes in cases:
        x = rng.random(shape, dtype=cp.float32) * 2 - 1
        case = shape_text(shape) + (" f32 last axis" if axes == "last" else " f32 all axes")
        if axes == "last":
            base = median_ms(cp, lambda: cfft.rfft(x, axis=-1), args.reps)
            variants = {
                "dct2": lambda: cfft.dct(x, type=2, axis=-1),
                "dct3": lambda: cfft.dct(x, type=3, axis=-1),
                "dst2": lambda: cfft.dst(x, type=2, axis=-1),
                "dct1": lambda: cfft.dct(x, type=1, axis=-1),
                "dct4": lambda: cfft.dct(x, type=4, axis=-1),
            }
            base_name = "rfft"
        else:
            base = median_ms(cp, lambda: cfft.rfftn(x), args.reps)
            variants = {"dct2n": lambda: cfft.dctn(x, type=2)}
            base_name = "rfftn"
        print(f"{case:34s} {base_name:8s} {base:10.4f}")
        for name, fn in variants.items():
            try:
                ms = median_ms(cp, fn, args.reps)
            except (NotImplementedError, ValueError) as error:
                print(f"{'':34s} {name:8s} {'n/a':>10s}  (CuPy: {error})")
                continue
            line = f"{'':34s} {name:8s} {ms:10.4f} {ms / base:10.2f}"
            if (case, name) in cuplan:
                ours = cuplan[(case, name)]
                line += f" {ours:10.4f} {ms / ours:7.2f}x"
            print(line)
        del x
        cp.get_default_memory_pool().free_all_blocks()
    return 0


if __name__ == "__main__":
    sys.exit(main())
