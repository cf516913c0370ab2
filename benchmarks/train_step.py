"""Time per training step: ember (eager and ember.compile) vs PyTorch vs hand-written NumPy.

Two models, each one step = forward, cross-entropy, backward, SGD (momentum 0.9) update:
- MLP 784-256-256-10, batch 128;
- the `ember demo` CNN (conv3x3(1->16) relu maxpool2, conv3x3(16->32) relu maxpool2,
  linear 128->10) on 1x8x8 images, batch 32 (the demo's).
"ember" is the eager step with SGD's default multi-tensor update (foreach), "ember loop"
the same with foreach=False (one ember op per term and parameter).
The NumPy version is the practical floor: the same math with a manual backward, no graph,
no dispatch.  All start from the same weights and data, and one step of each is
checked against the others before timing.  Medians in ms and ratios to NumPy.
"numpy tight" is the tight floor: the step as a careful hand-written NumPy program would
be (every array allocated once and written with out=, ReLU in place, the cross-entropy
gradient as (p - onehot) / N in one pass, SGD in place; the CNN channels-last with its
layout the frameworks', im2col as one strided copy); ratios to it come second.  "numpy
NHWC" is the tight CNN step channels-last (weights in the matching layout): what a layout
change buys on top (reported, not a target).

    python benchmarks/train_step.py [--steps 50] [--threads 1] [--profile] [--torch-compile]

"compiled" is the same ember step through ember.compile (captured, then replayed without
Python dispatch); --torch-compile adds torch.compile's step (inductor; its first calls
compile C++ and take a while).

--threads sets the BLAS (and PyTorch) thread count for all three; 1 by default, which
compares the implementations rather than the thread pools and stays steady on a busy
machine.

--profile runs cProfile over ember's steps and prints where the time goes: kernel time
(NumPy calls) against ember's own Python (dispatch, autograd, modules, optimizer).
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

import ember
import ember.optim
import numpy as np

# the models, the frameworks' step and the round-robin medians are `ember bench
# --workloads`'s (the other benchmarks import median_ms from here)
from ember.tools.bench_workloads import LR, MOMENTUM, median_ms  # noqa: F401
from ember.tools.bench_workloads import cnn as _cnn
from ember.tools.bench_workloads import framework_step as _framework_step
from ember.tools.bench_workloads import mlp as _mlp
from numpy.lib.stride_tricks import sliding_window_view


def pin_blas_threads(threads: int) -> None:
    """Run this benchmark with `threads` BLAS/OpenMP threads: BLAS reads its thread count
    once, when NumPy loads it, so the process starts again with the variables set."""
    if os.environ.get("OPENBLAS_NUM_THREADS") != str(threads):
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(threads)
        os.execv(sys.executable, [sys.executable, *sys.argv])


# --- the NumPy floor ---------------------------------------------------------------------------

def _softmax_xent(logits, y):
    """Loss and d loss / d logits of mean cross-entropy."""
    shifted = logits - logits.max(1, keepdims=True)
    e = np.exp(shifted)
    p = e / e.sum(1, keepdims=True)
    n = len(y)
    loss = -np.log(p[np.arange(n), y]).mean()
    p[np.arange(n), y] -= 1.0
    return loss, p / n


def _conv_forward(x, w, b):
    """3x3, stride 1, padding 1, by im2col: (N,C,H,W) -> (N,O,H,W); keeps cols for backward."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = sliding_window_view(xp, (3, 3), axis=(2, 3))             # N,C,H,W,3,3
    cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * wd, c * 9)
    out = cols @ w.reshape(len(w), -1).T + b                         # N*H*W, O
    return out.reshape(n, h, wd, -1).transpose(0, 3, 1, 2), cols


