"""torch.* elementwise functions written with ember ops: logs and powers, rounding, atan2,
bit operations, clamps, interpolation.

Composites only: each gets its gradient and every backend from the ops it is made of.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import dtypes as D
from .. import ops
from .._torch_gaps import gap
from ..dispatch import run
from ..errors import (
    DtypeNotSupportedError,
    EmberTypeError,
    EmberValueError,
    ShapeError,
)
from ..ops._out import write_out
from ..ops._util import broadcast_shapes
from ..ops.bitwise import (
    bitwise_and_op,
    bitwise_left_shift_op,
    bitwise_not_op,
    bitwise_or_op,
    bitwise_right_shift_op,
    bitwise_xor_op,
)
from ..ops.elementwise import clamp_op, nextafter_op
from ..ops.special import atan2_op
from ..tensor import Tensor
from ._util import _INTS, _float, _need, _need_tensors, _tensor
from .complexes import complex as _complex

__all__ = ["add", "sub", "subtract", "div", "divide", "true_divide",
           "clamp", "square", "isclose", "nan_to_num", "clamp_min", "clamp_max", "log2", "log10",
           "exp2", "sinh", "cosh", "trunc", "fix", "frac", "fmod", "logaddexp", "hypot", "erfc",
           "logit", "xlogy", "deg2rad", "rad2deg", "sgn", "positive", "float_power", "lerp",
           "addcmul", "addcdiv", "fmax", "fmin", "heaviside", "round", "bitwise_and", "bitwise_or",
           "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "atan2",
           "arctan2", "sinc", "xlog1py", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
           "arctanh", "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
           "less_equal", "not_equal", "maximum", "minimum", "logical_and", "logical_or",
           "logical_xor", "copysign", "signbit", "ldexp", "logaddexp2", "isposinf",
           "isneginf", "rsub", "fill", "gcd", "lcm", "frexp", "nextafter"]


def add(input, other, *, alpha=1) -> Tensor:
    """x + alpha * y (torch.add).

    PyTorch
    -------
    ``torch.add``
    """
    return ops.add(input, other if alpha == 1 else other * alpha)


def sub(input, other, *, alpha=1) -> Tensor:
    """x - alpha * y (torch.sub).

    PyTorch
    -------
    ``torch.sub``, ``torch.subtract``
    """
    return ops.sub(input, other if alpha == 1 else other * alpha)


subtract = sub
_ROUNDING = (None, "trunc", "floor")


def div(input, other, *, rounding_mode=None) -> Tensor:
    """x / y: true division (rounding_mode=None), rounded toward zero ("trunc") or
    down ("floor"), as torch.div; integer inputs keep their dtype when rounded.

    PyTorch
    -------
    ``torch.div``, ``torch.divide``
    """
    input, other = input, other
    if rounding_mode is None:
        return ops.div(input, other)
    if rounding_mode not in _ROUNDING:
        raise EmberValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got "
                              f"{rounding_mode!r}")
    if rounding_mode == "floor":
        return ops.floor_divide(input, other)
    ints = all(isinstance(v, (int, bool)) or (isinstance(v, Tensor) and v.dtype in _INTS)
               for v in (input, other))
    if not ints:
        return trunc(ops.div(input, other))
    # integers: |a| // |b| with the sign of a * b (exact, no float round trip)
    q = ops.floor_divide(ops.abs(input) if isinstance(input, Tensor) else abs(input),
                         ops.abs(other) if isinstance(other, Tensor) else abs(other))
    signs = [ops.lt(v, 0) if isinstance(v, Tensor) else v < 0 for v in (input, other)]
    a, b = signs if isinstance(signs[0], Tensor) else signs[::-1]
    negative = ops.logical_xor(a, b) if isinstance(b, Tensor) else \
        (ops.logical_not(a) if b else a)              # a Python number's sign is a bool
    return ops.where(negative, -q, q)


def true_divide(input, other) -> Tensor:
    """``x / y`` elementwise, always a floating result (the same as :func:`div`).

    PyTorch
    -------
    ``torch.true_divide``
    """
    return ops.div(input, other)


divide = div


_CLAMP_DTYPES = (D.float32, D.float64)


def _bound(v) -> bool:
    """None or a finite Python number: a bound clamp's one-op form takes."""
    return v is None or (type(v) in (int, float) and math.isfinite(v))


