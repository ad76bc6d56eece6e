# SPDX-License-Identifier: Apache-2.0
"""Peer measurement for rows (a) and (b) of fft_callback_bench (docs/fft.md, "Callbacks"): nvmath-python's FFT with
prolog and epilog callbacks compiled from Python to LTO-IR, on the same problems and with the same method.

- convolution: a c64 batch [batch, length] convolved along the last axis with one filter, as a forward C2C FFT,
  a pointwise product with the filter's spectrum (and 1/length) and an inverse C2C FFT. Fused: the product is the
  forward transform's epilog. Separate: forward FFT, one elementwise product kernel, inverse FFT.
- scale: a forward C2C FFT of the same batch whose prolog multiplies each element by a factor read from user data,
  against the plain forward FFT.

Both transforms are stateful and in place on one device buffer, planned once. Random data, warm-up, CUDA events
around the GPU work of each repetition, the median of the repetitions. The fused results are checked against the
separate ones and against a float64 NumPy reference on the first rows.

    python3 -m pip install "nvmath-python[cu13,dx]==1.0.0" cupy-cuda13x    # numba-cuda compiles the callbacks
    python3 bench/peers/nvmath_fft_callbacks.py [--batch 4096] [--length 16384] [--reps 20] [--warmup 3]

Run it alternately with fft_callback_bench on the same machine and compare the ratios fused / separate and
scale / plain; the absolute times of two programs are compared only where both ran on the same device.
"""

import argparse
import statistics

import cupy as cp
import numpy as np
import nvmath


def timed(reps: int, warmup: int, setup, work) -> float:
    """Median milliseconds of `work` over `reps` repetitions after `warmup`, `setup` run untimed before each."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for i in range(warmup + reps):
        setup()
        start.record()
        work()
        end.record()
        end.synchronize()
        if i >= warmup:
            times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def relative_error(got, want) -> float:
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--length", type=int, default=16384)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    n = args.length

    rng = np.random.default_rng(args.seed)
    host = (rng.standard_normal((args.batch, n)) + 1j * rng.standard_normal((args.batch, n))).astype(np.complex64)
    host_filter = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    factor = 0.5
    x = cp.asarray(host)
    spectrum = cp.fft.fft(cp.asarray(host_filter)).astype(cp.complex64)
    factor_data = cp.asarray(np.array([factor], dtype=np.float32))
    work = cp.empty_like(x)

    def convolve(data_out, offset, value, filter_spectrum, unused):
        data_out[offset] = value * filter_spectrum[offset % n] / n

    def scaled(data_in, offset, factor_values, unused):
        return data_in[offset] * factor_values[0]

    epilog = nvmath.fft.compile_epilog(convolve, "complex64", "complex64")
    prolog = nvmath.fft.compile_prolog(scaled, "complex64", "float32")
    in_place = {"inplace": True}

    fused = nvmath.fft.FFT(work, axes=[-1], options=in_place, execution="cuda")
    fused.plan(epilog=nvmath.fft.DeviceCallable(ltoir=epilog, data=spectrum.data.ptr))
    plain = nvmath.fft.FFT(work, axes=[-1], options=in_place, execution="cuda")
    plain.plan()
    scaled_fft = nvmath.fft.FFT(work, axes=[-1], options=in_place, execution="cuda")
    scaled_fft.plan(prolog=nvmath.fft.DeviceCallable(ltoir=prolog, data=factor_data.data.ptr))
    scaled_spectrum = (spectrum / n).astype(cp.complex64)

    def reset():
        cp.copyto(work, x)

    def fused_convolution():
        fused.execute(direction="forward")
        plain.execute(direction="inverse")

    def separate_convolution():
        plain.execute(direction="forward")
        cp.multiply(work, scaled_spectrum, out=work)
        plain.execute(direction="inverse")

    # Correctness first, on fresh results: fused against separate, and both against float64 NumPy.
    rows = 4
    reference = np.fft.ifft(np.fft.fft(host[:rows].astype(np.complex128), axis=-1) * np.fft.fft(host_filter), axis=-1)
    reset()
    fused_convolution()
    fused_result = cp.asnumpy(work)
    reset()
    separate_convolution()
    separate_result = cp.asnumpy(work)
    reset()
    scaled_fft.execute(direction="forward")
    scale_result = cp.asnumpy(work[:rows])
    scale_reference = np.fft.fft(host[:rows].astype(np.complex128) * factor, axis=-1)
    errors = {
        "fused vs float64": relative_error(fused_result[:rows], reference),
        "separate vs float64": relative_error(separate_result[:rows], reference),
        "fused vs separate": relative_error(fused_result, separate_result),
        "scale vs float64": relative_error(scale_result, scale_reference),
    }
    for name, error in errors.items():
        print(f"check {name}: relative error {error:.1e}")
    if max(errors.values()) > 1e-4:
        raise SystemExit("nvmath callback results disagree with the reference")

    fused_ms = timed(args.reps, args.warmup, reset, fused_convolution)
    separate_ms = timed(args.reps, args.warmup, reset, separate_convolution)
    scale_ms = timed(args.reps, args.warmup, reset, lambda: scaled_fft.execute(direction="forward"))
    plain_ms = timed(args.reps, args.warmup, reset, lambda: plain.execute(direction="forward"))
    shape = f"c64 [{args.batch}, {n}]"
    print(f"nvmath convolution {shape}: fused {fused_ms:.3f} ms, separate {separate_ms:.3f} ms, "
          f"separate / fused {separate_ms / fused_ms:.2f}x")
    print(f"nvmath scale prolog {shape}: prolog {scale_ms:.3f} ms, plain {plain_ms:.3f} ms, "
          f"prolog / plain {scale_ms / plain_ms:.3f}x")
    for fft in (fused, plain, scaled_fft):
        fft.free()


if __name__ == "__main__":
    main()
