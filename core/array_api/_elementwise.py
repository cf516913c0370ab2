"""Elementwise functions of the array API standard, written with ember ops (every device).

Where ember has the op, the function checks dtypes, promotes by the standard and calls it;
the rest are composites with the standard's special cases (signed zeros, infinities, nan):
inverse trigonometric functions from a Cephes-style atan, hyperbolic functions from
exp/expm1/log1p with overflow-safe forms, hypot and logaddexp scaled, copysign and signbit
through the sign of 1/x for zeros.  signbit cannot read the sign bit of a nan (no bitcast
primitive): it reports False for every nan, and copysign gives a positive nan sign.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from .. import functional as F
from .. import ops
from .._doc import generated
from ..tensor import Tensor
from ._dtypes import need, promote

# the PyTorch function of an array API name that PyTorch spells otherwise (torch.equal is
# not elementwise)
_TORCH = {"equal": "eq", "bitwise_invert": "bitwise_not"}
_LN2 = math.log(2.0)
_PIO2, _PIO4 = math.pi / 2, math.pi / 4
_BIG = 2.0 ** 28        # past it, asinh/acosh are log(2x) to double precision


def _unary(name: str, accepts: str, fn, doc: str):
    def f(x: Tensor, /) -> Tensor:
        return fn(need(name, x, accepts))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = generated(doc, f"torch.{_TORCH.get(name, name)}")
    return f


def _binary(name: str, accepts: str, fn, doc: str, composite: bool = False):
    if composite:       # written with ember ops on tensors: a Python scalar becomes a 0-d one
        def f(x1, x2, /) -> Tensor:
            x1, x2 = promote(name, x1, x2, accepts)
            if type(x1) is not Tensor:
                x1 = _c(x2, x1)
            elif type(x2) is not Tensor:
                x2 = _c(x1, x2)
            return fn(x1, x2)
    else:
        def f(x1, x2, /) -> Tensor:
            return fn(*promote(name, x1, x2, accepts))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = generated(doc, f"torch.{_TORCH.get(name, name)}")
    return f


def _is_int(x: Tensor) -> bool:
    return x._dtype.category < D.FLOAT


def _complex_too(real_fn, complex_fn):
    """The composite for real inputs; ember's complex function for complex ones."""
    def f(x):
        return complex_fn(x) if x._dtype.category == D.COMPLEX else real_fn(x)
    return f


def _odd(x: Tensor, r: Tensor) -> Tensor:
    """An odd function's value r(|x|) given the sign of x; zeros keep their own sign."""
    return ops.where(x < 0, -r, ops.where(x == 0, x, r))


def _c(x: Tensor, value: float) -> Tensor:
    """A 0-d constant in x's dtype on x's device (where() of two Python floats would give
    the default float, rounding float64 constants to float32)."""
    return ops.full((), value, dtype=x._dtype, device=x._device)


# -- composites ---------------------------------------------------------------------------

def _atan_reduced(x: Tensor) -> Tensor:
    # Cephes atan: a rational approximation on [0, 0.66] (1 ulp in double precision)
    z = x * x
    p = (((z * -8.750608600031904122785e-01 - 1.615753718733365076637e+01) * z
          - 7.500855792314704667340e+01) * z - 1.228866684490136173410e+02) * z \
        - 6.485021904942025371773e+01
    q = ((((z + 2.485846490142306297962e+01) * z + 1.650270098316988542046e+02) * z
          + 4.328810604912902668951e+02) * z + 4.853903996359136964868e+02) * z \
        + 1.945506571482613964425e+02
    return x * (z * p / q) + x


def _atan(x: Tensor) -> Tensor:
    a = ops.abs(x)
    big = a > 2.41421356237309504880                # tan(3 pi / 8)
    mid = (a > 0.66).logical_and(big.logical_not())
    # each range reduced into [0, 0.66]: atan(a) = pi/2 - atan(1/a) = pi/4 + atan((a-1)/(a+1));
    # 1/inf is 0 and nan stays nan
    reduced = ops.where(big, -ops.reciprocal(ops.where(big, a, 1.0)),
                        ops.where(mid, (a - 1.0) / (a + 1.0), a))
    # pi/2 and pi/4 as a float (hi) plus the digits the float misses (lo), Cephes' order
    hi = ops.where(big, _c(x, _PIO2), ops.where(mid, _c(x, _PIO4), 0.0))
    lo = ops.where(big, _c(x, 6.123233995736765886130e-17),
                   ops.where(mid, _c(x, 3.061616997868382943065e-17), 0.0))
    return _odd(x, hi + (_atan_reduced(reduced) + lo))


