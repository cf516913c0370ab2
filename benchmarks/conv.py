"""conv2d forward + backward: ember against PyTorch eager, side by side, 1 thread.

Shapes (N, C, H, W) -> O channels, kernel k, stride s, groups g; each row is one
forward and a backward to the input, weight and bias from the same weights and data (one
pass of each checked against the other before timing).  Medians in ms and ember's time as
a multiple of PyTorch's.  "numpy" is a hand-written NumPy floor for the plain (not grouped,
not transposed) rows: im2col as one strided copy into the (C*kh*kw, N*L) layout, then the
forward, weight- and input-gradient products as single 2-D GEMMs and col2im as kh*kw
strided adds: what OpenBLAS's GEMMs alone leave room for (its ratio to PyTorch is the
"numpy/torch" column).  The last columns count minor page faults per pass (rnn.py's
docstring says why they matter: a side that faults pays ~3 us a page).

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
    n_step = numpy_step(row, x, t_layer.weight.detach().numpy(), t_layer.bias.detach().numpy(),
                        gy)
    if n_step is not None:
        got, gx = n_step()[:2]
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
        tx.grad = None
        t_step()
        np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-3, atol=1e-3)
    return e_step, t_step, n_step


def numpy_step(row, x, weight, bias, gy):
    """The conv forward + backward in NumPy (float32 throughout), or None for grouped and
    transposed rows: returns (out, grad_x)."""
    n, c, h, w, o, k, s, p, g, transposed = row
    if g != 1 or transposed:
        return None
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    w2 = weight.reshape(o, c * k * k)
    gt = np.ascontiguousarray(gy.reshape(n, o, oh * ow).transpose(1, 0, 2)).reshape(o, -1)

    def step():
        xp = np.zeros((n, c, h + 2 * p, w + 2 * p), np.float32)
        xp[:, :, p:p + h, p:p + w] = x
        s0, s1, s2, s3 = xp.strides
        win = np.lib.stride_tricks.as_strided(
            xp, (c, k, k, n, oh, ow), (s1, s2, s3, s0, s * s2, s * s3), writeable=False)
        cols = np.ascontiguousarray(win).reshape(c * k * k, n * oh * ow)
        out = (w2 @ cols).reshape(o, n, oh, ow).transpose(1, 0, 2, 3) + bias.reshape(o, 1, 1)
        gw = gt @ cols.T                                    # (O, C*k*k): one GEMM
        gb = gt.sum(1)
        dcols = (w2.T @ gt).reshape(c, k, k, n, oh, ow)     # (C*k*k, N*L): one GEMM
        gx = np.zeros((c, n, h + 2 * p, w + 2 * p), np.float32)
        for i in range(k):
            for j in range(k):
                gx[:, :, i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s] += dcols[:, i, j]
        return out, gx[:, :, p:p + h, p:p + w].transpose(1, 0, 2, 3), gw, gb
    return step


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
    print(f"{'shape':<26}{'ember ms':>10}{'torch ms':>10}{'numpy ms':>10}{'ember/torch':>13}"
          f"{'numpy/torch':>13}{'faults (ember, torch)':>24}")
    names = args.rows.split(",") if args.rows else list(ROWS)
    for name in names:
        e_step, t_step, n_step = build(torch, ROWS[name], rng)
        steps = {"ember": e_step, "torch": t_step}
        if n_step is not None:
            steps["numpy"] = n_step
        faults: dict = {}
        ms = median_ms(steps, args.steps, faults=faults)
        floor = (f"{ms['numpy']:>10.2f}" if "numpy" in ms else f"{'-':>10}")
        floor_ratio = (f"{ms['numpy'] / ms['torch']:>13.2f}" if "numpy" in ms else f"{'':>13}")
        print(f"{name:<26}{ms['ember']:>10.2f}{ms['torch']:>10.2f}{floor}"
              f"{ms['ember'] / ms['torch']:>13.2f}{floor_ratio}"
              f"{faults.get('ember', 0):>14.0f}{faults.get('torch', 0):>8.0f}", flush=True)
        if args.profile == name:
            prof = cProfile.Profile()
            for _ in range(args.steps):
                prof.runcall(e_step)
            pstats.Stats(prof).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
