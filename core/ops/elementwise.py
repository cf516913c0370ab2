"""Elementwise primitives: unary math, binary arithmetic and comparisons, where, cast.

Kernel signatures: unary k(x); binary k(x, y) where either side may be a Python scalar;
where k(cond, x, y); cast k(x, *, dtype).  Inputs arrive already promoted.
"""
from __future__ import annotations

import math

from .. import dtypes as D
from .._doc import generated
from ..dispatch import binary as _binary
from ..dispatch import run, use_cast
from ..dispatch import unary as _unary
from ..errors import EmberTypeError
from ..tensor import Tensor
from ._op import (
    REGISTRY,
    declare,
    rule_attr,
    rule_bool,
    rule_first,
    rule_float,
    rule_same,
    shape_broadcast,
    shape_first,
)
from ._util import broadcast_shapes
from .complex import rule_abs
from .creation import full

_2_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _zero(g, out, x):
    return (g * 0,)


def _need_tensor(name, x):
    if type(x) is not Tensor:
        raise EmberTypeError(f"{name}(): expected a Tensor, got {type(x).__name__}; "
                             f"wrap it with ember.tensor(...)")


def _unary_fn(op):
    def f(input):                       # torch's name: torch.exp(input=x)
        _need_tensor(op.name, input)
        return _unary(op, input)
    f.__name__ = f.__qualname__ = op.name
    f.__doc__ = generated(f"{op.doc}, elementwise.",
                          f"torch.{op.name}", params="input : Tensor", returns="Tensor")
    return f


def _check_neg(inputs, attrs):
    if inputs[0]._dtype is D.bool_:
        raise EmberTypeError("neg: negation, the `-` operator, on a bool tensor is not "
                             "supported; use logical_not() or `~` instead")


UNARY = {}


def _u(name, rule, fast, vjp=None, *, doc, save_out=False, check=None, uses=None,
       public=True):
    op = declare(name, "unary", rule, sig="x", doc=doc, fast=fast, vjp=vjp, save_out=save_out,
                 check=check, uses=uses, shape=shape_first,
                 inplace=public and rule is not rule_bool, public=public)
    UNARY[name] = fn = _unary_fn(op)
    return fn


def _grad_kernel(name, serves, sig, doc, decompose, **kw):
    """A fused gradient kernel: one pass a backend may offer for `serves`'s VJP; without it
    (or while a graph of the gradient is being built) its decomposition runs."""
    return declare(name, "gradient", rule_same, sig=sig, doc=doc, serves=serves,
                   decompose=decompose, shape=shape_first, **kw)


tanh_backward_op = _grad_kernel("tanh_backward", "tanh", "g, out", "g * (1 - out * out)",
                                lambda g, out: g * (1 - out * out))
sigmoid_backward_op = _grad_kernel("sigmoid_backward", "sigmoid", "g, out",
                                   "g * out * (1 - out)", lambda g, out: g * out * (1 - out))

# name, dtype rule, fast-path table, gradient rule (g, out, x) -> (gx,)
neg = _u("neg", rule_same, "same_nobool", lambda g, out, x: (-g,), check=_check_neg, uses=(),
         doc="-x")
abs = _u("abs", rule_abs, "same", lambda g, out, x: (g * x.sgn(),), doc="|x|")
sign = _u("sign", rule_same, "same", _zero, doc="-1, 0 or 1 by the sign of x; nan stays nan")
exp = _u("exp", rule_float, "float", lambda g, out, x: (g * out,), save_out=True, uses=(),
         doc="e ** x")
log = _u("log", rule_float, "float", lambda g, out, x: (g / x,), doc="natural logarithm")
log1p = _u("log1p", rule_float, "float", lambda g, out, x: (g / (x + 1),), doc="log(1 + x)")
expm1 = _u("expm1", rule_float, "float", lambda g, out, x: (g * (out + 1),), save_out=True,
           uses=(), doc="exp(x) - 1")
