"""The gamma family and erfinv (torch.lgamma, digamma, trigamma, erfinv), with their gradients."""
from __future__ import annotations

import math

from .. import dtypes as D
from .. import ops
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import _float, _signbit, _tensor

__all__ = ["lgamma", "digamma", "erfinv"]


_LANCZOS_G = 7.0

_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905,
            -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)


def _lgamma_pos(x: Tensor) -> Tensor:
    # Lanczos (g=7, n=9) for x >= 0.5
    z = x - 1.0
    a = z * 0.0 + _LANCZOS[0]
    for i, c in enumerate(_LANCZOS[1:], start=1):
        a = a + c / (z + float(i))
    t = z + (_LANCZOS_G + 0.5)
    return 0.5 * math.log(2 * math.pi) + (z + 0.5) * ops.log(t) - t + ops.log(a)


def _abs_sinpi(x: Tensor) -> Tensor:
    # reduce first: sin(pi * x) of a large x loses every digit to the rounding of pi * x
    return ops.sin(math.pi * (x - ops.round(x))).abs()


def _lgamma_forward(x: Tensor) -> Tensor:
    small = x < 0.5
    pos = _lgamma_pos(ops.where(small, 1.0 - x, x).clamp(0.5, None))
    reflected = math.log(math.pi) - ops.log(_abs_sinpi(x)) - pos
    out = ops.where(small, reflected, pos)
    return ops.where(x.abs() == math.inf, math.inf, out)


def _series_shift(x: Tensor, term, upto: float = 10.0, steps: int = 10):
    # recurrence up to x >= upto (x >= 0.5 here, so `steps` shifts suffice)
    acc = x * 0.0
    for _ in range(steps):
        low = x < upto
        acc = acc + ops.where(low, term(ops.where(low, x, 1.0)), 0.0)
        x = ops.where(low, x + 1.0, x)
    return x, acc


_DIGAMMA_B = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma_pos(x: Tensor) -> Tensor:
    x, acc = _series_shift(x, lambda v: 1.0 / v)
    inv2 = 1.0 / (x * x)
    s = inv2 * 0.0
    for c in reversed(_DIGAMMA_B):
        s = (s + c) * inv2
    return ops.log(x) - 0.5 / x - s - acc


def _digamma_forward(x: Tensor) -> Tensor:
    small = x < 0.5
    pos = _digamma_pos(ops.where(small, 1.0 - x, x).clamp(0.5, None))
    frac = x - ops.round(x)
    reflected = pos - math.pi / ops.tan(math.pi * frac)
    out = ops.where(small, reflected, pos)
    # torch: nan at negative integers and -inf; -+inf at +-0; +inf at +inf
    out = ops.where((x < 0).logical_and(frac == 0), math.nan, out)
    out = ops.where(x == 0, ops.where(_signbit(x), math.inf, -math.inf), out)
    out = ops.where(x == math.inf, math.inf, out)
    return ops.where(x == -math.inf, math.nan, out)


_TRIGAMMA_B = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def trigamma(x: Tensor) -> Tensor:
    """psi'(x), by recurrence, the asymptotic series and reflection."""
    small = x < 0.5
    v = ops.where(small, 1.0 - x, x).clamp(0.5, None)
    v, acc = _series_shift(v, lambda u: 1.0 / (u * u))
    inv = 1.0 / v
    inv2 = inv * inv
    s = inv2 * 0.0
    for c in reversed(_TRIGAMMA_B):
        s = (s + c) * inv2
    pos = acc + inv + 0.5 * inv2 + s * inv
    sinpi = _abs_sinpi(x)
    reflected = (math.pi * math.pi) / (sinpi * sinpi) - pos
    return ops.where(small, reflected, pos)


class _Lgamma(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _lgamma_forward(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * digamma(x)


class _Digamma(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _digamma_forward(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * trigamma(x)


def lgamma(input: Tensor) -> Tensor:
    """log |Gamma(input)|."""
    return _Lgamma.apply(_float(_tensor("lgamma", input)))


def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of Gamma, psi(input)."""
    return _Digamma.apply(_float(_tensor("digamma", input)))


_GILES_LO = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
             0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)

_GILES_HI = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
             0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erfc_tail(x: Tensor) -> Tensor:
    # erfc for x >= 2 by its continued fraction: 1 - erf(x) would keep no digits there
    t = x * 0.0
    for k in range(50, 0, -1):
        t = (k / 2) / (x + t)
    return ops.exp(-x * x) / (math.sqrt(math.pi) * (x + t))


def _erfinv_forward(y: Tensor) -> Tensor:
    a = ops.where(y.abs() < 1, y.abs(), 0.0)
    w = -ops.log((1.0 - a) * (1.0 + a))
    lo = w < 5.0
    wl = w - 2.5
    wh = ops.sqrt(ops.where(lo, 5.0, w)) - 3.0
    pl = wl * 0.0 + _GILES_LO[0]
    for c in _GILES_LO[1:]:
        pl = pl * wl + c
    ph = wh * 0.0 + _GILES_HI[0]
    for c in _GILES_HI[1:]:
        ph = ph * wh + c
    x = ops.where(lo, pl, ph) * a
    # beyond float32's reach (w > 16) Giles' fit fails: start from erfc's asymptotic form
    # 1 - a = exp(-x^2) / (x sqrt(pi)) * (1 - 1 / (2 x^2)), solved by fixed-point steps
    far = w > 16.0
    nlt = ops.where(far, w + ops.log1p(a), 16.0)
    g = ops.sqrt(nlt)
    for _ in range(3):
        g = ops.sqrt(nlt - ops.log(g * math.sqrt(math.pi)) + ops.log1p(-0.5 / (g * g)))
    x = ops.where(far, g, x)
    # Giles' guess is good to float32; Halley steps on erf(x) = a bring it to float64,
    # with the residual taken from erfc in the tail, where erf(x) rounds to 1
    steps = 3 if y._dtype == D.float64 else 1
    for _ in range(steps):
        tail = x >= 2.0
        r = ops.where(tail, (1.0 - a) - _erfc_tail(ops.where(tail, x, 2.0)), ops.erf(x) - a)
        d = (2.0 / math.sqrt(math.pi)) * ops.exp(-x * x)
        f = r / d
        x = x - f / (1.0 + x * f)
    x = ops.where(_signbit(y), -x, x)
    x = ops.where(y.abs() == 1, ops.where(y > 0, math.inf, -math.inf), x)
    x = ops.where(y.abs() > 1, math.nan, x)
    return ops.where(y.isnan(), y, x)


class _Erfinv(Function):
    @staticmethod
    def forward(ctx, y):
        out = _erfinv_forward(y)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (math.sqrt(math.pi) / 2) * ops.exp(out * out)


def erfinv(input: Tensor) -> Tensor:
    """The inverse of erf on (-1, 1); +-inf at +-1 and nan outside."""
    return _Erfinv.apply(_float(_tensor("erfinv", input)))
