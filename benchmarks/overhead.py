"""Per-op dispatcher overhead: one op on tiny, small and large tensors, side by side.

Raw NumPy, ember on the CPU, ember with a graph recorded (requires_grad), and PyTorch eager
CPU (when installed), one run, medians in microseconds and ratios.  Usage:

    python benchmarks/overhead.py [--device cpu] [--repeat 7]
"""
from __future__ import annotations

import argparse
import statistics
import timeit

import ember
import numpy as np


def median_us(fn, number: int, repeat: int) -> float:
    fn()
    times = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def measure(rng, shape, number, args, torch) -> list[dict]:
    """One row per op for one shape."""
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
    rows = []
    for name, (np_fn, em_fn, emg_fn) in ops.items():
        n = number if shape != (1000, 1000) or name != "a @ b" else 5
        row = {"op": name, "shape": "x".join(map(str, shape)),
               "numpy": median_us(np_fn, n, args.repeat),
               "ember": median_us(em_fn, n, args.repeat),
               "ember+grad": median_us(emg_fn, n, args.repeat)}
        if torch is not None:
            row["torch"] = median_us(tops[name][0], n, args.repeat)
            row["torch+grad"] = median_us(tops[name][1], n, args.repeat)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    rows = []
    for shape, number in [((1,), 20000), ((32, 32), 20000), ((1000, 1000), 20)]:
        rows += measure(rng, shape, number, args, torch)
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


if __name__ == "__main__":
    main()
