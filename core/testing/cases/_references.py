"""NumPy references that rows of several families share."""
from __future__ import annotations

import math

import numpy as np


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _lse(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return (np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m).squeeze(axis)


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(np.minimum(x * beta, threshold)))
                    / beta)


def _dist(a, b, p=2.0, eps=1e-6):
    d = np.abs(a - b + eps)
    return d.max(-1) if p == math.inf else (d ** p).sum(-1) ** (1.0 / p)
