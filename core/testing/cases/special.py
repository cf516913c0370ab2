"""Conformance rows of the special functions with their own gradient rules (ops/special.py,
ops/incomplete_gamma.py): atan2, lgamma, digamma, erfinv, erfcx, log_ndtr, zeta, igamma,
igammac."""
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

# torch.special's orthogonal polynomials against NumPy's (degree 4, x inside (-0.9, 0.9))
case("chebyshev_polynomial_t", lambda E, x: (
    E.special.chebyshev_polynomial_t(x, 4), E.special.chebyshev_polynomial_u(x, 3),
    E.special.hermite_polynomial_h(x, 4), E.special.hermite_polynomial_he(x, 3),
    E.special.laguerre_polynomial_l(x, 3), E.special.legendre_polynomial_p(x, 4),
    E.special.shifted_chebyshev_polynomial_t(x, 3)),
     lambda np, x: (np.polynomial.chebyshev.chebval(x, [0, 0, 0, 0, 1]),
                    8 * x ** 3 - 4 * x,
                    np.polynomial.hermite.hermval(x, [0, 0, 0, 0, 1]),
                    np.polynomial.hermite_e.hermeval(x, [0, 0, 0, 1]),
                    np.polynomial.laguerre.lagval(x, [0, 0, 0, 1]),
                    np.polynomial.legendre.legval(x, [0, 0, 0, 0, 1]),
                    np.polynomial.chebyshev.chebval(2 * x - 1, [0, 0, 0, 1])),
     Input(S, "u"), grad=False,
     ops=("special.chebyshev_polynomial_t", "special.chebyshev_polynomial_u",
          "special.hermite_polynomial_h", "special.hermite_polynomial_he",
          "special.laguerre_polynomial_l", "special.legendre_polynomial_p",
          "special.shifted_chebyshev_polynomial_t"))


def _erfcx(x):
    return np.vectorize(lambda v: math.exp(v * v) * math.erfc(v), otypes=[np.float64])(x)


def _log_ndtr(x):
    return np.vectorize(lambda v: math.log(0.5 * math.erfc(-v / math.sqrt(2.0))),
                        otypes=[np.float64])(x)


# both sides of 0 and of the branch points (2 for erfcx, -1 for log_ndtr)
case("erfcx", lambda E, x: E.special.erfcx(x * 3), lambda np, x: _erfcx(x * 3).astype(x.dtype),
     Input(S), ops=("erfcx",), atol=1e-4, rtol=1e-4)
case("log_ndtr", lambda E, x: E.special.log_ndtr(x * 4),
     lambda np, x: _log_ndtr(x * 4).astype(x.dtype), Input(S), ops=("log_ndtr",), atol=1e-4,
     rtol=1e-4)


def _zeta(s, q):
    # sum_{k < 2000} (k + q)^-s plus the Euler-Maclaurin tail from 2000 (1e-20 left)
    def one(v):
        head = math.fsum((k + v) ** -s for k in range(2000))
        w = 2000 + v
        return head + w ** (1 - s) / (s - 1) + 0.5 * w ** -s + s / 12 * w ** (-s - 1)
    return np.vectorize(one, otypes=[np.float64])(q)


def _lower_gamma(a, x):
    # P(a, x) = x^a e^-x / Gamma(a + 1) sum_k x^k / ((a + 1) ... (a + k)) (x < 10 here)
    def one(v):
        term, total = 1.0, 1.0
        for k in range(1, 400):
            term *= v / (a + k)
            total += term
        return math.exp(a * math.log(v) - v - math.lgamma(a + 1)) * total
    return np.vectorize(one, otypes=[np.float64])(x)


# the Hurwitz zeta function and polygamma, differentiable in q only (torch's too)
case("zeta", lambda E, q: (E.special.zeta(3.0, q + 0.5), E.polygamma(2, q + 1.0)),
     lambda np, q: (_zeta(3.0, q + 0.5), -2.0 * _zeta(3.0, q + 1.0)), Input(S, "p"),
     ops=("zeta",))
# P and Q of a = 2.5 (differentiable in x only, as torch's)
case("igamma", lambda E, x: (E.igamma(E.full_like(x, 2.5).detach(), x),
                             E.special.gammaincc(E.full_like(x, 2.5).detach(), x)),
     lambda np, x: (_lower_gamma(2.5, x), 1.0 - _lower_gamma(2.5, x)), Input(S, "p"),
     ops=("igamma", "igammac"))