def clamp(input: Tensor, min=None, max=None) -> Tensor:
    """``input`` with every element limited to [``min``, ``max``] (either may be None, or a tensor).

    PyTorch
    -------
    ``torch.clamp``, ``torch.clip``
    """
    if min is None and max is None:
        raise EmberValueError("clamp: at least one of min and max must be given")
    if type(input) is Tensor and input._dtype in _CLAMP_DTYPES and _bound(min) and \
            _bound(max):
        # the common case (a float tensor, finite numbers): one op, one kernel on the CPU
        return run(clamp_op, input, lo=None if min is None else float(min),
                   hi=None if max is None else float(max))
    if min is not None:
        input = ops.where(input < min, min, input) if not isinstance(min, Tensor) \
            else ops.maximum(input, min)
    if max is not None:
        input = ops.where(input > max, max, input) if not isinstance(max, Tensor) \
            else ops.minimum(input, max)
    return input


def square(input: Tensor) -> Tensor:
    """``x * x`` elementwise.

    PyTorch
    -------
    ``torch.square``
    """
    if type(input) is Tensor and input._dtype is D.bool_:
        return input.to(D.int64) * input.to(D.int64)        # torch: pow(x, 2) of bool is int64
    return input * input


def isclose(input: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other| elementwise (equal infinities are close).

    PyTorch
    -------
    ``torch.isclose``
    """
    _need_tensors("isclose", input, other)
    return _isclose(input, other, rtol, atol, equal_nan)


def _isclose(input: Tensor, other, rtol, atol, equal_nan) -> Tensor:
    if rtol < 0 or atol < 0:
        raise EmberValueError(f"isclose(): rtol and atol must be greater than or equal to "
                              f"zero, got rtol={rtol}, atol={atol}")
    if type(other) is not Tensor:
        other = ops.full((), other, dtype=input._dtype, device=input._device)
    if input._dtype.category < D.FLOAT and other._dtype.category < D.FLOAT:
        return input == other
    close = (input - other).abs() <= atol + rtol * other.abs()
    close = close.logical_or(input == other)
    if equal_nan:
        close = close.logical_or(input.isnan().logical_and(other.isnan()))
    return close


def nan_to_num(input: Tensor, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    """nan, +inf and -inf replaced (the infinities by the dtype's extremes by default).

    PyTorch
    -------
    ``torch.nan_to_num``
    """
    if input._dtype.category == D.COMPLEX:      # each part on its own, as torch
        return _complex(nan_to_num(input.real, nan, posinf, neginf),
                        nan_to_num(input.imag, nan, posinf, neginf))
    if input._dtype.category != D.FLOAT:
        return input.clone()
    info = np.finfo(input._dtype.np) if input._dtype is not D.bfloat16 else None
    big = float(info.max) if info is not None else 3.3895313892515355e38
    out = ops.where(input.isnan(), nan, input)
    out = ops.where(out == float("inf"), big if posinf is None else posinf, out)
    return ops.where(out == float("-inf"), -big if neginf is None else neginf, out)


def clamp_min(input: Tensor, min) -> Tensor:
    """``input`` with every element at least ``min``.

    PyTorch
    -------
    ``torch.clamp_min``
    """
    _need_tensors("clamp_min", input, both=False)
    return clamp(input, min=min)


def clamp_max(input: Tensor, max) -> Tensor:
    """``input`` with every element at most ``max``.

    PyTorch
    -------
    ``torch.clamp_max``
    """
    _need_tensors("clamp_max", input, both=False)
    return clamp(input, max=max)


_LN2, _LN10 = math.log(2.0), math.log(10.0)


def log2(input: Tensor) -> Tensor:
    """The base-2 logarithm, elementwise.

    PyTorch
    -------
    ``torch.log2``
    """
    return _log_scaled(input, 1.0 / _LN2)


def log10(input: Tensor) -> Tensor:
    """The base-10 logarithm, elementwise.

    PyTorch
    -------
    ``torch.log10``
    """
    return _log_scaled(input, 1.0 / _LN10)


def _log_scaled(input, scale):
    out = ops.log(input)
    if out._dtype.category == D.COMPLEX:
        # a real scale of each part: complex * real multiplies (-inf + 0j) by (s + 0j),
        # whose imaginary part is -inf * 0 = nan (torch's log2(0j) is -inf + 0j)
        from .complexes import complex as _complex
        return _complex(out.real * scale, out.imag * scale)
    return out * scale


def exp2(input: Tensor) -> Tensor:
    """``2 ** input`` elementwise.

    PyTorch
    -------
    ``torch.exp2``, ``torch.special.exp2``
    """
    return ops.exp(_float(input) * _LN2)


def sinh(input: Tensor) -> Tensor:
    """(e**x - e**-x) / 2: from expm1 below |x| = 1 (e - 1/e loses every digit of a small
    x: sinh(1e-8) was 0), from e**(|x|/2) squared above (no overflow before the answer's).

    PyTorch
    -------
    ``torch.sinh``
    """
    if input._dtype.category == D.COMPLEX:    # sinh(x) cos(y) + i cosh(x) sin(y)
        x, y = input.real, input.imag
        # C99's special values: a zero part stays exact, inf with a non-finite y is inf
        re = ops.where(y == 0, sinh(x), ops.where(x == 0, x, ops.where(
            ops.isinf(x).logical_and(ops.isfinite(y).logical_not()), x,
            sinh(x) * ops.cos(y))))
        return _complex(re, ops.where(y == 0, y, cosh(x) * ops.sin(y)))
    x = _float(input)
    a = ops.abs(x)
    e = ops.expm1(ops.minimum(a, 1.0))
    small = (e + e / (e + 1.0)) * 0.5
    big = _half_exp(a)
    r = ops.where(a < 1.0, small, big - 0.25 / big)
    return ops.where(x < 0, -r, ops.where(x == 0, x, r))     # odd; zeros keep their sign


def cosh(input: Tensor) -> Tensor:
    """(e**x + e**-x) / 2, e**|x| / 2 made from e**(|x|/2) squared: cosh(89) is 2.2e38 in
    float32, not inf.

    PyTorch
    -------
    ``torch.cosh``
    """
    if input._dtype.category == D.COMPLEX:    # cosh(x) cos(y) + i sinh(x) sin(y)
        x, y = input.real, input.imag
        # C99's special values (as for sinh above)
        re = ops.where(ops.isinf(x).logical_and(ops.isfinite(y).logical_not()), ops.abs(x),
                       cosh(x) * ops.cos(y))
        im = ops.where(y == 0, y, ops.where(x == 0, x, sinh(x) * ops.sin(y)))
        return _complex(re, im)
    big = _half_exp(ops.abs(_float(input)))
    return big + 0.25 / big


def _half_exp(a: Tensor) -> Tensor:
    """e**a / 2 without overflowing before the result does."""
    half = ops.exp(a * 0.5)
    return half * 0.5 * half


def trunc(input: Tensor) -> Tensor:
    """Rounded toward zero.

    PyTorch
    -------
    ``torch.trunc``, ``torch.fix``
    """
    _no_complex("trunc", input)
    if input._dtype.category != D.FLOAT:
        return input.clone()
    return ops.where(input < 0, ops.ceil(input), ops.floor(input))


fix = trunc


def frac(input: Tensor) -> Tensor:
    """The fractional part, ``input - trunc(input)``, elementwise.

    PyTorch
    -------
    ``torch.frac``
    """
    return input - trunc(input)


def fmod(input: Tensor, other) -> Tensor:
    """The C remainder: input - trunc(input / other) * other (the sign of input).

    PyTorch
    -------
    ``torch.fmod``
    """
    _need_tensors("fmod", input, other, both=False)
    dtype = D.result_type(input, other)
    if dtype is D.bool_:
        raise EmberTypeError("fmod: not implemented for bool operands (as in torch); convert "
                             "them first, e.g. x.int()")
    if input._dtype is D.bool_:
        input = input.to(dtype)
    if type(other) is Tensor and other._dtype is D.bool_:
        other = other.to(dtype)
    elif type(other) is bool:
        other = int(other)
    if input._dtype.category != D.FLOAT and not isinstance(other, float) and (
            type(other) is not Tensor or other._dtype.category != D.FLOAT):
        r = input.remainder(other)
        return ops.where((r != 0).logical_and((r < 0) != (input < 0)), r - other, r)
    return input - trunc(input / other) * other


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))`` elementwise, computed without overflow.

    PyTorch
    -------
    ``torch.logaddexp``
    """
    _need_tensors("logaddexp", input, other)
    if input._dtype.category == D.COMPLEX or other._dtype.category == D.COMPLEX:
        # shifted by the larger real part (complex numbers have no maximum), as torch
        m = ops.maximum(input.real, other.real).detach()
        m = ops.where(m.isfinite(), m, 0.0)
        return ops.log(ops.exp(input - m) + ops.exp(other - m)) + m
    m = ops.maximum(input, other).detach()
    m = ops.where(m.isfinite(), m, 0.0)
    return ops.log(ops.exp(input - m) + ops.exp(other - m)) + m


def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)`` elementwise.

    PyTorch
    -------
    ``torch.hypot``
    """
    _need_tensors("hypot", input, other)
    return (input * input + other * other).sqrt()


def erfc(input: Tensor) -> Tensor:
    """The complementary error function ``1 - erf(input)``, elementwise.

    PyTorch
    -------
    ``torch.erfc``, ``torch.special.erfc``
    """
    return 1.0 - ops.erf(input)


def logit(input: Tensor, eps=None) -> Tensor:
    """``log(p / (1 - p))`` elementwise; with ``eps`` the input is first clamped to
    [``eps``, ``1 - eps``].

    PyTorch
    -------
    ``torch.logit``
    """
    _no_complex("logit", input)
    x = _float(input) if eps is None else _float(input).clamp(eps, 1.0 - eps)
    return ops.log(x / (1.0 - x))


def xlogy(input, other) -> Tensor:
    """input * log(other), 0 where input is 0 (and other is not nan).

    PyTorch
    -------
    ``torch.xlogy``, ``torch.special.xlogy``
    """
    if type(input) is not Tensor and type(other) is not Tensor:
        _need_tensors("xlogy", other, both=False)
    # torch's result dtype (a Python number does not widen a tensor's float dtype; an
    # integer tensor does not widen float16 to float32)
    dtype = _float_result(input, other)
    device = (input if type(input) is Tensor else other)._device
    input, other = (x.to(dtype) if type(x) is Tensor else
                    ops.full((), x, dtype=dtype, device=device) for x in (input, other))
    out = input * ops.log(other)
    return ops.where((input == 0).logical_and(~_isnan(other)), 0.0, out)


def _isnan(x):
    return x.isnan() if type(x) is Tensor else ops.full((), math.isnan(x), dtype=D.bool_)


def deg2rad(input: Tensor) -> Tensor:
    """Degrees converted to radians, elementwise.

    PyTorch
    -------
    ``torch.deg2rad``
    """
    _no_complex("deg2rad", input)
    return _float(input) * (math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    """Radians converted to degrees, elementwise.

    PyTorch
    -------
    ``torch.rad2deg``
    """
    _no_complex("rad2deg", input)
    return _float(input) * (180.0 / math.pi)


def sgn(input: Tensor) -> Tensor:
    """The sign of each element (-1, 0 or 1); for real tensors the same as :func:`sign`.

    PyTorch
    -------
    ``torch.sgn``
    """
    if type(input) is Tensor and input._dtype.category == D.COMPLEX:
        a = ops.abs(input)                  # z / |z|, 0 at 0 (a zero gradient there)
        zero = a == 0
        return ops.where(zero, 0, input / ops.where(zero, 1.0, a))
    return ops.sign(input)


def _no_complex(name, x):
    """torch refuses these on complex tensors; so does ember."""
    if type(x) is Tensor and x._dtype.category == D.COMPLEX:
        raise EmberTypeError(f"{name}: not defined on complex numbers (torch refuses it too), "
                             f"got {x._dtype.name}; work on .real, .imag or .abs() instead")


def _float_result(input, other) -> D.DType:
    """The result dtype of torch's float-only binary functions (atan2, copysign): the
    operands' result_type, the default float where that is an integer or bool."""
    dtype = D.result_type(input, other)
    return dtype if dtype.category >= D.FLOAT else D.get_default_dtype()


def positive(input: Tensor) -> Tensor:
    """``input`` itself (unary plus).

    PyTorch
    -------
    ``torch.positive``
    """
    if type(input) is Tensor and input._dtype is D.bool_:
        raise EmberTypeError("positive: the unary `+` on a bool tensor is not supported (as "
                             "in torch); use the tensor itself")
    return input


def float_power(input, exponent) -> Tensor:
    """``input ** exponent`` computed in float64.

    PyTorch
    -------
    ``torch.float_power``
    """
    if type(input) is not Tensor and type(exponent) is not Tensor:
        _need_tensors("float_power", exponent, both=False)
    # float64, or complex128 where either side is complex (torch)
    wide = D.complex128 if any((type(v) is Tensor and v._dtype.category == D.COMPLEX) or
                               type(v) is complex for v in (input, exponent)) else D.float64
    base = input.to(wide) if type(input) is Tensor else input
    exp = exponent.to(wide) if type(exponent) is Tensor else exponent
    return base ** exp


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    """Linear interpolation ``input + weight * (end - input)``, elementwise.

    PyTorch
    -------
    ``torch.lerp``
    """
    return input + (end - input) * weight


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``input + value * tensor1 * tensor2`` elementwise.

    PyTorch
    -------
    ``torch.addcmul``
    """
    return input + tensor1 * tensor2 * value


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``input + value * tensor1 / tensor2`` elementwise.

    PyTorch
    -------
    ``torch.addcdiv``
    """
    return input + tensor1 / tensor2 * value


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """The larger of the two, ignoring nan (nan only where both are).

    PyTorch
    -------
    ``torch.fmax``
    """
    _need_tensors("fmax", input, other)
    return ops.where(input.isnan(), other, ops.where(other.isnan(), input,
                                                     ops.maximum(input, other)))


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise minimum, ignoring nan (nan only where both are nan).

    PyTorch
    -------
    ``torch.fmin``
    """
    _need_tensors("fmin", input, other)
    return ops.where(input.isnan(), other, ops.where(other.isnan(), input,
                                                     ops.minimum(input, other)))


def heaviside(input: Tensor, values) -> Tensor:
    """0 where input < 0, values where input == 0, 1 where input > 0.

    PyTorch
    -------
    ``torch.heaviside``
    """
    _need_tensors("heaviside", input, values)
    dtype = D.result_type(input, values)
    step = ops.where(input > 0, 1, 0).to(dtype)
    if type(values) is not Tensor:
        values = ops.tensor(values, dtype=dtype, device=input._device)
    return ops.where(input == 0, values.to(dtype), step)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Nearest value with `decimals` decimal digits (halves to even), as PyTorch scales:
    x * 10**d rounded, then divided back (negative d rounds to tens, hundreds, ...).

    PyTorch
    -------
    ``torch.round``
    """
    _need("round", input)
    if decimals == 0 or input._dtype.category != D.FLOAT:
        return ops.round(input)
    scale = 10.0 ** builtins.abs(int(decimals))
    if decimals > 0:
        return ops.round(input * scale) / scale
    return ops.round(input / scale) * scale


# the bit operations: declared kernels (ops/bitwise.py), one pass where the backend has
# them, integer arithmetic everywhere else
def _integers(name, *operands):
    for x in operands:
        dtype = x._dtype if type(x) is Tensor else None
        if dtype is not None and dtype is not D.bool_ and dtype not in _INTS or (
                dtype is None and not isinstance(x, (int, np.integer))):
            got = dtype.name if dtype is not None else type(x).__name__
            raise EmberTypeError(f"{name}: expected integer or bool tensors (or Python ints), "
                                 f"got {got}")
    tensors = [x for x in operands if type(x) is Tensor]
    if not tensors:
        raise EmberTypeError(f"{name}: expected at least one tensor, got Python ints")
    # torch's result_type: a 0-d tensor or a Python int lifts only the category
    # (uint8 & int8 0-d -> uint8; a bool tensor & 3 -> int64)
    dtype = D.result_type(*operands)
    like = tensors[0]
    return [x.to(dtype) if type(x) is Tensor else ops.full((), x, dtype=dtype,
                                                            device=like._device)
            for x in operands]


def _shift_amount(name, input, other):
    a, b = _integers(name, input, other)
    if a._dtype is D.bool_:
        raise EmberTypeError(f"{name}: expected integer tensors, got bool")
    return a, b


def bitwise_and(input, other) -> Tensor:
    """``input & other`` elementwise, for integer and bool tensors.

    PyTorch
    -------
    ``torch.bitwise_and``
    """
    return run(bitwise_and_op, *_integers("bitwise_and", input, other))


def bitwise_or(input, other) -> Tensor:
    """``input | other`` elementwise, for integer and bool tensors.

    PyTorch
    -------
    ``torch.bitwise_or``
    """
    return run(bitwise_or_op, *_integers("bitwise_or", input, other))


def bitwise_xor(input, other) -> Tensor:
    """``input ^ other`` elementwise, for integer and bool tensors.

    PyTorch
    -------
    ``torch.bitwise_xor``
    """
    return run(bitwise_xor_op, *_integers("bitwise_xor", input, other))


def bitwise_not(input: Tensor) -> Tensor:
    """``~input`` elementwise: every bit flipped (logical not for bool).

    PyTorch
    -------
    ``torch.bitwise_not``
    """
    return run(bitwise_not_op, *_integers("bitwise_not", input))


def bitwise_left_shift(input, other) -> Tensor:
    """input * 2**other, wrapping like the machine shift.

    PyTorch
    -------
    ``torch.bitwise_left_shift``
    """
    return run(bitwise_left_shift_op, *_shift_amount("bitwise_left_shift", input, other))


def bitwise_right_shift(input, other) -> Tensor:
    """floor(input / 2**other): the arithmetic shift, which keeps the sign.

    PyTorch
    -------
    ``torch.bitwise_right_shift``
    """
    return run(bitwise_right_shift_op, *_shift_amount("bitwise_right_shift", input, other))


def atan2(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """The angle of the point (other, input), in (-pi, pi], with IEEE signed-zero rules.

    PyTorch
    -------
    ``torch.atan2``, ``torch.arctan2``
    """
    if out is not None:
        raise gap("atan2(out=)", "write the result with out.copy_(...)")
    _need_tensors("atan2", input, other)
    y, x = input, other
    dtype = _float_result(y, x)
    y, x = y.to(dtype), x.to(dtype)
    shape = broadcast_shapes("atan2", y._data.shape, x._data.shape)
    return run(atan2_op, ops.expand(y, shape), ops.expand(x, shape))


arctan2 = atan2
# NumPy's spellings of the inverse trigonometric primitives, as torch has them
arcsin, arccos, arctan = ops.asin, ops.acos, ops.atan
arcsinh, arccosh, arctanh = ops.asinh, ops.acosh, ops.atanh


def sinc(input: Tensor) -> Tensor:
    """sin(pi x) / (pi x), 1 at 0.

    PyTorch
    -------
    ``torch.sinc``, ``torch.special.sinc``
    """
    x = _float(_tensor("sinc", input))
    half = x._dtype in (D.float16, D.bfloat16)
    if half:                     # pi * x rounded to 8 bits first is far off: torch computes
        x = x.to(D.float32)      # in float32 and rounds once
    zero = x == 0
    px = math.pi * ops.where(zero, 1.0, x)
    out = ops.where(zero, 1.0, ops.sin(px) / px)
    return out.to(input._dtype) if half else out


def xlog1py(input, other) -> Tensor:
    """input * log1p(other), 0 where input is 0 (and other is not nan).

    PyTorch
    -------
    ``torch.special.xlog1py``
    """
    if type(input) is not Tensor:
        input = _tensor("xlog1py", input, _tensor("xlog1py", other))
    other = _tensor("xlog1py", other, input)
    out = input * ops.log1p(other)
    return ops.where((input == 0).logical_and(~other.isnan()), 0.0, out)


def _strict(name: str, fn, both: bool):
    """The public form of a binary primitive: torch's function refuses a Python number as
    `input` (and, for those without a number overload, as `other`); ember's own code calls
    the primitive, which takes either."""
    def f(input, other):
        _need_tensors(name, input, other, both=both)
        return fn(input, other)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = fn.__doc__
    return f


eq, ne = _strict("eq", ops.eq, False), _strict("ne", ops.ne, False)
lt, le = _strict("lt", ops.lt, False), _strict("le", ops.le, False)
gt, ge = _strict("gt", ops.gt, False), _strict("ge", ops.ge, False)
greater, greater_equal = _strict("greater", ops.gt, False), _strict("greater_equal", ops.ge, False)
less, less_equal = _strict("less", ops.lt, False), _strict("less_equal", ops.le, False)
not_equal = _strict("not_equal", ops.ne, False)
maximum = _strict("maximum", ops.maximum, True)
minimum = _strict("minimum", ops.minimum, True)
logical_and = _strict("logical_and", ops.logical_and, True)
logical_or = _strict("logical_or", ops.logical_or, True)
logical_xor = _strict("logical_xor", ops.logical_xor, True)


# --- sign bits, infinities, powers of two --------------------------------------------------

def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set: negative numbers and -0.0 (torch.signbit).

    PyTorch
    -------
    ``torch.signbit``
    """
    _need_tensors("signbit", input, both=False)
    if input._dtype.category != D.FLOAT:
        return input < 0 if input._dtype.is_signed else ops.zeros_like(input, dtype=D.bool_)
    # -0.0 is the one negative number equal to zero: its reciprocal is -inf
    zero = input == 0
    return (input < 0).logical_or(zero.logical_and(1.0 / ops.where(zero, input, 1.0) < 0))


def copysign(input, other) -> Tensor:
    """|input| with the sign of other (-0.0 counts as negative), as a float.

    PyTorch
    -------
    ``torch.copysign``
    """
    _need_tensors("copysign", input, both=False)
    dtype = _float_result(input, other)
    if dtype.category == D.COMPLEX:
        raise EmberTypeError(f"copysign: not defined on complex numbers (torch refuses it "
                             f"too), got {dtype.name}; use .real or .abs() first")
    x = input.to(dtype)
    neg = signbit(other) if type(other) is Tensor else math.copysign(1.0, other) < 0
    if type(neg) is bool:
        return -x.abs() if neg else x.abs()
    return ops.where(neg, -x.abs(), x.abs())


def nextafter(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """The next float after input toward other, one step of input's dtype (a float32 steps
    by float32's spacing); other itself where they are equal; differentiable in input (the
    gradient passes), with a zero gradient for other, as torch's.

    PyTorch
    -------
    ``torch.nextafter``
    """
    _need_tensors("nextafter", input, other)
    dtype = D.promote_types(input._dtype, other._dtype)
    if dtype.category != D.FLOAT:
        raise DtypeNotSupportedError(f"nextafter(): expected floating point tensors, got "
                                     f"{input._dtype.name} and {other._dtype.name}; call "
                                     ".float() first")
    shape = broadcast_shapes("nextafter", input._data.shape, other._data.shape)
    result = run(nextafter_op, ops.expand(input.to(dtype), shape),
                 ops.expand(other.to(dtype), shape))
    return result if out is None else write_out("nextafter", result, out)


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """input * 2 ** other.

    PyTorch
    -------
    ``torch.ldexp``
    """
    _need_tensors("ldexp", input, other)
    dtype = _float_result(input, other)
    return input.to(dtype) * ops.pow(2.0, other.to(dtype))


def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """log2(2 ** input + 2 ** other) without overflow.

    PyTorch
    -------
    ``torch.logaddexp2``
    """
    _need_tensors("logaddexp2", input, other)
    m = ops.maximum(input, other).detach()
    m = ops.where(m.isfinite(), m, 0.0)
    return log2(exp2(input - m) + exp2(other - m)) + m


def isposinf(input: Tensor) -> Tensor:
    """Whether each element is +inf.

    PyTorch
    -------
    ``torch.isposinf``
    """
    _need_tensors("isposinf", input, both=False)
    if input._dtype.category != D.FLOAT:
        return ops.zeros_like(input, dtype=D.bool_)
    return input == math.inf


def isneginf(input: Tensor) -> Tensor:
    """Whether each element is -inf.

    PyTorch
    -------
    ``torch.isneginf``
    """
    _need_tensors("isneginf", input, both=False)
    if input._dtype.category != D.FLOAT:
        return ops.zeros_like(input, dtype=D.bool_)
    return input == -math.inf


def rsub(input: Tensor, other, *, alpha=1) -> Tensor:
    """other - alpha * input (torch.rsub).

    PyTorch
    -------
    ``torch.rsub``
    """
    _need_tensors("rsub", input, both=False)
    return ops.sub(other, input if alpha == 1 else input * alpha)


def fill(input: Tensor, value) -> Tensor:
    """A tensor of input's shape and dtype filled with value (a number or a 0-d tensor,
    whose gradient is the sum of the result's).

    PyTorch
    -------
    ``torch.fill``
    """
    _need_tensors("fill", input, both=False)
    if type(value) is Tensor:
        if value.ndim != 0:
            raise ShapeError(f"fill(): only supports a 0-dimensional value tensor, but got a "
                             f"tensor with {value.ndim} dimensions")
        value = value.to(input._dtype)
    keep = ops.ones_like(input, dtype=D.bool_)
    return ops.where(keep, value, input)


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """Greatest common divisor of integers (non-negative; gcd(0, 0) = 0).

    PyTorch
    -------
    ``torch.gcd``
    """
    a, b = _integer_pair("gcd", input, other)
    while True:
        more = b != 0
        if not bool(more.any()):
            return a
        safe = ops.where(more, b, 1)
        a, b = ops.where(more, b, a), ops.where(more, ops.remainder(a, safe), 0)


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """Least common multiple of integers (non-negative; 0 where either is 0).

    PyTorch
    -------
    ``torch.lcm``
    """
    a, b = _integer_pair("lcm", input, other)
    g = gcd(a, b)
    return ops.where(g == 0, 0, ops.floor_divide(a, ops.where(g == 0, 1, g)) * b)


def _integer_pair(name, input, other):
    _need_tensors(name, input, other)
    for x in (input, other):
        if x._dtype.category != D.INT:
            raise DtypeNotSupportedError(f"{name}(): expected integer tensors, got "
                                         f"{x._dtype.name}; cast with .long()")
    dtype = D.promote_types(input._dtype, other._dtype)
    shape = broadcast_shapes(name, input._data.shape, other._data.shape)
    return (ops.expand(input.to(dtype), shape).abs(), ops.expand(other.to(dtype), shape).abs())


class frexp_result(tuple):
    """(mantissa, exponent), like torch.return_types.frexp."""

    @property
    def mantissa(self):
        return self[0]

    @property
    def exponent(self):
        return self[1]


def frexp(input: Tensor) -> frexp_result:
    """input = mantissa * 2 ** exponent with |mantissa| in [0.5, 1) (0, inf and nan: the
    input itself and exponent 0).

    PyTorch
    -------
    ``torch.frexp``
    """
    _need_tensors("frexp", input, both=False)
    if input._dtype.category != D.FLOAT:
        raise DtypeNotSupportedError(f"frexp(): expected a floating point input, got "
                                     f"{input._dtype.name}")
    finite = input.isfinite().logical_and(input != 0)
    a = ops.where(finite, input.abs(), 1.0)
    e = ops.floor(log2(a.to(D.float64))) + 1
    m = a.to(D.float64) / ops.pow(2.0, e)
    # log2 rounding: bring the mantissa into [0.5, 1)
    up, down = m >= 1, m < 0.5
    e = ops.where(up, e + 1, ops.where(down, e - 1, e))
    e = ops.where(finite, e, 0.0)
    mant = input / ops.pow(2.0, e.to(input._dtype if input._dtype is not D.float16 and
                                      input._dtype is not D.bfloat16 else D.float32))
    return frexp_result((ops.where(finite, mant.to(input._dtype), input), e.to(D.int32)))