sqrt = _u("sqrt", rule_float, "float", lambda g, out, x: (g / (out * 2),), save_out=True,
          uses=(), doc="square root")
rsqrt = _u("rsqrt", rule_float, "float", lambda g, out, x: (g * out * out * out * -0.5,),
           save_out=True, uses=(), doc="1 / sqrt(x)")
sin = _u("sin", rule_float, "float", lambda g, out, x: (g * x.cos(),), doc="sine")
cos = _u("cos", rule_float, "float", lambda g, out, x: (-g * x.sin(),), doc="cosine")
tan = _u("tan", rule_float, "float", lambda g, out, x: (g * (out * out + 1),), save_out=True,
         uses=(), doc="tangent")
asin = _u("asin", rule_float, "float", lambda g, out, x: (g * ((1 - x) * (x + 1)).rsqrt(),),
         doc="arcsine, in [-pi/2, pi/2]")
acos = _u("acos", rule_float, "float", lambda g, out, x: (-g * ((1 - x) * (x + 1)).rsqrt(),),
         doc="arccosine, in [0, pi]")
atan = _u("atan", rule_float, "float", lambda g, out, x: (g / (x * x + 1),),
         doc="arctangent, in (-pi/2, pi/2)")
asinh = _u("asinh", rule_float, "float", lambda g, out, x: (g * (x * x + 1).rsqrt(),),
          doc="inverse hyperbolic sine")
acosh = _u("acosh", rule_float, "float", lambda g, out, x: (g * ((x - 1) * (x + 1)).rsqrt(),),
          doc="inverse hyperbolic cosine (x >= 1)")
atanh = _u("atanh", rule_float, "float", lambda g, out, x: (g / ((1 - x) * (x + 1)),),
          doc="inverse hyperbolic tangent (|x| <= 1)")
tanh = _u("tanh", rule_float, "float", save_out=True, uses=(), doc="hyperbolic tangent",
          vjp=lambda g, out, x: (run(tanh_backward_op, g, out),))
sigmoid = _u("sigmoid", rule_float, "float", save_out=True, uses=(), doc="1 / (1 + exp(-x))",
             vjp=lambda g, out, x: (run(sigmoid_backward_op, g, out),))
erf = _u("erf", rule_float, "float", lambda g, out, x: (g * (-(x * x)).exp() * _2_SQRT_PI,),
         doc="the error function")
floor = _u("floor", rule_same, "same_nobool", _zero, doc="largest integer <= x")
ceil = _u("ceil", rule_same, "same_nobool", _zero, doc="smallest integer >= x")
# torch.round takes decimals=: ember.round and Tensor.round are functional.elementwise.round
round = _u("round", rule_same, "same_nobool", _zero, doc="nearest integer, halves to even",
           public=False)
reciprocal = _u("reciprocal", rule_float, "float", lambda g, out, x: (-g * out * out,),
                save_out=True, uses=(), doc="1 / x")
logical_not = _u("logical_not", rule_bool, "bool", doc="not x (nonzero is true)")
isnan = _u("isnan", rule_bool, "bool", doc="x is nan")
isinf = _u("isinf", rule_bool, "bool", doc="x is +inf or -inf")
isfinite = _u("isfinite", rule_bool, "bool", doc="x is neither nan nor infinite")


def _relu_decompose(x):
    # x <= 0 is false for nan: nan stays nan, as in PyTorch (x > 0 would make it 0)
    return where(x <= 0, 0.0 if x._dtype.category == D.FLOAT else 0, x)


def _check_relu(inputs, attrs):
    if inputs[0]._dtype is D.bool_:
        raise EmberTypeError("relu: bool tensors are not supported; cast to a number dtype")


relu_backward_op = _grad_kernel("relu_backward", "relu", "g, out",
                                "0 where out <= 0, else g (a nan output passes g, as torch)",
                                lambda g, out: where(out <= 0, 0.0, g))