def _conv_backward(dout, cols, x_shape, w, need_dx):
    n, c, h, wd = x_shape
    d = dout.transpose(0, 2, 3, 1).reshape(n * h * wd, -1)           # N*H*W, O
    dw = (d.T @ cols).reshape(w.shape)
    db = d.sum(0)
    if not need_dx:
        return None, dw, db
    dcols = (d @ w.reshape(len(w), -1)).reshape(n, h, wd, c, 3, 3)
    dxp = np.zeros((n, c, h + 2, wd + 2), dout.dtype)
    for i in range(3):                                               # col2im: 9 shifted adds
        for j in range(3):
            dxp[:, :, i:i + h, j:j + wd] += dcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, 1:-1, 1:-1], dw, db


_WINDOW = ((0, 0), (0, 1), (1, 0), (1, 1))       # PyTorch's order: the first max wins


def _pool_forward(x):
    """2x2 max pool, stride 2: the max of the four strided quarters."""
    q = [x[:, :, i::2, j::2] for i, j in _WINDOW]
    return np.maximum(np.maximum(q[0], q[1]), np.maximum(q[2], q[3]))


def _pool_backward(dout, x, out):
    grad = np.zeros_like(x)
    taken = np.zeros(out.shape, bool)
    for i, j in _WINDOW:
        hit = (x[:, :, i::2, j::2] == out) & ~taken
        grad[:, :, i::2, j::2] = dout * hit
        taken |= hit
    return grad


class NumpyMLP:
    def __init__(self, params):
        self.params = [p.copy() for p in params]      # w1 b1 w2 b2 w3 b3, w as (out, in)
        self.bufs = [np.zeros_like(p) for p in self.params]

    def step(self, x, y):
        w1, b1, w2, b2, w3, b3 = self.params
        h1 = x @ w1.T + b1
        a1 = np.maximum(h1, 0)
        h2 = a1 @ w2.T + b2
        a2 = np.maximum(h2, 0)
        logits = a2 @ w3.T + b3
        loss, d3 = _softmax_xent(logits, y)
        da2 = d3 @ w3
        d2 = da2 * (h2 > 0)
        da1 = d2 @ w2
        d1 = da1 * (h1 > 0)
        grads = [d1.T @ x, d1.sum(0), d2.T @ a1, d2.sum(0), d3.T @ a2, d3.sum(0)]
        _sgd(self.params, self.bufs, grads)
        return loss


class NumpyCNN:
    def __init__(self, params):
        self.params = [p.copy() for p in params]      # cw1 cb1 cw2 cb2 fw fb
        self.bufs = [np.zeros_like(p) for p in self.params]

    def step(self, x, y):
        cw1, cb1, cw2, cb2, fw, fb = self.params
        z1, cols1 = _conv_forward(x, cw1, cb1)
        r1 = np.maximum(z1, 0)
        p1 = _pool_forward(r1)
        z2, cols2 = _conv_forward(p1, cw2, cb2)
        r2 = np.maximum(z2, 0)
        p2 = _pool_forward(r2)
        flat = p2.reshape(len(x), -1)
        logits = flat @ fw.T + fb
        loss, d = _softmax_xent(logits, y)
        dfw, dfb = d.T @ flat, d.sum(0)
        dp2 = (d @ fw).reshape(p2.shape)
        dz2 = _pool_backward(dp2, r2, p2) * (z2 > 0)
        dp1, dcw2, dcb2 = _conv_backward(dz2, cols2, p1.shape, cw2, True)
        dz1 = _pool_backward(dp1, r1, p1) * (z1 > 0)
        _, dcw1, dcb1 = _conv_backward(dz1, cols1, x.shape, cw1, False)
        _sgd(self.params, self.bufs, [dcw1, dcb1, dcw2, dcb2, dfw, dfb])
        return loss


def _sgd(params, bufs, grads):
    for p, buf, g in zip(params, bufs, grads):
        buf *= MOMENTUM
        buf += g
        p -= LR * buf


# --- the tight NumPy floor ---------------------------------------------------------------------
# The same math written as a careful hand-written step would be: every array the step needs is
# allocated once (in __init__), kernels write into them with out=, ReLU runs in place, the
# cross-entropy gradient is (p - onehot) / N in one pass over p, and SGD updates in place.
# im2col is one strided copy into a persistent buffer whose padding border stays zero.

