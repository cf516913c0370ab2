"""ember.special: the functions of torch.special that ember has, under torch's names."""
from __future__ import annotations

import math

from . import functional as _F
from . import ops as _ops
from .functional import _util
from .tensor import Tensor

__all__ = ["expit", "logit", "erf", "erfc", "erfinv", "gammaln", "digamma", "psi", "log1p",
           "expm1", "exp2", "xlogy", "xlog1py", "sinc", "entr", "logsumexp", "log_softmax",
           "softmax", "ndtr", "ndtri", "round", "i0"]

erf = _ops.erf
erfc = _F.erfc
erfinv = _F.erfinv
gammaln = _F.lgamma
digamma = _F.digamma
psi = _F.digamma
log1p = _ops.log1p
expm1 = _ops.expm1
exp2 = _F.exp2
xlogy = _F.xlogy
xlog1py = _F.xlog1py
sinc = _F.sinc
logsumexp = _F.logsumexp
round = _ops.round  # noqa: A001  (torch.special.round)


def expit(input: Tensor) -> Tensor:
    """The logistic sigmoid."""
    return _ops.sigmoid(input)


def logit(input: Tensor, eps=None) -> Tensor:
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    return _F.logit(input, eps)


def entr(input: Tensor) -> Tensor:
    """-x log x elementwise: 0 at 0, -inf below 0."""
    x = _util._float(input)
    pos = x > 0
    out = -x * _ops.log(_ops.where(pos, x, 1.0))
    out = _ops.where(x == 0, 0.0, out)
    out = _ops.where(x < 0, -math.inf, out)
    return _ops.where(x.isnan(), x, out)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """log(softmax(input, dim))."""
    return _F.log_softmax(input if dtype is None else input.to(dtype), dim)


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """exp(input) normalised along dim."""
    return _F.softmax(input if dtype is None else input.to(dtype), dim)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF."""
    x = _util._float(input)
    return 0.5 * (1.0 + _ops.erf(x * (1.0 / math.sqrt(2.0))))


def ndtri(input: Tensor) -> Tensor:
    """The inverse of ndtr: sqrt(2) * erfinv(2p - 1)."""
    p = _util._float(input)
    return math.sqrt(2.0) * _F.erfinv(2.0 * p - 1.0)


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0 (power series for
    |x| <= 20, the asymptotic series beyond)."""
    x = _util._float(input).abs()
    small = x <= 20.0
    xs = _ops.where(small, x, 0.0)
    q = xs * xs * 0.25
    term = q * 0.0 + 1.0
    total = term
    for k in range(1, 40):
        term = term * q / float(k * k)
        total = total + term
    xl = _ops.where(small, 20.0, x)
    inv = 1.0 / (8.0 * xl)
    series = inv * 0.0 + 1.0
    coef = 1.0
    for k in range(1, 12):
        coef = coef * (2 * k - 1) ** 2 / k
        series = series + coef * inv ** k
    large = _ops.exp(xl) / _ops.sqrt(2.0 * math.pi * xl) * series
    return _ops.where(small, total, large)
