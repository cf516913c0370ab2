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


def _rows(x, target, weight, ignore_index):
    n, c = x.shape
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
    safe, w = _rows(x, target, weight, ignore_index)
    shifted = x - x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(x.shape[0])
    loss = -((shifted[rows, safe] - lse[:, 0]) * w)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.asarray(loss.sum())
    return np.asarray(loss.sum() / w.sum())


def cross_entropy_backward(g, x, target, weight=None, *, ignore_index, reduction):
    safe, w = _rows(x, target, weight, ignore_index)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    e /= e.sum(axis=1, keepdims=True)
    e[np.arange(x.shape[0]), safe] -= 1
    scale = w * g if reduction != "mean" else w * (g / w.sum())
    e *= scale[:, None]
    return e