# relu is a composite (where(x > 0, x, 0)) that backends may run as one kernel
relu_op = declare("relu", "composite", rule_same, sig="x", doc="max(x, 0)",
                  fast="same_nobool", save_out=True, uses=(), check=_check_relu,
                  decompose=_relu_decompose, shape=shape_first,
                  vjp=lambda g, out, x: (run(relu_backward_op, g, out),))


def relu(x: Tensor) -> Tensor:
    """max(x, 0) elementwise.

    PyTorch
    -------
    ``torch.relu``
    """
    _need_tensor("relu", x)
    return _unary(relu_op, x)


def _binary_fn(op):
    # torch's names: torch.mul(input=x, other=y), x.pow(exponent=2)
    if op.name == "pow":
        def f(input, exponent):
            if type(input) is not Tensor:
                return _binary_scalar_first(op, input, exponent)
            return _binary(op, input, exponent)
    else:
        def f(input, other):
            if type(input) is not Tensor:
                return _binary_scalar_first(op, input, other)
            return _binary(op, input, other)
    second = "exponent" if op.name == "pow" else "other"
    f.__name__ = f.__qualname__ = op.name
    f.__doc__ = generated(f"{op.doc}, elementwise.",
                          f"torch.{op.name}",
                          params=f"input, {second} : Tensor or number\n    Broadcast together; "
                                 "at least one is a Tensor.", returns="Tensor")
    return f


def _binary_scalar_first(op, x, y):
    if type(y) is not Tensor:
        raise EmberTypeError(f"{op.name}(): expected at least one Tensor, got "
                             f"{type(x).__name__} and {type(y).__name__}")
    return run(op, x, y)


def _check_broadcast(inputs, attrs, name=None):
    if len(inputs) == 2:                       # the common case, without building lists
        a, b = inputs
        if type(a) is not Tensor or type(b) is not Tensor or a._data.shape == b._data.shape:
            return
    shapes = [x._data.shape for x in inputs if type(x) is Tensor]
    if len(shapes) > 1 and any(s != shapes[0] for s in shapes):
        broadcast_shapes(name, *shapes)


def _bcheck(name):
    return lambda inputs, attrs: _check_broadcast(inputs, attrs, name)


def _pow_vjp(g, out, x, y):
    gx = g * y * x ** (y - 1) if type(x) is Tensor else None
    gy = None
    if type(y) is Tensor and y.requires_grad:
        # (0 ** y for y with a non-negative real part: a zero gradient, as torch)
        safe = (x == 0).logical_and((y.real if y._dtype.category == D.COMPLEX else y) >= 0) \
            if type(x) is Tensor else None
        base = x.log() if type(x) is Tensor else math.log(x) if x > 0 else float("nan")
        gy = g * out * base
        if safe is not None:
            gy = where(safe, 0.0, gy)
    return gx, gy


def _extreme_vjp(pick):
    # ties split the gradient in half, as PyTorch's maximum/minimum
    def vjp(g, out, x, y):
        if type(x) is not Tensor:
            return None, where(pick(y, x), g, where(y == x, g * 0.5, 0.0))
        win = pick(x, y)
        tie = x == y
        gx = where(win, g, where(tie, g * 0.5, 0.0))
        return gx, g - gx
    return vjp


BINARY = {}
_SCALARS = "x: array|scalar, y: array|scalar"


def _is_bool(x) -> bool:
    return (x._dtype is D.bool_) if type(x) is Tensor else type(x) is bool


def _check_sub(inputs, attrs):
    """torch refuses subtraction with a bool operand (tensor or Python bool): x - mask is
    almost always a mask inverted the wrong way."""
    if _is_bool(inputs[0]) or _is_bool(inputs[1]):
        both = _is_bool(inputs[0]) and _is_bool(inputs[1])
        raise EmberTypeError(
            "sub: subtraction (the `-` operator) with " +
            ("two bool tensors is not supported (as in torch); use a ^ b or "
             "logical_xor() instead" if both else
             "a bool tensor is not supported (as in torch); to invert a mask use ~mask or "
             "mask.logical_not(), or convert it first (mask.int(), mask.float())"))
    _check_broadcast(inputs, attrs, "sub")


