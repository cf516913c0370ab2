"""The CPU's cross_entropy kernels (ops/loss.py): log_softmax and the negative
log-likelihood of (N, C) logits in one pass over the rows, and the gradient
(softmax - onehot) * each row's scale in one more.

The forward computes what the decomposition computes, in the same order (shift by the row
max, log of the summed exponentials, pick, weight, sum, divide), so the kernel and the
ember ops it stands for agree; targets outside [0, C) that are not ignore_index raise
EmberIndexError as gather would."""
from __future__ import annotations

import numpy as np
from ember.errors import EmberIndexError

from .reduce import max_keepdims


def _rows(x, target, weight, ignore_index):
    """(each row's class, each row's weight or None where every row weighs 1)."""
    n, c = x.shape
    if weight is None and n:
        lo, hi = int(np.minimum.reduce(target)), int(np.maximum.reduce(target))
        if 0 <= lo and hi < c and not lo <= ignore_index <= hi:
            return target, None          # every target a class, none ignored (x * 1 is x)
    keep = target != ignore_index
    bad = keep & ((target < 0) | (target >= c))
    if bad.any():
        raise EmberIndexError(f"cross_entropy: target {int(target[bad][0])} is out of bounds "
                              f"for {c} classes")
    safe = np.where(keep, target, 0)
    w = keep.astype(x.dtype)
    if weight is not None:
        w *= weight[safe]
    return safe, w


def cross_entropy(x, target, weight=None, *, ignore_index, reduction):
    return cross_entropy_saving(x, target, weight, ignore_index=ignore_index,
                                reduction=reduction)[0]


def cross_entropy_saving(x, target, weight=None, *, ignore_index, reduction, rows=None):
    """(cross_entropy's loss, what cross_entropy_backward computes again from the same x:
    the exponentials of the shifted rows, their sums, each row's class and weight, the row
    numbers), for a replay that runs both (backends/cpu/graphs.py); `rows`: the row
    numbers (np.arange(N)) where the caller keeps them."""
    safe, w = _rows(x, target, weight, ignore_index)
    shifted = x - max_keepdims(x, 1)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    lse = np.log(s)
    if rows is None:
        rows = np.arange(x.shape[0])
    loss = shifted[rows, safe] - lse[:, 0]
    loss = -loss if w is None else -(loss * w)
    saved = (e, s, safe, w, rows)
    if reduction == "none":
        return loss, saved
    if reduction == "sum":
        return np.asarray(loss.sum()), saved
    return np.asarray(loss.sum() / (x.dtype.type(x.shape[0]) if w is None else w.sum())), saved


def cross_entropy_backward(g, x, target, weight=None, *, ignore_index, reduction):
    safe, w = _rows(x, target, weight, ignore_index)
    e = np.exp(x - max_keepdims(x, 1))
    return cross_entropy_backward_saved(
        (e, e.sum(axis=1, keepdims=True), safe, w, np.arange(x.shape[0])), g,
        reduction=reduction)


def cross_entropy_backward_saved(saved, g, *, reduction):
    """cross_entropy_backward from cross_entropy_saving's `saved` (written into: once)."""
    e, s, safe, w, rows = saved
    e /= s
    e[rows, safe] -= 1
    if w is None:                        # every row weighs 1: the scale is g (g / N)
        e *= g[:, None] if reduction == "none" else (
            g if reduction == "sum" else g / e.dtype.type(e.shape[0]))
        return e
    scale = w * g if reduction != "mean" else w * (g / w.sum())
    e *= scale[:, None]
    return e
