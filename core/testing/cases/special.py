"""Conformance rows of the special functions with their own gradient rules (ops/special.py):
atan2, lgamma, digamma, erfinv."""
from __future__ import annotations

import math

import numpy as np

from ._table import Input, Rows, S

ROWS = Rows("special")
case = ROWS.case


def _lgamma(x):
    return np.vectorize(math.lgamma, otypes=[np.float64])(x)


def _digamma(x):
    # d/dx lgamma by Richardson-extrapolated central differences of math.lgamma (float64;
    # NumPy has no digamma)
    def d(v, h):
        return (math.lgamma(v + h) - math.lgamma(v - h)) / (2 * h)
    return np.vectorize(lambda v: (4 * d(v, 1e-4) - d(v, 2e-4)) / 3, otypes=[np.float64])(x)


def _erfinv(y):
    def one(v):                       # Newton on erf(x) = v from x = 0, in float64
        x = 0.0
        for _ in range(60):
            x -= (math.erf(x) - v) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        return x
    return np.vectorize(one, otypes=[np.float64])(y)


case("atan2", lambda E, y, x: (E.atan2(y, x), y.arctan2(x)),
     lambda np, y, x: (np.arctan2(y, x), np.arctan2(y, x)), Input(S), Input(S),
     ops=("atan2",))
case("lgamma", lambda E, x: (E.lgamma(x), (x + 0.5).lgamma()),
     lambda np, x: (_lgamma(x), _lgamma(x + 0.5)), Input(S, "p"), ops=("lgamma",))
case("digamma", lambda E, x: E.digamma(x + 0.5), lambda np, x: _digamma(x + 0.5),
     Input(S, "p"), ops=("digamma",), atol=1e-4, rtol=1e-4)
case("erfinv", lambda E, x: E.erfinv(x), lambda np, x: _erfinv(x), Input(S, "u"),
     ops=("erfinv",))

case("i0", lambda E, x: (E.i0(x), E.special.i0e(x)),
     lambda np, x: (np.i0(x), np.i0(x) * np.exp(-np.abs(x))), Input(S, "f"),
     ops=("i0", "special.i0e"))