def _tight_xent(z, p, s, rows, y):
    """Loss of mean cross-entropy from logits `z` (overwritten: z - max); leaves
    d loss / d z = (softmax - onehot) / N in `p`."""
    n = len(y)
    np.max(z, axis=1, keepdims=True, out=s)
    z -= s
    np.exp(z, out=p)
    np.sum(p, axis=1, keepdims=True, out=s)
    loss = float(np.log(s).sum() - z[rows, y].sum()) / n
    s *= n
    p /= s
    p[rows, y] -= 1.0 / n
    return loss


def _tight_sgd(params, bufs, grads, scratch):
    for p, buf, g, t in zip(params, bufs, grads, scratch):
        buf *= MOMENTUM
        buf += g
        np.multiply(buf, LR, out=t)
        p -= t


class TightMLP:
    torch_params = None                               # params is in PyTorch's layout

    def __init__(self, params, batch):
        self.params = [p.copy() for p in params]      # w1 b1 w2 b2 w3 b3, w as (out, in)
        self.bufs = [np.zeros_like(p) for p in self.params]
        self.grads = [np.empty_like(p) for p in self.params]
        self.scratch = [np.empty_like(p) for p in self.params]
        (h1, _), (h2, _), (k, _) = (w.shape for w in self.params[::2])
        f = np.float32
        self.a1, self.a2 = np.empty((batch, h1), f), np.empty((batch, h2), f)
        self.z, self.p, self.s = np.empty((batch, k), f), np.empty((batch, k), f), \
            np.empty((batch, 1), f)
        self.d2, self.d1 = np.empty((batch, h2), f), np.empty((batch, h1), f)
        self.m2, self.m1 = np.empty((batch, h2), bool), np.empty((batch, h1), bool)
        self.rows = np.arange(batch)

    def step(self, x, y):
        w1, b1, w2, b2, w3, b3 = self.params
        gw1, gb1, gw2, gb2, gw3, gb3 = self.grads
        a1, a2, z, p, d1, d2 = self.a1, self.a2, self.z, self.p, self.d1, self.d2
        np.matmul(x, w1.T, out=a1)
        a1 += b1
        np.maximum(a1, 0, out=a1)
        np.matmul(a1, w2.T, out=a2)
        a2 += b2
        np.maximum(a2, 0, out=a2)
        np.matmul(a2, w3.T, out=z)
        z += b3
        loss = _tight_xent(z, p, self.s, self.rows, y)            # p: d loss / d logits
        np.matmul(p.T, a2, out=gw3)
        np.sum(p, axis=0, out=gb3)
        np.matmul(p, w3, out=d2)
        np.greater(a2, 0, out=self.m2)
        d2 *= self.m2
        np.matmul(d2.T, a1, out=gw2)
        np.sum(d2, axis=0, out=gb2)
        np.matmul(d2, w2, out=d1)
        np.greater(a1, 0, out=self.m1)
        d1 *= self.m1
        np.matmul(d1.T, x, out=gw1)
        np.sum(d1, axis=0, out=gb1)
        _tight_sgd(self.params, self.bufs, self.grads, self.scratch)
        return loss