def _no_bool(name, tensors_only=False):
    """remainder, floor_divide and pow have no bool kernel in torch ('not implemented for
    Bool'): all-bool operands are refused rather than answered in bool (pow only with two
    bool tensors: torch's pow(Tensor, Scalar) takes a bool exponent)."""
    def check(inputs, attrs):
        if all(_is_bool(x) and (type(x) is Tensor or not tensors_only) for x in inputs):
            raise EmberTypeError(
                f"{name}: not implemented for bool operands (as in torch); convert them "
                f"first, e.g. x.int()")
        _check_broadcast(inputs, attrs, name)
    return check


def _b(name, rule, fast, vjp=None, *, doc, save_out=False, uses=None, operator=None,
       check=None):
    op = declare(name, "binary", rule, sig=_SCALARS, doc=doc, fast=fast, vjp=vjp,
                 save_out=save_out, check=check or _bcheck(name), uses=uses,
                 shape=shape_broadcast,
                 operator=operator, inplace=rule is not rule_bool)
    BINARY[name] = fn = _binary_fn(op)
    return fn


def _inplace_kernel(name, serves):
    """x op= y in one pass (no temporary): what optimizer steps use when no graph is
    recorded; without it the out-of-place op runs and its result is written back."""
    return declare(name, "inplace", rule_same, sig=_SCALARS, serves=serves,
                   doc=f"x = {serves}(x, y) written into x (y broadcasts to x's shape)")


add = _b("add", rule_same, "same", lambda g, out, x, y: (g, g), uses=(), operator="add",
         doc="x + y")
sub = _b("sub", rule_same, "same_nobool", lambda g, out, x, y: (g, -g), uses=(), operator="sub",
         doc="x - y", check=_check_sub)
def _other_needs_grad(inputs) -> tuple:
    """mul reads x only for y's gradient and y only for x's."""
    x, y = inputs
    return tuple(i for i, other in ((0, y), (1, x))
                 if type(other) is Tensor and other.requires_grad)


mul = _b("mul", rule_same, "same", lambda g, out, x, y: (g * y, g * x), operator="mul", doc="x * y",
         uses=_other_needs_grad)
div = _b("div", rule_float, "float", lambda g, out, x, y: (g / y, -g * out / y), save_out=True,
         operator="truediv", doc="x / y (true division)", uses=(1,))
pow = _b("pow", rule_same, "same_nobool", _pow_vjp, save_out=True, operator="pow", doc="x ** y",
         check=_no_bool("pow", tensors_only=True))
maximum = _b("maximum", rule_same, "same", _extreme_vjp(lambda a, b: a > b),
             doc="the larger of x and y (nan if either is nan)")
minimum = _b("minimum", rule_same, "same", _extreme_vjp(lambda a, b: a < b),
             doc="the smaller of x and y (nan if either is nan)")
remainder = _b("remainder", rule_same, "same_nobool",
               lambda g, out, x, y: (g, -g * BINARY["floor_divide"](x, y)), operator="mod",
               doc="x - floor(x / y) * y (the sign of y, as Python's %)",
               check=_no_bool("remainder"))
# a step function: in the graph with a zero gradient, as torch's (div(rounding_mode="floor"))
floor_divide = _b("floor_divide", rule_same, "same_nobool", lambda g, out, x, y: (g * 0, g * 0),
                  operator="floordiv", doc="floor(x / y)", uses=(), check=_no_bool("floor_divide"))
