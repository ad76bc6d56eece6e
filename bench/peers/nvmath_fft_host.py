# SPDX-License-Identifier: Apache-2.0
"""Peer measurement for the fft_pageable row of host_staging_bench (docs/staging.md): nvmath-python's stateful FFT
on a NumPy (pageable host) operand, c64 [16384, 4096] over the last axis, CUDA execution, planned once; each timed
call is reset_operand + execute, as an application that transforms new host data each step would call it. Random
data, two warm-up calls, the median of the repetitions; the first rows of the result are checked against a float64
NumPy FFT.

    python3 -m pip install "nvmath-python[cu13]==1.0.0"    # or without [cu13], with CUDA_HOME naming a toolkit
    python3 bench/peers/nvmath_fft_host.py [--reps 15] [--seed 1]

Run it alternately with `host_staging_bench --rows=fft_pageable` on the same machine and compare the GB/s.
"""

import argparse
import time

import numpy as np
import nvmath


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    shape = (16384, 4096)
    x = (rng.standard_normal(shape, dtype=np.float32) + 1j * rng.standard_normal(shape, dtype=np.float32)).astype(
        np.complex64
    )
    reference = np.fft.fft(x[:4].astype(np.complex128), axis=-1)
    with nvmath.fft.FFT(x, axes=[-1], execution="cuda") as fft:
        fft.plan()
        for _ in range(2):
            fft.reset_operand(x)
            y = fft.execute()
        error = np.max(np.abs(y[:4] - reference)) / np.max(np.abs(reference))
        if not isinstance(y, np.ndarray) or error > 1e-5:
            raise SystemExit(f"nvmath result wrong: {type(y).__name__}, relative error {error:.1e}")
        times = []
        for _ in range(args.reps):
            start = time.perf_counter()
            fft.reset_operand(x)
            y = fft.execute()
            times.append(time.perf_counter() - start)
    seconds = sorted(times)[len(times) // 2]
    print(
        f"nvmath-python {nvmath.__version__} FFT c64 [16384,4096] NumPy operand, reset_operand + execute: "
        f"{seconds * 1e3:.1f} ms, {x.nbytes / seconds / 1e9:.2f} GB/s (relative error {error:.1e})"
    )


if __name__ == "__main__":
    main()