class _TightConv:
    """3x3, stride 1, padding 1, by im2col over input written into the interior of `xp`
    (the padded input; its border stays zero).  Channels-last (last=True): input
    (N, H, W, C), weights (O, 3*3*C), output (N*H*W, O), one GEMM each way.  Otherwise
    PyTorch's (N, C, H, W): weights (O, C*3*3), output (N, O, H*W), batched GEMMs."""

    def __init__(self, n, h, w, c, o, last):
        f = np.float32
        self.last, self.h, self.w = last, h, w
        if last:
            self.xp = np.zeros((n, h + 2, w + 2, c), f)
            self.windows = sliding_window_view(self.xp, (3, 3), axis=(1, 2)).transpose(
                0, 1, 2, 4, 5, 3)                       # N, H, W, 3, 3, C: a view of xp
            self.interior = self.xp[:, 1:h + 1, 1:w + 1]
            self.z = np.empty((n * h * w, o), f)
            self.dcols = np.empty((n * h * w, 9 * c), f)
            self.cols2d = (n * h * w, 9 * c)
        else:
            self.xp = np.zeros((n, c, h + 2, w + 2), f)
            self.windows = sliding_window_view(self.xp, (3, 3), axis=(2, 3)).transpose(
                0, 1, 4, 5, 2, 3)                       # N, C, 3, 3, H, W
            self.interior = self.xp[:, :, 1:h + 1, 1:w + 1]
            self.z = np.empty((n, o, h * w), f)
            self.dcols = np.empty((n, 9 * c, h * w), f)
            self.gw_n = np.empty((n, o, 9 * c), f)
            self.cols2d = (n, 9 * c, h * w)
        self.cols = np.empty(self.windows.shape, f)
        self.dxp = np.zeros(self.xp.shape, f)
        self.mask = np.empty(self.z.shape, bool)

    def forward(self, w, b):
        """relu(conv(xp) + b) into self.z."""
        np.copyto(self.cols, self.windows)            # im2col: one strided copy
        cols = self.cols.reshape(self.cols2d)
        if self.last:
            np.matmul(cols, w.T, out=self.z)
            self.z += b
        else:
            np.matmul(w, cols, out=self.z)
            self.z += b[:, None]
        np.maximum(self.z, 0, out=self.z)
        return self.z

    def backward(self, dz, w, gw, gb, need_dx):
        """dz shaped as self.z, masked here by relu; gradients into gw, gb; d input (the
        interior of dxp) when need_dx."""
        np.greater(self.z, 0, out=self.mask)
        dz *= self.mask
        cols = self.cols.reshape(self.cols2d)
        if self.last:
            np.matmul(dz.T, cols, out=gw)
            np.sum(dz, axis=0, out=gb)
        else:
            np.matmul(dz, cols.transpose(0, 2, 1), out=self.gw_n)
            np.sum(self.gw_n, axis=0, out=gw)
            np.sum(dz, axis=(0, 2), out=gb)
        if not need_dx:
            return None
        np.matmul(dz, w, out=self.dcols) if self.last else \
            np.matmul(w.T, dz, out=self.dcols)
        d = self.dcols.reshape(self.cols.shape)
        h, wd = self.h, self.w
        self.dxp.fill(0)
        for i in range(3):                             # col2im: 9 shifted adds
            for j in range(3):
                if self.last:
                    self.dxp[:, i:i + h, j:j + wd] += d[:, :, :, i, j]
                else:
                    self.dxp[:, :, i:i + h, j:j + wd] += d[:, :, i, j]
        return self.interior_of(self.dxp)

    def interior_of(self, a):
        h, w = self.h, self.w
        return a[:, 1:h + 1, 1:w + 1] if self.last else a[:, :, 1:h + 1, 1:w + 1]


class _TightPool:
    """2x2 max pool, stride 2, over the plane axes of x, into `out` (a view the caller
    gives); backward routes each gradient to the first maximum of its window (PyTorch's)."""

    def __init__(self, x, out, last):
        cut = (lambda i, j: x[:, i::2, j::2]) if last else (lambda i, j: x[:, :, i::2, j::2])
        self.quarters = [cut(i, j) for i, j in _WINDOW]
        self.out = out
        self.dx = np.empty(x.shape, np.float32)
        self.dquarters = [self.dx[:, i::2, j::2] if last else self.dx[:, :, i::2, j::2]
                          for i, j in _WINDOW]
        self.free = np.empty(out.shape, bool)
        self.hit = np.empty(out.shape, bool)

    def forward(self):
        q, out = self.quarters, self.out
        np.maximum(q[0], q[1], out=out)
        np.maximum(out, q[2], out=out)
        np.maximum(out, q[3], out=out)

    def backward(self, dout):
        free, hit = self.free, self.hit
        free.fill(True)
        for q, dq in zip(self.quarters, self.dquarters):
            np.equal(q, self.out, out=hit)
            hit &= free
            free ^= hit
            np.multiply(dout, hit, out=dq)
        return self.dx