def _asin(x: Tensor) -> Tensor:
    a = ops.abs(x)
    # (1 - a)(1 + a) keeps the digits that 1 - a*a loses near |x| = 1
    return _odd(x, _atan(a / ops.sqrt((1.0 - a) * (1.0 + a))))


def _acos(x: Tensor) -> Tensor:
    # 2 atan(sqrt((1 - x) / (1 + x))): accurate at both ends, pi at x = -1
    return _atan(ops.sqrt((1.0 - x) / (1.0 + x))) * 2.0


def _atan2(y: Tensor, x: Tensor) -> Tensor:
    neg_y, neg_x = signbit(y), signbit(x)
    pi = ops.where(neg_y, _c(y, -math.pi), math.pi)            # pi with the sign of y
    zero = ops.where(neg_y, _c(y, -0.0), 0.0)                   # 0 with the sign of y
    q = _atan(y / x)
    # x < 0: the half-plane of y picks the branch, by y's own sign (y / x may underflow to a
    # zero of the wrong sign: -tiny / -1e8 is +0, whose q + pi would be +pi, not -pi)
    out = ops.where(x < 0, ops.where(neg_y, q - math.pi, q + math.pi), q)
    # the standard's special cases, the later ones taking precedence
    inf_x, inf_y = ops.isinf(x), ops.isinf(y)
    out = ops.where(inf_y, ops.where(inf_x, ops.where(neg_x, pi * 0.75, pi * 0.25), pi * 0.5),
                    out)
    out = ops.where(inf_x.logical_and(inf_y.logical_not()), ops.where(neg_x, pi, zero), out)
    out = ops.where((x == 0).logical_and(y != 0).logical_and(inf_y.logical_not()), pi * 0.5,
                    out)
    out = ops.where(y == 0, ops.where(neg_x, pi, zero), out)
    return ops.where(ops.isnan(x).logical_or(ops.isnan(y)), math.nan, out)


def _sinh(x: Tensor) -> Tensor:
    a = ops.abs(x)
    e = ops.expm1(ops.minimum(a, 1.0))
    small = (e + e / (e + 1.0)) * 0.5           # exact digits near 0
    half = ops.exp(a * 0.5)
    big = half * 0.5 * half                     # e**a / 2 without overflowing early
    return _odd(x, ops.where(a < 1.0, small, big - 0.25 / big))


def _cosh(x: Tensor) -> Tensor:
    half = ops.exp(ops.abs(x) * 0.5)
    big = half * 0.5 * half
    return big + 0.25 / big


def _asinh(x: Tensor) -> Tensor:
    a = ops.abs(x)
    s = ops.minimum(a, _BIG)
    small = ops.log1p(s + s * s / (ops.sqrt(s * s + 1.0) + 1.0))
    return _odd(x, ops.where(a > _BIG, ops.log(a) + _LN2, small))


def _acosh(x: Tensor) -> Tensor:
    t = ops.minimum(x, _BIG) - 1.0
    small = ops.log1p(t + ops.sqrt(t * 2.0 + t * t))
    # below 1 (-inf included) the domain ends: nan, where t * 2 + t * t would be positive
    # again for large negative t (acosh(-1e8) would be a number)
    return ops.where(x < 1.0, math.nan, ops.where(x > _BIG, ops.log(x) + _LN2, small))


def _atanh(x: Tensor) -> Tensor:
    a = ops.abs(x)
    return _odd(x, ops.log1p(a * 2.0 / (1.0 - a)) * 0.5)


def signbit(x: Tensor, /) -> Tensor:
    """Whether x's sign is negative, -0.0 included (nan: False, see the module doc).

    PyTorch
    -------
    ``torch.signbit``
    """
    need("signbit", x, "real floating-point")
    return (x < 0).logical_or((x == 0).logical_and(ops.reciprocal(x) < 0))


