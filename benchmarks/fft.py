"""ember.fft on cpu and opencl:0 against NumPy (numpy.fft), SciPy (scipy.fft) and PyTorch
(torch.fft), one thread each: median ms per call, timed round robin, and the ratio to NumPy.

    python benchmarks/fft.py [--size 1024] [--steps 15]

The transforms: fft2 of a (size, size) float32 array (complex64 out: issue 31's figure),
rfft2 of it, and fft of 256 complex64 rows of length `size` (and of a prime length, 1031,
which takes Bluestein's algorithm on OpenCL).  OpenCL times include a synchronize.
Nothing here is asserted: the tests check the values.

Figures (2026-12-02, the 2-core shared development machine at load 5-6, NumPy 2.4, SciPy
1.17, torch 2.13, PoCL on the CPU as opencl:0; median ms, one thread, ratio to NumPy; two
runs):

    fft2 (1024,1024) f32   numpy 104.5 / 71.9   scipy 0.25x / 0.27x   torch 0.32x / 0.30x
                           ember cpu 28.9 / 19.8 (0.28x / 0.28x)
                           ember opencl:0 93.3 / 70.0 (0.89x / 0.97x)
    rfft2 (1024,1024) f32  ember cpu 0.46x / 0.39x   ember opencl:0 2.31x / 2.12x
    fft (256,1024) c64     ember cpu 0.37x / 0.42x   ember opencl:0 1.64x / 3.07x
    fft (256,1031) c64     ember cpu 0.45x / 0.57x   ember opencl:0 4.00x / 3.42x

issue 31's bar, the cpu fft2 within 1.5x NumPy's time, holds (0.28x; ember's CPU kernel
is scipy.fft, as fast as SciPy called directly). opencl:0 is PoCL's CPU device: its
Stockham passes come near NumPy on fft2 (0.9-1.0x); Bluestein (1031, a prime) costs 3.4-4x.
"""
from __future__ import annotations

import argparse

from train_step import median_ms, pin_blas_threads


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    pin_blas_threads(args.threads)
    import ember
    import numpy as np
    rng = np.random.default_rng(0)
    n = args.size
    a = rng.standard_normal((n, n)).astype(np.float32)
    rows = (rng.standard_normal((256, n)) + 1j * rng.standard_normal((256, n))).astype(
        np.complex64)
    prime = (rng.standard_normal((256, 1031)) + 1j * rng.standard_normal((256, 1031))).astype(
        np.complex64)
    cases = {
        f"fft2 ({n},{n}) f32": {"numpy": lambda: np.fft.fft2(a)},
        f"rfft2 ({n},{n}) f32": {"numpy": lambda: np.fft.rfft2(a)},
        f"fft (256,{n}) c64": {"numpy": lambda: np.fft.fft(rows)},
        "fft (256,1031) c64": {"numpy": lambda: np.fft.fft(prime)},
    }
    arrays = dict(zip(cases, (a, a, rows, prime)))
    ember_fns = dict(zip(cases, (ember.fft.fft2, ember.fft.rfft2, ember.fft.fft, ember.fft.fft)))
    try:
        import scipy.fft as sfft
        for (name, side), fn in zip(cases.items(), (sfft.fft2, sfft.rfft2, sfft.fft, sfft.fft)):
            side["scipy"] = (lambda f, x: lambda: f(x))(fn, arrays[name])
    except ImportError:
        pass
    try:
        import torch
        torch.set_num_threads(args.threads)
        tfns = (torch.fft.fft2, torch.fft.rfft2, torch.fft.fft, torch.fft.fft)
        for (name, side), fn in zip(cases.items(), tfns):
            side["torch"] = (lambda f, x: lambda: f(x))(fn, torch.from_numpy(arrays[name]))
    except ImportError:
        pass
    for dev in ("cpu", "opencl:0"):
        try:
            ember.zeros(1, device=dev)
        except ember.EmberError as exc:
            print(f"{dev}: skipped ({exc})")
            continue
        for name, side in cases.items():
            x = ember.tensor(arrays[name], device=dev)
            f = ember_fns[name]

            def call(f=f, x=x, dev=dev):
                out = f(x)
                ember.synchronize(dev)
                return out
            side[f"ember {dev}"] = call
    print(f"median ms of {args.steps} calls, {args.threads} thread(s) (ratio to NumPy)")
    for name, side in cases.items():
        ms = median_ms(side, args.steps)
        base = ms["numpy"]
        cells = "  ".join(f"{k} {v:8.2f} ({v / base:4.2f}x)" for k, v in ms.items())
        print(f"{name:22} {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