class TightCNN:
    """The demo CNN as a tight step, in PyTorch's layout (N, C, H, W): the tight floor."""

    last = False

    def __init__(self, params, batch):
        cw1, cb1, cw2, cb2, fw, fb = params
        f, last, n = np.float32, self.last, batch
        if last:       # channels-last weights: (O, kh, kw, C); the linear's columns (H, W, C)
            self.params = [np.ascontiguousarray(cw1.transpose(0, 2, 3, 1).reshape(16, -1)),
                           cb1.copy(),
                           np.ascontiguousarray(cw2.transpose(0, 2, 3, 1).reshape(32, -1)),
                           cb2.copy(),
                           np.ascontiguousarray(fw.reshape(10, 32, 2, 2).transpose(0, 2, 3, 1)
                                                .reshape(10, -1)), fb.copy()]
        else:
            self.params = [cw1.reshape(16, -1).copy(), cb1.copy(), cw2.reshape(32, -1).copy(),
                           cb2.copy(), fw.copy(), fb.copy()]
        self.bufs = [np.zeros_like(p) for p in self.params]
        self.grads = [np.empty_like(p) for p in self.params]
        self.scratch = [np.empty_like(p) for p in self.params]
        self.conv1 = _TightConv(n, 8, 8, 1, 16, last)
        self.conv2 = _TightConv(n, 4, 4, 16, 32, last)
        planes = ((n, 8, 8, 16), (n, 4, 4, 32)) if last else ((n, 16, 8, 8), (n, 32, 4, 4))
        self.flat = np.empty((n, 2, 2, 32) if last else (n, 32, 2, 2), f)
        self.pool1 = _TightPool(self.conv1.z.reshape(planes[0]), self.conv2.interior, last)
        self.pool2 = _TightPool(self.conv2.z.reshape(planes[1]), self.flat, last)
        self.z, self.p, self.s = np.empty((n, 10), f), np.empty((n, 10), f), np.empty((n, 1), f)
        self.dflat = np.empty((n, 128), f)
        self.rows = np.arange(n)

    @property
    def torch_params(self):
        """The parameters in PyTorch's layout (for the check against the frameworks)."""
        cw1, cb1, cw2, cb2, fw, fb = self.params
        if not self.last:
            return [cw1.reshape(16, 1, 3, 3), cb1, cw2.reshape(32, 16, 3, 3), cb2, fw, fb]
        return [cw1.reshape(16, 3, 3, 1).transpose(0, 3, 1, 2), cb1,
                cw2.reshape(32, 3, 3, 16).transpose(0, 3, 1, 2), cb2,
                fw.reshape(10, 2, 2, 32).transpose(0, 3, 1, 2).reshape(10, -1), fb]

    def step(self, x, y):
        cw1, cb1, cw2, cb2, fw, fb = self.params
        gcw1, gcb1, gcw2, gcb2, gfw, gfb = self.grads
        n = len(x)
        self.conv1.interior[...] = x.transpose(0, 2, 3, 1) if self.last else x
        self.conv1.forward(cw1, cb1)
        self.pool1.forward()                          # into conv2's padded input
        self.conv2.forward(cw2, cb2)
        self.pool2.forward()
        flat = self.flat.reshape(n, -1)
        np.matmul(flat, fw.T, out=self.z)
        self.z += fb
        loss = _tight_xent(self.z, self.p, self.s, self.rows, y)
        d = self.p
        np.matmul(d.T, flat, out=gfw)
        np.sum(d, axis=0, out=gfb)
        np.matmul(d, fw, out=self.dflat)
        dz2 = self.pool2.backward(self.dflat.reshape(self.flat.shape))
        dp1 = self.conv2.backward(dz2.reshape(self.conv2.z.shape), cw2, gcw2, gcb2, True)
        dz1 = self.pool1.backward(dp1)
        self.conv1.backward(dz1.reshape(self.conv1.z.shape), cw1, gcw1, gcb1, False)
        _tight_sgd(self.params, self.bufs, self.grads, self.scratch)
        return loss