eq = _b("eq", rule_bool, "bool", operator="eq", doc="x == y")
ne = _b("ne", rule_bool, "bool", operator="ne", doc="x != y")
lt = _b("lt", rule_bool, "bool", operator="lt", doc="x < y")
le = _b("le", rule_bool, "bool", operator="le", doc="x <= y")
gt = _b("gt", rule_bool, "bool", operator="gt", doc="x > y")
ge = _b("ge", rule_bool, "bool", operator="ge", doc="x >= y")
logical_and = _b("logical_and", rule_bool, "bool", doc="x and y (nonzero is true)")
logical_or = _b("logical_or", rule_bool, "bool", doc="x or y (nonzero is true)")
logical_xor = _b("logical_xor", rule_bool, "bool", doc="x xor y (nonzero is true)")
add_inplace_op = _inplace_kernel("add_", "add")
sub_inplace_op = _inplace_kernel("sub_", "sub")
mul_inplace_op = _inplace_kernel("mul_", "mul")
div_inplace_op = _inplace_kernel("div_", "div")


def _where_check(inputs, attrs):
    cond = inputs[0]
    if type(cond) is not Tensor or cond._dtype is not D.bool_:
        got = cond._dtype.name if type(cond) is Tensor else type(cond).__name__
        raise EmberTypeError(f"where: expected a bool condition tensor, got {got}; "
                             "compare first, e.g. where(x > 0, x, y)")
    _check_broadcast(inputs, attrs, "where")


where_op = declare("where", "ternary", rule_same, promote=(1, 2), check=_where_check,
                   sig="condition, x: array|scalar, y: array|scalar", shape=shape_broadcast,
                   doc="x where condition holds, else y (condition is bool)",
                   vjp=lambda g, out, c, x, y: (None, lambda: where(c, g, 0.0),
                                                lambda: where(c, 0.0, g)),
                   uses=(0,))


_NOTHING = object()
_nonzero = None          # ops/index.py hands it down: where(condition) alone is nonzero


def use_nonzero(fn) -> None:
    global _nonzero
    _nonzero = fn


def where(condition, input=_NOTHING, other=_NOTHING):
    """Elements of input where condition holds, else of other (broadcast); where(condition)
    alone is nonzero(condition, as_tuple=True), as in PyTorch.

    PyTorch
    -------
    ``torch.where``
    """
    if input is _NOTHING and other is _NOTHING:
        return _nonzero(condition, as_tuple=True)
    if type(input) is not Tensor and type(other) is not Tensor and type(condition) is Tensor:
        # two numbers: the result dtype is theirs (a float gives the default float)
        input = full((), input, dtype=D.result_type(input, other), device=condition._device)
    return run(where_op, condition, input, other)


cast_op = declare("cast", "unary", rule_attr, sig="x, *, dtype: dtype", shape=shape_first,
                  doc="x converted to dtype (float to int truncates toward zero)",
                  vjp=lambda g, out, x, *, dtype: (g,), uses=())
use_cast(cast_op)                 # dispatch casts promoted inputs with it


def cast(x: Tensor, dtype) -> Tensor:
    """``x`` converted to ``dtype`` (``x`` itself when it has that dtype already).

    PyTorch
    -------
    None as a function: PyTorch writes ``x.to(dtype)`` (``torch.Tensor.to``).
    """
    dtype = D.get_dtype(dtype)
    if x._dtype is dtype:
        return x
    return run(cast_op, x, dtype=dtype)


# --- nextafter: the neighbouring float, in the input dtype's own steps --------------------
# (significand bits, the smallest subnormal, the largest finite value) per float dtype
_STEPS = {D.float16: (11, 2.0 ** -24, 65504.0), D.bfloat16: (8, 2.0 ** -133, 3.3895313892515355e38),
          D.float32: (24, 2.0 ** -149, 3.4028234663852886e38),
          D.float64: (53, 2.0 ** -1074, 1.7976931348623157e308)}


