"""torch.lgamma, digamma, erfinv, polygamma, igamma, igammac and special.zeta: argument checks
over their declarations (ops/special.py, ops/incomplete_gamma.py)."""
from __future__ import annotations

import math

from .. import dtypes as D
from .. import ops
from ..dispatch import run
from ..errors import DtypeNotSupportedError, EmberTypeError, EmberValueError
from ..ops._out import write_out
from ..ops._util import broadcast_shapes
from ..ops.incomplete_gamma import igamma_op, igammac_op
from ..ops.special import digamma_op, erfinv_op, lgamma_op, zeta_op
from ..tensor import Tensor
from ._util import _float, _tensor

__all__ = ["lgamma", "digamma", "erfinv", "i0", "mvlgamma", "polygamma", "igamma", "igammac"]


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


def _number_or_tensor(name, input, other):
    """input and other as tensors of one float dtype and shape: a Python number takes the
    other side's dtype (a number never upcasts a tensor), integers compute in the default
    float."""
    if type(input) is not Tensor and type(other) is not Tensor:
        raise EmberTypeError(f"{name}(): expected a Tensor for input or other, got "
                             f"{type(input).__name__} and {type(other).__name__}; wrap one "
                             "with ember.tensor(...)")
    for what, v in (("input", input), ("other", other)):
        if type(v) is not Tensor and (type(v) is bool or not isinstance(v, (int, float))):
            raise EmberTypeError(f"{name}(): expected a Tensor or a real number for {what}, "
                                 f"got {type(v).__name__}")
    like = input if type(input) is Tensor else other
    x = input if type(input) is Tensor else _tensor(name, input, like)
    q = other if type(other) is Tensor else _tensor(name, other, like)
    dtype = D.result_type(input, other)
    if dtype.category < D.FLOAT:
        dtype = D.get_default_dtype()
    elif dtype.category > D.FLOAT:
        raise EmberTypeError(f"{name}(): expected real inputs, got {dtype.name}; take .real "
                             "or .abs() first")
    shape = broadcast_shapes(name, x._data.shape, q._data.shape)
    return ops.expand(x.to(dtype), shape), ops.expand(q.to(dtype), shape)


def zeta(input, other, *, out=None) -> Tensor:
    """The Hurwitz zeta function sum over k >= 0 of (k + other)^-input (Cephes', as
    torch's): inf at input == 1 and at other a non-positive integer, nan for input < 1 or
    for other < 0 with input not an integer; differentiable in other only (torch has no
    gradient for input either)."""
    result = run(zeta_op, *_number_or_tensor("special.zeta", input, other))
    return result if out is None else write_out("special.zeta", result, out)


def polygamma(n: int, input: Tensor, *, out=None) -> Tensor:
    """The n-th derivative of digamma: digamma for n == 0, else (-1)^(n+1) n!
    zeta(n + 1, input) (torch's formula), differentiable in input.

    PyTorch
    -------
    ``torch.polygamma``, ``torch.special.polygamma``
    """
    if type(n) is bool or not isinstance(n, int):
        raise EmberTypeError(f"polygamma(): expected n an int, got {type(n).__name__}")
    if n < 0:
        raise EmberValueError(f"polygamma(): expected n >= 0, got {n} (polygamma(n, x) is "
                              "the n-th derivative of digamma)")
    x = _float(_tensor("polygamma", input))
    if n == 0:
        result = digamma(x)
    else:
        # n! past float64's range: inf, as torch's exp(lgamma(n + 1))
        scale = (1.0 if n % 2 else -1.0) * (math.factorial(n) if n <= 170 else math.inf)
        order = ops.full((), n + 1.0, dtype=x._dtype, device=x._device)
        result = run(zeta_op, ops.expand(order, x._data.shape), x) * scale
        if n == 1:      # torch's trigamma (its n = 1): 0 at inf, nan at -inf (sin(pi x))
            result = ops.where(x == math.inf, 0.0, ops.where(x == -math.inf, math.nan, result))
    return result if out is None else write_out("polygamma", result, out)


def _need_tensor_pair(name, input, other):
    """torch's igamma takes two tensors, one of them floating (two integer tensors: torch's
    kernel has no integer form)."""
    for what, v in (("input", input), ("other", other)):
        if type(v) is not Tensor:
            raise EmberTypeError(f"{name}(): argument '{what}' must be a Tensor, not "
                                 f"{type(v).__name__}; wrap the number with ember.tensor(...)")
    if D.promote_types(input._dtype, other._dtype).category < D.FLOAT:
        raise DtypeNotSupportedError(f"{name}(): expected a floating point tensor among input "
                                     f"and other, got {input._dtype.name} and "
                                     f"{other._dtype.name}; call .float() first")
    return _number_or_tensor(name, input, other)


def igamma(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """P(input, other), the regularized lower incomplete gamma function: nan for negative
    arguments, torch's values at 0 and inf; differentiable in other only (as torch's).

    PyTorch
    -------
    ``torch.igamma``, ``torch.special.gammainc``
    """
    result = run(igamma_op, *_need_tensor_pair("igamma", input, other))
    return result if out is None else write_out("igamma", result, out)


def igammac(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """Q(input, other) = 1 - P(input, other), the regularized upper incomplete gamma
    function; differentiable in other only (as torch's).

    PyTorch
    -------
    ``torch.igammac``, ``torch.special.gammaincc``
    """
    result = run(igammac_op, *_need_tensor_pair("igammac", input, other))
    return result if out is None else write_out("igammac", result, out)
