"""torch.lgamma, digamma and erfinv: argument checks over their declarations (ops/special.py)."""
from __future__ import annotations

import math

from .. import dtypes as D
from .. import ops
from ..dispatch import run
from ..errors import EmberValueError
from ..ops.special import digamma_op, erfinv_op, lgamma_op
from ..tensor import Tensor
from ._util import _float, _tensor

__all__ = ["lgamma", "digamma", "erfinv", "i0", "mvlgamma"]


def lgamma(input: Tensor) -> Tensor:
    """log |Gamma(input)|.

    PyTorch
    -------
    ``torch.lgamma``, ``torch.special.gammaln``
    """
    return _rounded_once(lgamma_op, _float(_tensor("lgamma", input)))


def _rounded_once(op, x: Tensor) -> Tensor:
    """op(x); float16 and bfloat16 computed in float32 and rounded once, as torch's
    (each step of the series rounded to 8 or 11 bits drifts: lgamma(3) came out 0.703 in
    bfloat16 where torch gives 0.691)."""
    if x._dtype is D.float16 or x._dtype is D.bfloat16:
        return run(op, x.to(D.float32)).to(x._dtype)
    return run(op, x)


def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of Gamma, psi(input).

    PyTorch
    -------
    ``torch.digamma``, ``torch.special.digamma``, ``torch.special.psi``
    """
    return _rounded_once(digamma_op, _float(_tensor("digamma", input)))


def erfinv(input: Tensor) -> Tensor:
    """The inverse of erf on (-1, 1); +-inf at +-1 and nan outside.

    PyTorch
    -------
    ``torch.erfinv``, ``torch.special.erfinv``
    """
    return _rounded_once(erfinv_op, _float(_tensor("erfinv", input)))


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0 (power series for
    |x| <= 20, the asymptotic series beyond).

    PyTorch
    -------
    ``torch.i0``
    """
    return bessel_i(input, 0, False)


def bessel_i(input: Tensor, order: int, scaled: bool) -> Tensor:
    """I_order(x) (order 0 or 1), times exp(-|x|) when scaled: the power series
    (x/2)^n sum_k (x^2/4)^k / (k! (k+n)!) up to |x| = 20, beyond it the asymptotic series
    e^|x| / sqrt(2 pi |x|) sum_k a_k / |x|^k (whose scaled form never overflows)."""
    x0 = _float(_tensor("i0" if order == 0 else "i1", input))
    x = x0.abs()
    small = x <= 20.0
    xs = ops.where(small, x, 0.0)
    q = xs * xs * 0.25
    term = q * 0.0 + (1.0 if order == 0 else 0.5)
    total = term
    for k in range(1, 40):
        term = term * q / float(k * (k + order))
        total = total + term
    if order == 1:              # the signed x: the gradient at 0 is I1'(0) = 1/2
        total = total * ops.where(small, x0, 0.0)
    if scaled:
        total = total * ops.exp(-xs)
    xl = ops.where(small, 20.0, x)
    inv = 1.0 / (8.0 * xl)
    mu = 4.0 * order * order
    series, coef = inv * 0.0 + 1.0, 1.0
    for k in range(1, 12):
        coef = coef * -(mu - (2 * k - 1) ** 2) / k
        series = series + coef * inv ** k
    large = series / ops.sqrt(2.0 * math.pi * xl)
    if not scaled:
        large = large * ops.exp(xl)
    if order == 1:
        large = ops.where(x0 < 0, -large, large)
    return ops.where(small, total, large)


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma of dimension p: sum_j lgamma(x - j/2) + p(p-1)/4 log(pi);
    every element must exceed (p - 1) / 2.

    PyTorch
    -------
    ``torch.mvlgamma``
    """
    x = _float(_tensor("mvlgamma", input))
    if p < 1:
        raise EmberValueError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    if bool((x <= (p - 1) / 2).any()):
        raise EmberValueError(f"mvlgamma: All elements must be greater than (p-1)/2 = "
                              f"{(p - 1) / 2}")
    out = lgamma(x)
    for j in range(1, p):
        out = out + lgamma(x - j / 2.0)
    return out + p * (p - 1) / 4.0 * math.log(math.pi)