def _nextafter_forward(x: Tensor, y: Tensor) -> Tensor:
    """x + the spacing of x's dtype at x toward y (half of it going down from a power of
    two), by exponent arithmetic: every backend has it, no bit casts needed.  Narrower
    floats compute in float64 where the device has it (their steps are exact there)."""
    dtype = x._dtype
    bits, tiny, big = _STEPS[dtype]
    device = x._device
    wide = dtype is not D.float64 and (device.type == "cpu" or "float64" in
                                       device.backend.capabilities(device.index).dtypes)
    if wide:
        x, y = cast(x, D.float64), cast(y, D.float64)
    a = UNARY["abs"](x)
    regular = UNARY["isfinite"](x).logical_and(a > 0)
    a = where(regular, a, 1.0)
    e = UNARY["floor"](UNARY["log"](a) * (1.0 / math.log(2.0))) + 1.0
    for _ in range(2):      # log's rounding: bring a into [2^(e-1), 2^e)
        low = BINARY["pow"](2.0, e - 1.0)
        e = where(a < low, e - 1.0, where(a >= low * 2.0, e + 1.0, e))
    low = BINARY["pow"](2.0, e - 1.0)
    spacing = BINARY["maximum"](BINARY["pow"](2.0, e - float(bits)), tiny)
    below = BINARY["maximum"](BINARY["pow"](2.0, e - float(bits + 1)), tiny)
    up = y > x
    step = where(up == (x > 0), spacing, where(a == low, below, spacing))
    out = where(up, x + step, x - step)
    # (0 * x + tiny: where of two numbers would compute in the default float32)
    out = where(out == 0, x * 0.0, out)         # -tiny up to -0.0, as torch's
    out = where(x == 0, where(up, a * 0.0 + tiny, a * 0.0 - tiny), out)
    out = where(x == math.inf, big, where(x == -math.inf, -big, out))
    out = where(x == y, y, out)
    out = where(UNARY["isnan"](x).logical_or(UNARY["isnan"](y)), math.nan, out)
    return cast(out, dtype) if wide else out


nextafter_op = declare("nextafter", "composite", rule_same, sig="x, y", promote=(0, 1),
                       shape=shape_broadcast, doc="the next float after x toward y",
                       decompose=_nextafter_forward, opaque=True, uses=(0, 1),
                       # torch's: no gradient where x == y (the answer is y there), and none
                       # for y anywhere
                       vjp=lambda g, out, x, y: (where(x == y, 0.0, g), g * 0))


def _clamp_decompose(x, *, lo, hi):
    if lo is not None:
        x = where(lt(x, lo), lo, x)
    if hi is not None:
        x = where(gt(x, hi), hi, x)
    return x


def _clamp_vjp(g, out, x, *, lo, hi):
    # torch's clamp_backward: the gradient passes where lo <= x <= hi (not at nan)
    keep = ge(x, lo) if lo is not None else None
    if hi is not None:
        keep = le(x, hi) if keep is None else logical_and(keep, le(x, hi))
    return (where(keep, g, 0.0),)


# clamp of a float32/float64 tensor to finite Python numbers (nn/functional's clamp takes
# this op there, its where() form elsewhere): one kernel where a backend has it (the CPU's
# np.clip), else the where() form, computing the value only (opaque: the gradient is always
# torch's, which the where() form's own would differ from at nan)
clamp_op = declare("clamp", "composite", rule_first, sig="x, *, lo: float?, hi: float?",
                   shape=shape_first, decompose=_clamp_decompose, vjp=_clamp_vjp, opaque=True,
                   public=False, doc="x limited to [lo, hi] (either may be None; lo > hi gives "
                   "hi; nan stays nan)")


# torch's other names for the same functions
subtract, multiply, divide, true_divide = sub, mul, div, div
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne

# the public functions: one per public declaration (ember.exp, ember.add, ...), where, cast,
# relu and the aliases; derived from the declarations, never listed by hand
# (add, sub and div with torch's alpha= and rounding_mode= are ember.functional's, over
# these primitives)
# (comparisons, maximum, minimum and the logical ops are ember.functional's too: torch's
# functions refuse a Python number where these primitives, used inside ember, take one)
__all__ = ["where", "cast", "relu", "multiply",
           *(name for name, fn in (*UNARY.items(), *BINARY.items()) if REGISTRY[name].public
             and name not in ("add", "sub", "div", "eq", "ne", "lt", "le", "gt", "ge",
                              "maximum", "minimum", "logical_and", "logical_or",
                              "logical_xor"))]