def _copysign(x1: Tensor, x2: Tensor) -> Tensor:
    a = ops.abs(x1)
    return ops.where(signbit(x2), -a, a)


def _hypot(x1: Tensor, x2: Tensor) -> Tensor:
    a, b = ops.abs(x1), ops.abs(x2)
    hi, lo = ops.maximum(a, b), ops.minimum(a, b)
    r = lo / ops.where(hi == 0, 1.0, hi)
    out = ops.where(hi == 0, 0.0, hi * ops.sqrt(r * r + 1.0))
    return ops.where(ops.isinf(a).logical_or(ops.isinf(b)), math.inf, out)


def _logaddexp(x1: Tensor, x2: Tensor) -> Tensor:
    same = x1 == x2                       # equal infinities too: inf - inf would be nan
    d = ops.where(same, 0.0, x1 - x2)
    out = ops.maximum(x1, x2) + ops.log1p(ops.exp(-ops.abs(d)))
    return ops.where(same, x1 + _LN2, out)


def _trunc(x: Tensor) -> Tensor:
    return x if _is_int(x) else ops.where(x < 0, ops.ceil(x), ops.floor(x))


def clip(x: Tensor, /, min=None, max=None) -> Tensor:
    """x limited to [min, max] (arrays or Python scalars; nan stays nan), in x's dtype.

    PyTorch
    -------
    ``torch.clip``
    """
    need("clip", x, "real numeric")
    out = x
    for bound, pick in ((min, ops.maximum), (max, ops.minimum)):
        if bound is None:
            continue
        if type(bound) is not Tensor:
            if _is_int(x):
                # a bound past the dtype's range clips nothing (and must not wrap around)
                info = np.iinfo(x._dtype.np)
                if not info.min <= bound <= info.max:
                    continue
            bound = _c(x, bound)
        out = pick(out, bound.to(x._dtype))
    return out


def _same(x):
    return x


def _imag(x):
    if x._dtype.category == D.COMPLEX:
        return F.imag(x)
    return ops.zeros_like(x)


def _real(x):
    return F.real(x) if x._dtype.category == D.COMPLEX else x


def _conj(x):
    return F.conj(x) if x._dtype.category == D.COMPLEX else x


def _round(x):
    return x if _is_int(x) else ops.round(x)


def _int_identity(op):
    return lambda x: x if _is_int(x) else op(x)


abs = _unary("abs", "numeric", ops.abs, "|x| (the magnitude, real, of complex x)")
acos = _unary("acos", "floating-point", _complex_too(_acos, ops.acos),
              "inverse cosine, in [0, pi]")
acosh = _unary("acosh", "floating-point", _complex_too(_acosh, ops.acosh),
               "inverse hyperbolic cosine")
asin = _unary("asin", "floating-point", _complex_too(_asin, ops.asin),
              "inverse sine, in [-pi/2, pi/2]")
asinh = _unary("asinh", "floating-point", _complex_too(_asinh, ops.asinh),
               "inverse hyperbolic sine")
atan = _unary("atan", "floating-point", _complex_too(_atan, ops.atan),
              "inverse tangent, in [-pi/2, pi/2]")
atanh = _unary("atanh", "floating-point", _complex_too(_atanh, ops.atanh),
               "inverse hyperbolic tangent")
ceil = _unary("ceil", "real numeric", _int_identity(ops.ceil), "smallest integer >= x")
conj = _unary("conj", "numeric", _conj, "complex conjugate (x itself for real x)")
cos = _unary("cos", "floating-point", ops.cos, "cosine")
cosh = _unary("cosh", "floating-point", _complex_too(_cosh, F.cosh), "hyperbolic cosine")
exp = _unary("exp", "floating-point", ops.exp, "e ** x")
expm1 = _unary("expm1", "floating-point", ops.expm1, "exp(x) - 1, exact near 0")
floor = _unary("floor", "real numeric", _int_identity(ops.floor), "largest integer <= x")
imag = _unary("imag", "numeric", _imag, "imaginary part (zeros for real x)")
isfinite = _unary("isfinite", "numeric", ops.isfinite, "x is neither infinite nor nan")
isinf = _unary("isinf", "numeric", ops.isinf, "x is +inf or -inf")
isnan = _unary("isnan", "numeric", ops.isnan, "x is nan")
log = _unary("log", "floating-point", ops.log, "natural logarithm")
log1p = _unary("log1p", "floating-point", ops.log1p, "log(1 + x), exact near 0")
log2 = _unary("log2", "floating-point", lambda x: ops.log(x) * (1.0 / _LN2), "base-2 logarithm")
log10 = _unary("log10", "floating-point", lambda x: ops.log(x) * (1.0 / math.log(10.0)),
               "base-10 logarithm")
