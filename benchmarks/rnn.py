"""Recurrent layers: forward + backward time of ember's LSTM/GRU against PyTorch's, side by side.

The default shape is the PyTorch word language model's: sequence 35, batch 20, input and
hidden 200, 2 layers.  Both start from the same weights and inputs; one pass of each is
checked against the other before timing.  Medians in ms, and ember's time as a multiple of
PyTorch's.

    python benchmarks/rnn.py [--steps 20] [--threads 1] [--seq 35] [--batch 20]
                             [--hidden 200] [--layers 2] [--profile]

--threads sets the BLAS and PyTorch thread count (1 by default: it compares the
implementations, not the thread pools).  --profile runs cProfile over ember's LSTM steps.

"LSTM products" is the floor NumPy's BLAS sets: the matrix products of ember's LSTM step
alone (per layer and direction: the input projection, 35 recurrent products h @ W_hh^T as
ember's kernel runs them, d x, d W_ih, 35 d h_prev products, d W_hh), same shapes, no
nonlinearity, copy or bookkeeping.  Its ratio to PyTorch says how much of PyTorch's whole
step (oneDNN's fused RNN with its own GEMMs) NumPy's products alone take.

"faults/step": minor page faults per pass of each.  PyTorch's LSTM in a fresh process
faults ~4,700 times a pass (glibc hands its freed activations back and the next pass
touches them anew, ~5 ms of ~24); beside ember in one process it faults 0 or ~3,300 times
depending on what ran before it (ember's long-lived arrays keep the heap mapped), so the
LSTM ratio moves between ~1.0 and ~1.25 with no change to either side.  Read the ratio
with a torch fault count of 0 as kernel against kernel (`ember bench --workloads` times
the same pairs; median_ms in ember/tools/bench_workloads.py says more).
"""
from __future__ import annotations

import argparse
import cProfile
import pstats

import ember
import numpy as np
from ember.tools.bench_workloads import layer_pair

# round-robin medians and the BLAS thread pinning, shared with train_step.py
from train_step import median_ms, pin_blas_threads


def build(kind: str, torch, args, rng):
    """(ember step, torch step): forward + backward of the same layer on the same data."""
    return layer_pair(torch, lambda lib: getattr(lib.nn, kind)(args.hidden, args.hidden,
                                                              args.layers),
                      (args.seq, args.batch, args.hidden), rng)


def lstm_products(args, rng):
    """The matrix products of ember's LSTM forward + backward (backends/cpu/rnn.py and the
    input projection's linear), in the layouts ember runs them, and nothing else."""
    f = np.float32
    t, b, n = args.seq, args.batch, args.hidden
    x = rng.standard_normal((t * b, n)).astype(f)
    w_ih = rng.standard_normal((4 * n, n)).astype(f)
    w_blocks = rng.standard_normal((4, n, n)).astype(f)          # h @ W_hh^T, gate by gate
    split = 2 if n % 2 == 0 else 1
    w_back = rng.standard_normal((4, split, n // split, n)).astype(f)   # d h_prev, split
    h = rng.standard_normal((b, n)).astype(f)
    d_split = rng.standard_normal((4, split, b, n // split)).astype(f)
    gi = np.empty((t * b, 4 * n), f)
    acc = np.empty((4, b, n), f)
    acc_back = np.empty((4, split, b, n), f)
    dg = rng.standard_normal((t * b, 4 * n)).astype(f)
    dx, dw = np.empty((t * b, n), f), np.empty((4 * n, n), f)

    def step():
        for _ in range(args.layers):
            np.matmul(x, w_ih.T, out=gi)                # the input projection
            for _ in range(t):
                np.matmul(h, w_blocks, out=acc)         # the recurrent product
            for _ in range(t):
                np.matmul(d_split, w_back, out=acc_back)   # d h_prev
            np.matmul(dg[b:].T, x[:-b], out=dw)         # d W_hh
            np.matmul(dg, w_ih, out=dx)                 # d x
            np.matmul(dg.T, x, out=dw)                  # d W_ih
    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="timed passes per layer")
    parser.add_argument("--threads", type=int, default=1, help="BLAS and PyTorch threads")
    parser.add_argument("--seq", type=int, default=35)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=200)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--profile", action="store_true", help="profile ember's LSTM")
    args = parser.parse_args()
    pin_blas_threads(args.threads)
    import torch
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"forward + backward, seq {args.seq}, batch {args.batch}, hidden {args.hidden}, "
          f"{args.layers} layers; median of {args.steps}, {args.threads} thread(s); "
          f"ember {ember.__version__}, PyTorch {torch.__version__}")
    print(f"{'layer':<8}{'ember ms':>10}{'torch ms':>10}{'ember/torch':>13}"
          f"{'faults/step (ember, torch)':>29}")
    for kind in ("LSTM", "GRU"):
        e_step, t_step = build(kind, torch, args, rng)
        steps = {"ember": e_step, "torch": t_step}
        if kind == "LSTM":
            steps["products"] = lstm_products(args, rng)
        faults: dict = {}
        ms = median_ms(steps, args.steps, faults=faults)
        print(f"{kind:<8}{ms['ember']:>10.2f}{ms['torch']:>10.2f}"
              f"{ms['ember'] / ms['torch']:>13.2f}"
              f"{faults.get('ember', 0):>15.0f}{faults.get('torch', 0):>8.0f}")
        if kind == "LSTM":
            print(f"{'LSTM products':<16}{ms['products']:>12.2f}"
                  f"{ms['products'] / ms['torch']:>15.2f}   (NumPy's products alone)")
        if args.profile and kind == "LSTM":
            prof = cProfile.Profile()
            for _ in range(args.steps):
                prof.runcall(e_step)
            pstats.Stats(prof).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
