"""DLPack hand-offs and ember.array_api functions, side by side with NumPy and PyTorch.

DLPack: microseconds to hand a (1000, 1000) float32 array across (zero copy, so the cost
is the protocol's, independent of size).  array_api: medians in ms for one call on 10**5
elements (float32; int64 for bitwise) and the ratio to NumPy, ember on `--device` (cpu by
default; opencl:0 includes waiting for the result, after its kernels are built and fused).
One run, 1 thread, round robin:

    python benchmarks/interop.py [--device cpu] [--repeat 15]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import ember  # noqa: E402
import ember.array_api as xe  # noqa: E402
import numpy as np  # noqa: E402

try:
    import torch  # noqa: E402
    torch.set_num_threads(1)
except ImportError:                               # the compare extra is not installed
    torch = None


def median(fns: dict, repeat: int, warmup: int = 2) -> dict:
    times = {k: [] for k in fns}
    for i in range(repeat + warmup):              # warm-up rounds build the kernels
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            if i >= warmup:
                times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def dlpack(repeat: int) -> None:
    a = np.ones((1000, 1000), np.float32)
    t = ember.from_numpy(a)
    rows = {"np.from_dlpack(ndarray)": lambda: np.from_dlpack(a),
            "np.from_dlpack(ember)": lambda: np.from_dlpack(t),
            "ember.from_dlpack(ndarray)": lambda: ember.from_dlpack(a)}
    if torch is not None:
        tt = torch.from_numpy(a)
        rows.update({"torch.from_dlpack(ndarray)": lambda: torch.from_dlpack(a),
                     "torch.from_dlpack(ember)": lambda: torch.from_dlpack(t),
                     "ember.from_dlpack(torch)": lambda: ember.from_dlpack(tt)})
    print(f"{'DLPack hand-off':<28} {'us':>8}")
    for name, s in median(rows, repeat).items():
        print(f"{name:<28} {s * 1e6:8.1f}")


def functions(device: str, repeat: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(100_000).astype(np.float32)
    y = rng.standard_normal(100_000).astype(np.float32)
    i = rng.integers(-2**62, 2**62, 100_000)
    j = rng.integers(-2**62, 2**62, 100_000)
    s = np.sort(x)
    ex, ey, ei, ej, es = (xe.asarray(v, device=device) for v in (x, y, i, j, s))
    sync = (lambda: ember.synchronize(device)) if device != "cpu" else (lambda: None)
    cases = {      # name: (numpy, ember, torch or None)
        "atan": (lambda: np.arctan(x), lambda: xe.atan(ex), torch and (lambda: tx.atan())),
        "sinh": (lambda: np.sinh(x), lambda: xe.sinh(ex), torch and (lambda: tx.sinh())),
        "hypot": (lambda: np.hypot(x, y), lambda: xe.hypot(ex, ey),
                  torch and (lambda: torch.hypot(tx, ty))),
        "logaddexp": (lambda: np.logaddexp(x, y), lambda: xe.logaddexp(ex, ey),
                      torch and (lambda: torch.logaddexp(tx, ty))),
        "bitwise_and int64": (lambda: np.bitwise_and(i, j), lambda: xe.bitwise_and(ei, ej),
                              torch and (lambda: ti & tj)),
        "cumulative_sum": (lambda: np.cumsum(x), lambda: xe.cumulative_sum(ex),
                           torch and (lambda: tx.cumsum(0))),
        "sort": (lambda: np.sort(x, kind="stable"), lambda: xe.sort(ex),
                 torch and (lambda: tx.sort(stable=True))),
        "searchsorted": (lambda: np.searchsorted(s, x), lambda: xe.searchsorted(es, ex),
                         torch and (lambda: torch.searchsorted(ts, tx))),
        "unique_values": (lambda: np.unique(x), lambda: xe.unique_values(ex),
                          torch and (lambda: torch.unique(tx))),
    }
    if torch is not None:
        tx, ty, ti, tj, ts = (torch.from_numpy(v) for v in (x, y, i, j, s))
    print(f"\n{'array_api on ' + device:<20} {'numpy ms':>9} {'ember ms':>9} {'/ numpy':>8} "
          f"{'torch ms':>9}")
    for name, (np_fn, em_fn, th_fn) in cases.items():
        fns = {"numpy": np_fn, "ember": lambda f=em_fn: (f(), sync())}
        if th_fn:
            fns["torch"] = th_fn
        # OpenCL fuses a chain of elementwise ops after meeting it twice, and its parts
        # over the next calls: time it once that has settled
        m = median(fns, repeat, warmup=2 if device == "cpu" else 8)
        th = f"{m['torch'] * 1e3:9.3f}" if "torch" in m else f"{'-':>9}"
        print(f"{name:<20} {m['numpy'] * 1e3:9.3f} {m['ember'] * 1e3:9.3f} "
              f"{m['ember'] / m['numpy']:7.1f}x {th}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    dlpack(args.repeat)
    functions(args.device, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