logical_not = _unary("logical_not", "bool", ops.logical_not, "not x")
negative = _unary("negative", "numeric", ops.neg, "-x")
positive = _unary("positive", "numeric", _same, "+x")
real = _unary("real", "numeric", _real, "real part (x itself for real x)")
reciprocal = _unary("reciprocal", "floating-point", ops.reciprocal, "1 / x")
round = _unary("round", "numeric", _round, "nearest integer, halves to even")
sign = _unary("sign", "numeric", _complex_too(ops.sign, F.sgn),
              "-1, 0 or 1 by the sign of x (nan for nan); x / |x| for complex x")
sin = _unary("sin", "floating-point", ops.sin, "sine")
sinh = _unary("sinh", "floating-point", _complex_too(_sinh, F.sinh), "hyperbolic sine")
sqrt = _unary("sqrt", "floating-point", ops.sqrt, "square root")
square = _unary("square", "numeric", lambda x: x * x, "x * x")
tan = _unary("tan", "floating-point", _complex_too(lambda x: ops.sin(x) / ops.cos(x), ops.tan),
              "tangent")
tanh = _unary("tanh", "floating-point", ops.tanh, "hyperbolic tangent")
trunc = _unary("trunc", "real numeric", _trunc, "x rounded toward zero")

add = _binary("add", "numeric", ops.add, "x1 + x2")
atan2 = _binary("atan2", "real floating-point", _atan2,
                "the angle of the point (x2, x1), in [-pi, pi]", composite=True)
copysign = _binary("copysign", "real floating-point", _copysign, "|x1| with the sign of x2",
                   composite=True)
divide = _binary("divide", "numeric", ops.div, "x1 / x2 (true division)")
equal = _binary("equal", "any", ops.eq, "x1 == x2")
floor_divide = _binary("floor_divide", "real numeric", ops.floor_divide, "floor(x1 / x2)")
greater = _binary("greater", "real numeric", ops.gt, "x1 > x2")
greater_equal = _binary("greater_equal", "real numeric", ops.ge, "x1 >= x2")
hypot = _binary("hypot", "real floating-point", _hypot, "sqrt(x1**2 + x2**2) without overflow",
                composite=True)
less = _binary("less", "real numeric", ops.lt, "x1 < x2")
less_equal = _binary("less_equal", "real numeric", ops.le, "x1 <= x2")
logaddexp = _binary("logaddexp", "real floating-point", _logaddexp,
                    "log(exp(x1) + exp(x2)) without overflow", composite=True)
logical_and = _binary("logical_and", "bool", ops.logical_and, "x1 and x2")
logical_or = _binary("logical_or", "bool", ops.logical_or, "x1 or x2")
logical_xor = _binary("logical_xor", "bool", ops.logical_xor, "x1 xor x2")
maximum = _binary("maximum", "real numeric", ops.maximum, "the larger of x1 and x2 (nan wins)")
minimum = _binary("minimum", "real numeric", ops.minimum, "the smaller of x1 and x2 (nan wins)")
multiply = _binary("multiply", "numeric", ops.mul, "x1 * x2")
not_equal = _binary("not_equal", "any", ops.ne, "x1 != x2")
pow = _binary("pow", "numeric", ops.pow, "x1 ** x2")
remainder = _binary("remainder", "real numeric", ops.remainder,
                    "x1 - floor(x1 / x2) * x2 (sign of x2)")
subtract = _binary("subtract", "numeric", ops.sub, "x1 - x2")
