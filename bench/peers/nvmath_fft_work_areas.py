# SPDX-License-Identifier: Apache-2.0
"""Peer measurement for work_area_bench (docs/performance.md, "Work areas"): nvmath-python's stateful FFT on the same
16 plans (1D to 3D, C2C c64 and R2C f32, c64 8192^2 and 2^20-point rows x 64 among them), CuPy operands on one
stream, used in turn. nvmath keeps one workspace per object (or releases it after each call with
release_workspace=True); there is no shared area. Printed beside work_area_bench's tables:
  (a) the workspace bytes nvmath.fft.estimate_workspace_size gives per plan (their sum is what 16 objects hold), and
      the CuPy pool's bytes in use with the 16 objects alive after one call each, minus operands and outputs;
  (b) GPU time per call of each shape (CUDA events, the shape before it run just before), keeping the workspace and
      with release_workspace=True;
  (c) host time of a small execute (c64 [64, 256] axis 1), the stream kept busy.
Random data; each result's first rows are checked against a float64 NumPy FFT before timing.

    python3 -m pip install "nvmath-python[cu13]==1.0.0" cupy-cuda13x
    python3 bench/peers/nvmath_fft_work_areas.py [--quick] [--reps 15] [--seed 1]
"""

import argparse
import time

import cupy as cp
import numpy as np
import nvmath


def cases(quick: bool):
    big, row, cube = (1024, 1 << 16, 128) if quick else (8192, 1 << 20, 512)
    c, r = np.complex64, np.float32
    return [
        ((big, big), c, (0, 1)), ((64, row), c, (1,)), ((64, row), r, (1,)), ((big, big), r, (0, 1)),
        ((cube,) * 3, c, (0, 1, 2)), ((cube,) * 3, r, (0, 1, 2)), ((256,) * 3, c, (0, 1, 2)),
        ((128,) * 3, r, (0, 1, 2)), ((4096, 16384), c, (1,)), ((4096, 16384), r, (1,)), ((1024, 4099), c, (1,)),
        ((16, 1 << 22), c, (1,)), ((2048, 2048), c, (0, 1)), ((1024, 1024), r, (0, 1)), ((32768, 1024), c, (0,)),
        ((8, 1000003), c, (1,)),
    ]


def name_of(shape, dtype, axes) -> str:
    kind = "C2C c64" if dtype == np.complex64 else "R2C f32"
    return f"{kind} [{', '.join(map(str, shape))}] axes {' '.join(map(str, axes))}"


def random(shape, dtype, rng):
    x = rng.standard_normal(shape, dtype=np.float32)
    if dtype == np.complex64:
        x = (x + 1j * rng.standard_normal(shape, dtype=np.float32)).astype(np.complex64)
    return cp.asarray(x)


def check(fft_object, x, axes, dtype) -> float:
    y = fft_object.execute()
    rows = tuple(slice(0, 2) if a not in axes else slice(None) for a in range(x.ndim))
    host = cp.asnumpy(x).astype(np.complex128 if dtype == np.complex64 else np.float64)
    reference = (np.fft.fftn if dtype == np.complex64 else np.fft.rfftn)(host, axes=axes)[rows]
    error = float(np.max(np.abs(cp.asnumpy(y)[rows] - reference)) / np.max(np.abs(reference)))
    if error > 1e-4:
        raise SystemExit(f"nvmath result wrong for {x.shape}: relative error {error:.1e}")
    return error


def gpu_ms(stream, run) -> float:
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record(stream)
    run()
    stop.record(stream)
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    stream = cp.cuda.Stream(non_blocking=True)
    pool = cp.get_default_memory_pool()
    table = cases(args.quick)
    print(f"nvmath-python {nvmath.__version__}, CuPy {cp.__version__}, "
          f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    with stream:
        operands = [random(shape, dtype, rng) for shape, dtype, _ in table]
        stream.synchronize()
        base = pool.used_bytes()
        ffts = []
        estimates = []
        for x, (shape, dtype, axes) in zip(operands, table):
            try:
                estimates.append(nvmath.fft.estimate_workspace_size(nvmath.fft.FFT.create_key(x, axes=axes)))
            except (AttributeError, TypeError, ValueError) as e:  # the key API differs between releases
                estimates.append(None)
                print(f"  estimate_workspace_size unavailable for {shape}: {e}")
            f = nvmath.fft.FFT(x, axes=axes, stream=stream)
            f.plan(stream=stream)
            check(f, x, axes, dtype)
            ffts.append(f)
        stream.synchronize()
        held = pool.used_bytes() - base  # workspaces, plus the one result each check left alive
        known = [e for e in estimates if e is not None]
        print(f"(a) workspace bytes of the 16 plans (estimate_workspace_size): sum {sum(known) / 2**20:.1f} MiB, "
              f"largest {max(known, default=0) / 2**20:.1f} MiB; CuPy pool bytes held beyond the operands with the "
              f"16 objects alive: {held / 2**20:.1f} MiB")

        print(f"(b) GPU time per call, the 16 in turn on one stream (median of {args.reps} rounds)")
        print(f"    {'shape':40s} {'keep ms':>10s} {'release ms':>11s}")
        total_keep = total_release = 0.0
        for i, (shape, dtype, axes) in enumerate(table):
            keep, release = [], []
            previous = ffts[i - 1]
            for _ in range(args.reps):
                previous.execute(stream=stream)
                keep.append(gpu_ms(stream, lambda: ffts[i].execute(stream=stream)))
                previous.execute(stream=stream)
                release.append(gpu_ms(stream, lambda: ffts[i].execute(stream=stream, release_workspace=True)))
            k, r = float(np.median(keep)), float(np.median(release))
            total_keep += k
            total_release += r
            print(f"    {name_of(shape, dtype, axes):40s} {k:10.4f} {r:11.4f}")
        print(f"    {'all 16':40s} {total_keep:10.4f} {total_release:11.4f}")
        for f in ffts:
            f.free()

        small = random((64, 256), np.complex64, rng)
        with nvmath.fft.FFT(small, axes=[1], stream=stream) as f:
            f.plan(stream=stream)
            for _ in range(100):
                f.execute(stream=stream)
            stream.synchronize()
            times = []
            for _ in range(21):
                stream.launch_host_func(lambda _: time.sleep(0.03), None)  # keep the GPU busy: host time only
                start = time.perf_counter()
                for _ in range(200):
                    f.execute(stream=stream)
                times.append((time.perf_counter() - start) / 200 * 1e6)
                stream.synchronize()
        print(f"(c) host time of a small execute (c64 [64, 256] axis 1): {float(np.median(times)):.3f} us")


if __name__ == "__main__":
    main()
