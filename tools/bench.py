"""`ember bench`: per-op dispatcher overhead on a device, side by side with NumPy and PyTorch.

One op (a + b, a @ b, a.sum()) on 1-element, 32x32 and 1000x1000 float32 tensors: raw
NumPy, ember, ember with a graph recorded (requires_grad), and PyTorch eager CPU when it is
installed; medians in microseconds and ratios, one run.  On a device other than the CPU
the ember figures include waiting for the kernels (results held, then a sync).
benchmarks/overhead.py runs it too.  `--workloads` prints bench_workloads.py's table instead:
LSTM, GRU, conv2d, the MLP and demo CNN train steps, DataLoader, atan2 and bitwise_and,
each against PyTorch eager (NumPy for the last two).
"""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", default="cpu", help="the ember device to time (cpu)")
    parser.add_argument("--repeat", type=int, default=7, help="timing repeats (median)")
    parser.add_argument("--quick", action="store_true",
                        help="a twentieth of the iterations (a smoke run, rough figures)")
    parser.add_argument("--workloads", action="store_true",
                        help="time the workloads (LSTM, GRU, conv2d, train steps, DataLoader, "
                             "atan2, bitwise_and) against PyTorch instead of single ops")


def median_us(fn, number: int, repeat: int, sync=None) -> float:
    """Median time of one call. With `sync` (a device that queues or defers work) a batch
    of calls keeps every result and waits for the device before the clock stops: the
    figure is then what an op costs including its kernel, not the time to queue it (and
    OpenCL never computes a result nobody holds)."""
    import statistics
    import timeit
    if sync is not None:
        def batch(fn=fn):
            keep = [fn() for _ in range(number)]
            sync()
            return keep
        batch()
        times = timeit.repeat(batch, number=1, repeat=repeat)
        return statistics.median(times) / number * 1e6
    fn()
    times = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def measure(rng, shape, number, args, torch) -> list[dict]:
    """One row per op for one shape."""
    import ember
    import numpy as np
    an = rng.standard_normal(shape).astype(np.float32)
    bn = rng.standard_normal(shape).astype(np.float32)
    a = ember.tensor(an, device=args.device)
    b = ember.tensor(bn, device=args.device)
    ag = a.detach().requires_grad_()
    ops = {
        "a + b": (lambda: an + bn, lambda: a + b, lambda: ag + b),
        "a @ b": (lambda: an @ bn, lambda: a @ b, lambda: ag @ b),
        "a.sum()": (lambda: an.sum(), lambda: a.sum(), lambda: ag.sum()),
    }
    if torch is not None:
        at, bt = torch.from_numpy(an), torch.from_numpy(bn)
        atg = at.clone().requires_grad_()
        tops = {"a + b": (lambda: at + bt, lambda: atg + bt),
                "a @ b": (lambda: at @ bt, lambda: atg @ bt),
                "a.sum()": (lambda: at.sum(), lambda: atg.sum())}
    dev = a.device
    sync = None if dev.type == "cpu" else (lambda: ember.synchronize(dev))
    rows = []
    for name, (np_fn, em_fn, emg_fn) in ops.items():
        n = number if shape != (1000, 1000) or name != "a @ b" else 5
        row = {"op": name, "shape": "x".join(map(str, shape)),
               "numpy": median_us(np_fn, n, args.repeat),
               "ember": median_us(em_fn, n, args.repeat, sync),
               "ember+grad": median_us(emg_fn, n, args.repeat, sync)}
        if torch is not None:
            row["torch"] = median_us(tops[name][0], n, args.repeat)
            row["torch+grad"] = median_us(tops[name][1], n, args.repeat)
        rows.append(row)
    return rows


def run(args: argparse.Namespace) -> int:
    """Print the table; returns 0."""
    if args.workloads:
        from . import bench_workloads
        return bench_workloads.run(args)
    import numpy as np

    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    rows = []
    scale = 20 if args.quick else 1
    for shape, number in [((1,), 20000), ((32, 32), 20000), ((1000, 1000), 20)]:
        rows += measure(rng, shape, max(1, number // scale), args, torch)
    cols = ["numpy", "ember", "ember+grad"] + (["torch", "torch+grad"] if torch else [])
    print(f"device={args.device}  (median microseconds per op; torch with 1 thread)")
    print(f"{'op':9}{'shape':>10}" + "".join(f"{c:>12}" for c in cols) +
          f"{'ember-np':>10}{'ember/torch':>12}{'grad/torch':>11}")
    for r in rows:
        line = f"{r['op']:9}{r['shape']:>10}" + "".join(f"{r[c]:12.2f}" for c in cols)
        line += f"{r['ember'] - r['numpy']:+10.2f}"
        if torch:
            line += f"{r['ember'] / r['torch']:12.2f}{r['ember+grad'] / r['torch+grad']:11.2f}"
        print(line)
    return 0