class TightCNNChannelsLast(TightCNN):
    """The same, channels-last (N, H, W, C) with its weights in the matching layout: what
    a layout change buys beyond the tight floor (reported, not a target)."""

    last = True

# --- the frameworks ----------------------------------------------------------------------------

def _host_params(model):
    return [p.detach().numpy().copy() for p in model.parameters()]


def _load(lib, model, params):
    with lib.no_grad():
        for p, host in zip(model.parameters(), params):
            p.copy_(lib.tensor(host))


def build(name: str, rng, torch, torch_compile=False):
    """(steps by implementation, check values) for one model, all from the same weights."""
    ember.manual_seed(0)
    if name == "mlp":
        model, batch = _mlp(ember), 128
        x = rng.standard_normal((batch, 784)).astype(np.float32)
        numpy_model, tight_model = NumpyMLP, TightMLP
    else:
        model, batch = _cnn(ember), 32
        x = rng.random((batch, 1, 8, 8)).astype(np.float32)
        numpy_model, tight_model = NumpyCNN, TightCNN
        nhwc = TightCNNChannelsLast(_host_params(model), batch)
    y = rng.integers(0, 10, batch)
    params = _host_params(model)
    floor = numpy_model(params)
    tight = tight_model(params, batch)
    compiled = _mlp(ember) if name == "mlp" else _cnn(ember)
    _load(ember, compiled, params)
    looped = _mlp(ember) if name == "mlp" else _cnn(ember)
    _load(ember, looped, params)
    steps = {"numpy": lambda: floor.step(x, y),
             "numpy tight": lambda: tight.step(x, y),
             "ember": _framework_step(ember, model, ember.tensor(x), ember.tensor(y)),
             "ember loop": _framework_step(ember, looped, ember.tensor(x), ember.tensor(y),
                                           foreach=False),
             "compiled": _compiled_step(compiled, ember.tensor(x), ember.tensor(y))}
    if name != "mlp":
        steps["numpy NHWC"] = lambda: nhwc.step(x, y)
    models = {"numpy": floor, "numpy tight": tight, "ember": model, "ember loop": looped,
              "compiled": compiled}
    if name != "mlp":
        models["numpy NHWC"] = nhwc
    if torch is not None:
        tmodel = _mlp(torch) if name == "mlp" else _cnn(torch)
        _load(torch, tmodel, params)
        steps["torch"] = _framework_step(torch, tmodel, torch.tensor(x), torch.tensor(y))
        models["torch"] = tmodel
        if torch_compile:
            cmodel = _mlp(torch) if name == "mlp" else _cnn(torch)
            _load(torch, cmodel, params)
            steps["torch.compile"] = _framework_step(torch, cmodel, torch.tensor(x),
                                                     torch.tensor(y), torch.compile)
            models["torch.compile"] = cmodel
    return steps, models


def _compiled_step(model, x, y):
    step = ember.compile(_framework_step(ember, model, x, y))
    return step


def check(name, steps, models):
    """One step each from equal weights: losses and updated weights must agree."""
    losses = {k: float(s() if k.startswith("numpy") else s().detach())
              for k, s in steps.items()}
    weights = {k: (getattr(m, "torch_params", None) or m.params if k.startswith("numpy") else
                   [p.detach().numpy() for p in m.parameters()]) for k, m in models.items()}
    for k in steps:
        if abs(losses[k] - losses["numpy"]) > 1e-4 * max(1.0, abs(losses["numpy"])):
            raise SystemExit(f"{name}: {k} loss {losses[k]} != numpy {losses['numpy']}")
        for a, b in zip(weights[k], weights["numpy"]):
            if not np.allclose(a, b, rtol=1e-4, atol=1e-5):
                raise SystemExit(f"{name}: {k} weights after one step differ from numpy's "
                                 f"by {np.abs(a - b).max()}")


