"""argsort / sort / topk and cumsum on ember (cpu and opencl:0) vs NumPy and PyTorch, in one
run, one thread each: medians of repeated calls, and ratios to NumPy.

    python benchmarks/sort_scan.py [--rows 256] [--cols 1024] [--repeat 15]

Shapes are (rows, cols) float32, sorted/scanned along the last dim; OpenCL times include a
synchronize (the result is waited for).  Nothing here is asserted: tests check values.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "POCL_MAX_PTHREAD_COUNT"):
    os.environ.setdefault(_var, "1")


def median_ms(fn, repeat: int) -> float:
    fn()                                           # warm-up: builds kernels, fills pools
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    import ember
    import numpy as np
    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.rows, args.cols)).astype(np.float32)
    sides = {"numpy": {"argsort": lambda: np.argsort(a, axis=1, kind="stable"),
                       "topk(10)": lambda: np.argsort(-a, axis=1, kind="stable")[:, :10],
                       "cumsum": lambda: np.cumsum(a, axis=1)}}
    try:
        import torch
        torch.set_num_threads(1)
        t = torch.from_numpy(a)
        sides["torch"] = {"argsort": lambda: torch.argsort(t, dim=1, stable=True),
                          "topk(10)": lambda: torch.topk(t, 10, 1),
                          "cumsum": lambda: torch.cumsum(t, 1)}
    except ImportError:
        pass
    for dev in ("cpu", "opencl:0"):
        try:
            x = ember.tensor(a, device=dev)
        except ember.EmberError as exc:
            print(f"{dev}: skipped ({exc})")
            continue

        def waited(fn, dev=dev):
            def call():
                out = fn()
                ember.synchronize(dev)
                return out
            return call
        sides[f"ember {dev}"] = {"argsort": waited(lambda x=x: ember.argsort(x, 1)),
                                 "topk(10)": waited(lambda x=x: ember.topk(x, 10, 1)),
                                 "cumsum": waited(lambda x=x: ember.cumsum(x, 1))}
    print(f"shape ({args.rows}, {args.cols}) float32, along dim 1; median ms (ratio to NumPy)")
    ops = list(sides["numpy"])
    print(f"{'':16}" + "".join(f"{op:>20}" for op in ops))
    base = {op: median_ms(sides["numpy"][op], args.repeat) for op in ops}
    for name, fns in sides.items():
        cells = []
        for op in ops:
            ms = base[op] if name == "numpy" else median_ms(fns[op], args.repeat)
            cells.append(f"{ms:9.3f} ({ms / base[op]:5.1f}x)")
        print(f"{name:16}" + "".join(f"{c:>20}" for c in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
