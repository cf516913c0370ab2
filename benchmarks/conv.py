"""conv2d forward + backward: ember against PyTorch eager, side by side, 1 thread.

Shapes (N, C, H, W) -> O channels, kernel k, stride s, groups g; each row is one
forward and a backward to the input, weight and bias from the same weights and data (one
pass of each checked against the other before timing).  Medians in ms and ember's time as
a multiple of PyTorch's.

    python benchmarks/conv.py [--steps 20] [--threads 1] [--profile ROW]

--profile runs cProfile over ember's steps of the row with that name.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats

import ember
import numpy as np

# round-robin medians and the BLAS thread pinning, shared with train_step.py
from train_step import median_ms, pin_blas_threads

# name: (N, C, H, W, O, k, stride, padding, groups, transposed)
ROWS = {
    "3x3 64->64 16x16 b32": (32, 64, 16, 16, 64, 3, 1, 1, 1, False),
    "1x1 64->128 16x16 b32": (32, 64, 16, 16, 128, 1, 1, 0, 1, False),
    "3x3 s2 32->64 32x32 b16": (16, 32, 32, 32, 64, 3, 2, 1, 1, False),
    "3x3 g4 64->64 16x16 b16": (16, 64, 16, 16, 64, 3, 1, 1, 4, False),
    "7x7 s2 3->64 64x64 b8": (8, 3, 64, 64, 64, 7, 2, 3, 1, False),
    "demo 3x3 1->16 8x8 b32": (32, 1, 8, 8, 16, 3, 1, 1, 1, False),
    "T 4x4 s2 64->32 8x8 b16": (16, 64, 8, 8, 32, 4, 2, 1, 1, True),
}


def build(torch, row, rng):
    n, c, h, w, o, k, s, p, g, transposed = row
    if transposed:
        t_layer = torch.nn.ConvTranspose2d(c, o, k, s, p, groups=g)
        e_layer = ember.nn.ConvTranspose2d(c, o, k, s, p, groups=g)
    else:
        t_layer = torch.nn.Conv2d(c, o, k, s, p, groups=g)
        e_layer = ember.nn.Conv2d(c, o, k, s, p, groups=g)
    e_layer.load_state_dict({name: ember.tensor(v.detach().numpy())
                             for name, v in t_layer.state_dict().items()})
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    out_shape = t_layer(tx).shape
    gy = rng.standard_normal(tuple(out_shape)).astype(np.float32)
    tg, eg = torch.tensor(gy), ember.tensor(gy)

    def e_step():
        out = e_layer(ex)
        out.backward(eg)
        return out

    def t_step():
        out = t_layer(tx)
        out.backward(tg)
        return out

    got, want = e_step().detach().numpy(), t_step().detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-3)
    return e_step, t_step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="timed passes per row")
    parser.add_argument("--threads", type=int, default=1, help="BLAS and PyTorch threads")
    parser.add_argument("--profile", default=None, help="profile ember's steps of this row")
    parser.add_argument("--rows", default=None, help="comma-separated row names (default all)")
    args = parser.parse_args()
    pin_blas_threads(args.threads)
    import torch
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"conv2d forward + backward; median of {args.steps}, {args.threads} thread(s); "
          f"ember {ember.__version__}, PyTorch {torch.__version__}")
    print(f"{'shape':<26}{'ember ms':>10}{'torch ms':>10}{'ember/torch':>13}")
    names = args.rows.split(",") if args.rows else list(ROWS)
    for name in names:
        e_step, t_step = build(torch, ROWS[name], rng)
        ms = median_ms({"ember": e_step, "torch": t_step}, args.steps)
        print(f"{name:<26}{ms['ember']:>10.2f}{ms['torch']:>10.2f}"
              f"{ms['ember'] / ms['torch']:>13.2f}", flush=True)
        if args.profile == name:
            prof = cProfile.Profile()
            for _ in range(args.steps):
                prof.runcall(e_step)
            pstats.Stats(prof).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