def profile(step, steps: int, top: int) -> None:
    """Split ember's step into kernel time (each CPU kernel wrapped in a timer) and ember's
    own Python (the rest), then show which Python functions hold the rest (cProfile with
    the kernels wrapped, so a kernel's time is not charged to the dispatcher calling it)."""
    kernels = ember.device("cpu").kernels          # the dict the dispatcher reads
    originals = dict(kernels)
    spent: dict = {}
    calls: dict = {}

    def timed(name, fn):
        def kernel(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - t0
                calls[name] = calls.get(name, 0) + 1
        return kernel

    kernels.update({name: timed(name, fn) for name, fn in originals.items()})
    try:
        step()
        spent.clear()
        calls.clear()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        wall_ms = (time.perf_counter() - t0) * 1e3 / steps
        timed_spent, timed_calls = dict(spent), dict(calls)   # before cProfile inflates them
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(steps):
            step()
        prof.disable()
    finally:
        kernels.update(originals)
    spent, calls = timed_spent, timed_calls
    kernel_ms = sum(spent.values()) * 1e3 / steps
    n_calls = sum(calls.values()) / steps
    print(f"  ember step (kernels timed) {wall_ms:.3f} ms = kernels {kernel_ms:.3f} ms "
          f"({n_calls:.0f} calls) + ember's Python {wall_ms - kernel_ms:.3f} ms "
          f"({(wall_ms - kernel_ms) * 1e3 / n_calls:.1f} us per kernel call)")
    print("  kernels by time per step:")
    for name in sorted(spent, key=lambda k: -spent[k])[:top]:
        print(f"    {name:<14}{calls[name] / steps:6.0f} calls {spent[name] * 1e6 / steps:9.1f} us")
    # functions of the ember package only: backends/ and NumPy run inside the kernels
    stats = pstats.Stats(prof)
    own = [(tt, file.split("/core/")[-1], line, func) for (file, line, func), (_, _, tt, _, _)
           in stats.stats.items() if "/core/" in file]
    python = sum(o[0] for o in own)
    print(f"  ember's Python by function (own time; {python * 1e3 / steps:.2f} ms/step under "
          "cProfile, which inflates it):")
    for tt, where, line, func in sorted(own, reverse=True)[:top]:
        print(f"    {tt / python:6.1%}  {where}:{line} {func}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50, help="timed steps per model")
    parser.add_argument("--profile", action="store_true", help="profile ember's steps")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS and PyTorch threads (default 1)")
    parser.add_argument("--torch-compile", action="store_true",
                        help="also time torch.compile's step")
    args = parser.parse_args()
    pin_blas_threads(args.threads)
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    print(f"train step, median of {args.steps} (CNN: {args.steps * 4}), {args.threads} "
          f"thread(s); NumPy {np.__version__}, ember {ember.__version__}, "
          + (f"PyTorch {torch.__version__}" if torch else "PyTorch not installed"))
    for name, title in (("mlp", "MLP 784-256-256-10, b=128"), ("cnn", "demo CNN, b=32")):
        steps, models = build(name, rng, torch, args.torch_compile)
        check(name, steps, models)
        ms = median_ms(steps, args.steps * (4 if name == "cnn" else 1))
        print(f"{title}: ms per step, ratio to the NumPy floor and to the tight NumPy floor")
        for impl, t in ms.items():
            print(f"  {impl:<14}{t:>9.3f} ms {t / ms['numpy']:>7.2f}x "
                  f"{t / ms['numpy tight']:>7.2f}x")
        if args.profile:
            profile(steps["ember"], args.steps, 12)


if __name__ == "__main__":
    main()
