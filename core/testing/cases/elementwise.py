"""The conformance table: one row per op case, checked against NumPy on every device.

A case names an ember function, its NumPy reference and its inputs.  Input kinds:
'f' float (the dtype under test, standard normal), 'p' positive float, 'u' float in
(-0.9, 0.9), 's' special float values (NaN, +-inf, +-0, halves, tiny), 'i' int in
[-5, 5), 'n' int in [1, 5), 'z' non-zero int of either sign, 'e' int exponent in [0, 4),
'b' bool, 'ix<n>' int64 index in [0, n).  Unsigned dtypes take absolute values.  Each row
also runs on strided, transposed, negative-step, offset and expanded views of its inputs
(`layouts=False` opts out), and differentiable rows go through gradcheck and
gradgradcheck.  The composites (nn.functional) have their rows in cases_nn.py.
Third-party backends reuse the table through `pytest --pyargs ember.testing` (see README).
"""
from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Input:
    shape: tuple
    kind: str = "f"
    values: tuple | None = None      # explicit values (edge cases), cast to the dtype


@dataclass(frozen=True)
class OpCase:
    name: str
    fn: Callable                      # fn(ember, *tensors) -> Tensor or tuple of Tensors
    ref: Callable                     # ref(np, *arrays) -> ndarray or tuple
    inputs: tuple
    dtypes: tuple = ("float32", "float64")
    out_dtype: str | tuple | None = None   # None: the dtype under test
    grad: bool = True
    gradgrad: bool = True             # second derivatives too (where grad is checked)
    full_jacobian: bool = False       # gradcheck's full Jacobian (inputs on a kink: ties)
    needs: tuple = ()                 # further dtypes the device must have (casts to them)
    layouts: bool = True
    family: str = "elementwise"
    ops: tuple = ()                   # the ops and declared kernels the row exercises
    ref_float64: bool = True          # False: the reference computes in the dtype under test
    atol: float = 1e-5
    rtol: float = 1e-5


CASES: list[OpCase] = []
FLOATS = ("float32", "float64")
ALL_FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
SPECIAL = (math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, 1.5, 2.5, -2.5, -1.0, 3.0, 1e-30)
_family = ["elementwise"]


def section(family: str) -> None:
    """The op family of the rows that follow (the report groups results by it)."""
    _family[0] = family


def case(name, fn, ref, *inputs, **kw):
    if not _takes_np(ref):
        ref = (lambda r: lambda np_, *arrays: r(*arrays))(ref)
    specs = tuple(i if isinstance(i, Input) else Input(*i) if isinstance(i, tuple) and
                  i and isinstance(i[0], tuple) else Input(i) for i in inputs)
    kw.setdefault("family", _family[0])
    if ":special" in name:
        kw.setdefault("ref_float64", False)
    kw["ops"] = tuple(kw.get("ops", ())) or (name.split(":")[0],)
    CASES.append(OpCase(name, fn, ref, specs, **kw))


def _takes_np(ref) -> bool:
    """References are written either as f(np, *arrays) or as a plain f(*arrays)."""
    try:
        params = list(inspect.signature(ref).parameters)
    except (TypeError, ValueError):         # ufuncs
        return False
    return bool(params) and params[0] == "np"


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _lse(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return (np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m).squeeze(axis)


def _method(name):
    return lambda E, *xs: getattr(xs[0], name)(*xs[1:])


def _function(name):
    return lambda E, *xs: getattr(E, name)(*xs)


S, M = (3, 4), (2, 3, 4)
SPECIAL_IN = Input((len(SPECIAL),), "s")
SPECIAL_ROW, SPECIAL_COL = Input((1, len(SPECIAL)), "s"), Input((len(SPECIAL), 1), "s")

# --- elementwise unary ------------------------------------------------------------------
UNARY_FLOAT = [
    ("neg", np.negative, "f"), ("abs", np.abs, "f"), ("exp", np.exp, "f"),
    ("log", np.log, "p"), ("log1p", np.log1p, "p"), ("expm1", np.expm1, "f"),
    ("sqrt", np.sqrt, "p"), ("rsqrt", lambda x: 1 / np.sqrt(x), "p"),
    ("sin", np.sin, "f"), ("cos", np.cos, "f"), ("tan", np.tan, "u"), ("tanh", np.tanh, "f"),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), "f"), ("erf", _erf, "f"),
    ("reciprocal", lambda x: 1 / x, "p")]
for _name, _ref, _kind in UNARY_FLOAT:
    case(_name, _method(_name), _ref, Input(M, _kind), dtypes=ALL_FLOATS)
    # NaN, infinities, signed zeros and tiny values through every float op
    case(_name + ":special", _function(_name), _ref, SPECIAL_IN, grad=False, layouts=False)
for _name, _ref in [("sign", np.sign), ("floor", np.floor), ("ceil", np.ceil),
                    ("round", np.round)]:
    case(_name, _method(_name), _ref, Input(M, "f"), grad=False, dtypes=ALL_FLOATS)
    case(_name + ":special", _function(_name), _ref, SPECIAL_IN, grad=False, layouts=False)
    case(_name + ":int", _function(_name), _ref, Input(S, "i"), dtypes=INTS, grad=False)
    # on bool these are identities, as in PyTorch (NumPy has no bool sign/floor/...)
    case(_name + ":bool", _function(_name), lambda x: x, Input(S, "b"), dtypes=("bool",),
         grad=False)
case("round:halves", lambda E, x: x.round(), np.round,
     Input((8,), "f", (0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 1e30)), grad=False)
case("abs:int", lambda E, x: x.abs(), np.abs, Input(S, "i"), dtypes=INTS, grad=False)
case("neg:int", lambda E, x: -x, np.negative, Input(S, "i"), dtypes=INTS, grad=False)
case("exp:of_int", lambda E, x: x.exp(), lambda x: np.exp(x.astype(np.float64)), Input(S, "i"),
     dtypes=("int64", "uint8"), grad=False, out_dtype="float32")
case("sqrt:of_bool", lambda E, x: x.sqrt(), lambda x: np.sqrt(x.astype(np.float64)),
     Input(S, "b"), dtypes=("bool",), grad=False, out_dtype="float32")
case("logical_not", lambda E, x: (~x, E.logical_not(x)), lambda np, x: (~x, ~x),
     Input(S, "b"), dtypes=("bool",), grad=False)
case("logical_not:numbers", lambda E, x: E.logical_not(x), np.logical_not, Input(S, "i"),
     dtypes=("int64", "uint8", "float32"), grad=False, out_dtype="bool")
for _name in ("isnan", "isinf", "isfinite"):
    case(_name, _method(_name), getattr(np, _name), SPECIAL_IN, grad=False, out_dtype="bool",
         dtypes=ALL_FLOATS, layouts=False)
    case(_name + ":int", _method(_name), getattr(np, _name), Input(S, "i"),
         dtypes=("int64", "uint8", "bool"), grad=False, out_dtype="bool")
case("sigmoid:extremes", lambda E, x: x.sigmoid(), lambda np, x: 1 / (1 + np.exp(-x)),
     Input((4,), "f", (-100.0, -20.0, 20.0, 100.0)), grad=False)

# --- elementwise binary, broadcasting, scalars -------------------------------------------
BINARY = [("add", np.add, "f"), ("sub", np.subtract, "f"), ("mul", np.multiply, "f"),
          ("div", np.divide, "p"), ("pow", np.power, "f"), ("maximum", np.maximum, "f"),
          ("minimum", np.minimum, "f")]
for _name, _ref, _k in BINARY:
    _fn = _function(_name)
    _x = "p" if _name == "pow" else "f"
    case(_name, _fn, _ref, Input(M, _x), Input(M, _k), dtypes=ALL_FLOATS)
    case(_name + ":broadcast", _fn, _ref, Input((2, 1, 4), _x), Input((3, 1), _k))
for _name, _ref in [(n, r) for n, r, _ in BINARY] + [("remainder", np.remainder),
                                                     ("floor_divide", np.floor_divide)]:
    case(_name + ":special", _function(_name), _ref, SPECIAL_COL, SPECIAL_ROW, grad=False,
         layouts=False, ops=(_name,))
case("remainder", lambda E, x, y: x % y, np.remainder, Input(S, "f"), Input(S, "p"),
     grad=False, dtypes=ALL_FLOATS)
case("floor_divide", lambda E, x, y: x // y, np.floor_divide, Input(S, "f"), Input(S, "p"),
     grad=False, dtypes=ALL_FLOATS)
for _name, _ref, _k in [("add", np.add, "i"), ("sub", np.subtract, "i"),
                        ("mul", np.multiply, "i"), ("maximum", np.maximum, "i"),
                        ("minimum", np.minimum, "i"), ("remainder", np.remainder, "z"),
                        ("floor_divide", np.floor_divide, "z"), ("pow", np.power, "e")]:
    case(_name + ":int", _function(_name), _ref, Input(S, "i"), Input(S, _k), dtypes=INTS,
         grad=False)
case("floor_divide:int_signs", lambda E, x, y: (x // y, x % y),
     lambda np, x, y: (np.floor_divide(x, y), np.remainder(x, y)),
     Input((8,), "i", (7, -7, 7, -7, 0, 5, -9, 9)), Input((8,), "i", (2, 2, -2, -2, 3, 1, 4, -4)),
     dtypes=("int8", "int32", "int64"), grad=False)
case("add:int_scalars", lambda E, x: (x + 3, 2 * x - 1, x // 2, x % 3, x ** 2, 7 - x),
     lambda np, x: (x + 3, 2 * x - 1, x // 2, x % 3, x ** 2, 7 - x), Input(S, "n"),
     dtypes=INTS, grad=False)
case("add:bool", lambda E, x, y: (x + y, x * y, E.maximum(x, y), E.minimum(x, y)),
     lambda np, x, y: (x | y, x & y, x | y, x & y), Input(S, "b"), Input(S, "b"),
     dtypes=("bool",), grad=False)
case("add:bool_int", lambda E, x: (x + 1, x * 3), lambda np, x: (x + 1, x * 3),
     Input(S, "b"), dtypes=("bool",), grad=False, out_dtype="int64")
case("add:promote", lambda E, x, y: (x + y.to(E.int32), x.to(E.float64) * y.float()),
     lambda np, x, y: (x + y, x * y), Input(S, "i"), Input(S, "i"), dtypes=("int8",),
     grad=False, out_dtype=("int32", "float64"), ops=("add", "mul", "cast"))
case("div:int_is_float", lambda E, x, y: x / (y.abs() + 1), lambda np, x, y: x / (abs(y) + 1),
     Input(S, "i"), Input(S, "i"), dtypes=("int64", "int32", "uint8"), grad=False,
     out_dtype="float32", ops=("div",))
case("mul:scalars", lambda E, x: (2.5 * x - 1) / 3 + 2 ** x, lambda np, x: (2.5 * x - 1) / 3 +
     2 ** x, Input(S, "f"), dtypes=ALL_FLOATS)
case("sub:reflected", lambda E, x: (1 - x, 2 / x, 2 ** x), lambda np, x: (1 - x, 2 / x, 2 ** x),
     Input(S, "p"))
case("mul:int_float_scalar", lambda E, x: (x * 1.5, x + 0.25), lambda np, x: (x * 1.5, x + 0.25),
     Input(S, "i"), dtypes=("int64", "uint8"), grad=False, out_dtype="float32", ops=("mul",))
for _name, _ref in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                    ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    case(_name, _function(_name), _ref, Input(S, "i"), Input((4,), "i"),
         dtypes=("int64", "uint8", "int8", "float32", "bool"), grad=False, out_dtype="bool")
    case(_name + ":special", _function(_name), _ref, SPECIAL_COL, SPECIAL_ROW, grad=False,
         out_dtype="bool", layouts=False, ops=(_name,))
case("gt:scalar", lambda E, x: (x > 0.5, x <= 0, x == 1.0, 0 < x),
     lambda np, x: (x > 0.5, x <= 0, x == 1.0, 0 < x), Input(S, "f"), grad=False,
     out_dtype="bool", ops=("gt", "le", "eq", "lt"))
for _name in ("logical_and", "logical_or", "logical_xor"):
    case(_name, _function(_name), getattr(np, _name), Input(S, "b"), Input(S, "b"),
         dtypes=("bool",), grad=False)
    case(_name + ":numbers", _function(_name), getattr(np, _name), Input(S, "i"),
         Input((4,), "i"), dtypes=("int64", "float32"), grad=False, out_dtype="bool")
case("logical_and:operators", lambda E, x, y: (x & y, x | y, x ^ y),
     lambda np, x, y: (x & y, x | y, x ^ y), Input(S, "b"), Input(S, "b"), dtypes=("bool",),
     grad=False, ops=("logical_and", "logical_or", "logical_xor"))
case("where", lambda E, c, x, y: E.where(c, x, y), lambda np, c, x, y: np.where(c, x, y),
     Input(M, "b"), Input(M), Input((3, 4)))
case("where:scalar", lambda E, c, x: (E.where(c, x, 0.0), E.where(c, -1.5, x)),
     lambda np, c, x: (np.where(c, x, 0.0), np.where(c, -1.5, x)), Input(S, "b"), Input(S))
case("where:int", lambda E, c, x, y: E.where(c, x, y), lambda np, c, x, y: np.where(c, x, y),
     Input((4, 1, 3), "b"), Input((1, 3), "i"), Input((2, 1), "i"), dtypes=INTS, grad=False)
case("where:special", lambda E, c, x: E.where(c, x, 1.0),
     lambda np, c, x: np.where(c, x, 1.0), Input((12,), "b"), SPECIAL_IN, grad=False,
     layouts=False)
case("relu", lambda E, x: (x.relu(), E.relu(x * -1)), lambda np, x: (np.maximum(x, 0),
                                                                     np.maximum(-x, 0)),
     Input(M), dtypes=ALL_FLOATS)
case("relu:special", lambda E, x: E.relu(x),
     lambda np, x: np.where(x > 0, x, np.where(np.isnan(x), x, 0)), SPECIAL_IN, grad=False,
     layouts=False)
case("relu:int", lambda E, x: x.relu(), lambda np, x: np.maximum(x, 0), Input(S, "i"),
     dtypes=("int64", "int32", "uint8"), grad=False)
case("clamp", lambda E, x: (x.clamp(-0.5, 0.5), E.clamp(x, max=0.2)),
     lambda np, x: (np.clip(x, -0.5, 0.5), np.minimum(x, 0.2)), Input(M, "f"),
     dtypes=ALL_FLOATS)
case("clamp:min", lambda E, x: x.clamp(min=0.1), lambda np, x: np.maximum(x, 0.1), Input(M))
case("clamp:tensors", lambda E, x, lo, hi: E.clamp(x, lo, hi + 1),
     lambda np, x, lo, hi: np.minimum(np.maximum(x, lo), hi + 1), Input(M), Input((4,)),
     Input((3, 1)))
case("clamp:special", lambda E, x: x.clamp(-1.0, 1.0), lambda np, x: np.clip(x, -1.0, 1.0),
     SPECIAL_IN, grad=False, layouts=False)
case("cast", lambda E, x: (x.to(E.float64) if x.dtype != E.float64 else x.to(E.float32)),
     lambda np, x: x, Input(S), grad=False, out_dtype="other_float", atol=1e-6)
case("cast:to_int", lambda E, x: ((x * 3).to(E.int32), (x * 3).long(), (x * 20).to(E.int8)),
     lambda np, x: (np.trunc(x * 3), np.trunc(x * 3), np.trunc(x * 20)), Input(S, "u"),
     grad=False, out_dtype=("int32", "int64", "int8"))
case("cast:to_bool", lambda E, x: x.to(E.bool), lambda np, x: x != 0, Input(S, "i"),
     dtypes=INTS + ("float32",), grad=False, out_dtype="bool")
case("cast:from_bool", lambda E, x: (x.to(E.float32), x.long(), x.to(E.uint8)),
     lambda np, x: (x.astype(np.float32), x.astype(np.int64), x.astype(np.uint8)),
     Input(S, "b"), dtypes=("bool",), grad=False, out_dtype=("float32", "int64", "uint8"))
CASTS = ("bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64")
case("cast:pairs", lambda E, x: tuple(x.to(getattr(E, d)) for d in CASTS),
     lambda np, x: tuple(x.astype(d) for d in CASTS), Input(S, "n"), dtypes=CASTS,
     grad=False, out_dtype=CASTS, needs=("float64",))
case("cast:int_wraps", lambda E, x: (x.to(E.int8), x.to(E.uint8)),
     lambda np, x: (x.astype(np.int8), x.astype(np.uint8)),
     Input((6,), "i", (300, -129, 255, 256, -1, 2 ** 40)), dtypes=("int64",), grad=False,
     out_dtype=("int8", "uint8"))
case("cast:half_floats", lambda E, x: (x.half().float(), x.bfloat16().float()),
     lambda np, x: (x.astype(np.float16).astype(np.float32),
                    x.astype(_bf16()).astype(np.float32)),
     Input((7,), "f", (1.00390625, 1.01171875, 3.0e38, 1e5, -2.5, 1e-8, math.nan)),
     dtypes=("float32",), grad=False, out_dtype=("float32", "float32"), atol=0, rtol=0,
     needs=("float16", "bfloat16"))


def _bf16():
    import ml_dtypes
    return ml_dtypes.bfloat16


# --- reductions -------------------------------------------------------------------------
section("reduce")
for _name, _ref in [("sum", np.sum), ("prod", np.prod), ("amax", np.max), ("amin", np.min)]:
    _op = {"amax": "max", "amin": "min"}.get(_name, _name)
    case(_name + ":all", _method(_name), (lambda r: lambda np, x: r(x))(_ref), Input(M),
         dtypes=ALL_FLOATS, ops=(_op,))
    case(_name + ":dim", (lambda n: lambda E, x: getattr(x, n)(1))(_name),
         (lambda r: lambda np, x: r(x, axis=1))(_ref), Input(M), ops=(_op,))
    case(_name + ":dims_keepdim", (lambda n: lambda E, x: getattr(x, n)((0, 2), keepdim=True))(
        _name), (lambda r: lambda np, x: r(x, axis=(0, 2), keepdims=True))(_ref), Input(M),
        ops=(_op,))
    case(_name + ":int", (lambda n: lambda E, x: (getattr(x, n)(0), getattr(x, n)()))(_name),
         (lambda r: lambda np, x: (r(x, axis=0), r(x)))(_ref), Input(S, "i"), dtypes=INTS,
         grad=False, out_dtype=None if _name in ("amax", "amin") else "int64", ops=(_op,))
    case(_name + ":special", (lambda n: lambda E, x: getattr(x, n)(1))(_name),
         (lambda r: lambda np, x: r(x, axis=1))(_ref),
         Input((4, 3), "f", (math.nan, 1.0, 2.0, math.inf, -1.0, 2.0, -math.inf, math.inf,
                             0.0, 1.0, math.nan, -math.inf)), grad=False, ops=(_op,))
case("sum:bool", lambda E, x: (x.sum(), x.sum(0), x.prod(1)),
     lambda np, x: (x.sum(), x.sum(0), x.astype(np.int64).prod(1)), Input(S, "b"),
     dtypes=("bool",), grad=False, out_dtype="int64", ops=("sum", "prod"))
case("amax:bool", lambda E, x: (x.amax(1), x.amin()), lambda np, x: (x.max(1), x.min()),
     Input(S, "b"), dtypes=("bool",), grad=False, ops=("max", "min"))
case("sum:long", lambda E, x: x.sum(), lambda np, x: x.astype(np.float64).sum(),
     Input((1000,), "f"), dtypes=ALL_FLOATS, grad=False, layouts=False, atol=1e-3, rtol=1e-3)
case("sum:empty", lambda E, x: (x.sum(0), x.sum(), x.prod(0), x.amax(1)),
     lambda np, x: (x.sum(0), x.sum(), x.prod(0), x.max(1)), Input((0, 3)), grad=False,
     ops=("sum", "prod", "max"))
case("prod:with_zeros", lambda E, x: x.prod(1), lambda np, x: x.prod(1),
     Input((3, 3), "f", (0.0, 2.0, 3.0, 0.0, 0.0, 1.5, 1.0, 2.0, -1.0)), ops=("prod",))
case("amax:ties", lambda E, x: x.amax(1), lambda np, x: x.max(1),
     Input((2, 3), "f", (1.0, 3.0, 3.0, 2.0, 2.0, 1.0)), ops=("max",), full_jacobian=True,
     gradgrad=False)     # the gradient jumps at a tie: no second derivative there
case("max:dim_values_indices", lambda E, x: tuple(x.max(1)),
     lambda np, x: (x.max(1), x.argmax(1)), Input(M), out_dtype=("same", "int64"),
     ops=("max", "argmax", "gather"))
case("min:dim_keepdim", lambda E, x: x.min(-1, keepdim=True)[0],
     lambda np, x: x.min(-1, keepdims=True), Input(M), ops=("min", "argmin", "gather"))
case("argmax", lambda E, x: (x.argmax(), x.argmax(1), x.argmax(-1, keepdim=True)),
     lambda np, x: (x.argmax(), x.argmax(1), x.argmax(-1)[..., None]), Input(M), grad=False,
     out_dtype="int64")
case("argmin", lambda E, x: (x.argmin(), x.argmin(0)), lambda np, x: (x.argmin(), x.argmin(0)),
     Input(M), grad=False, out_dtype="int64")
case("argmax:int", lambda E, x: (x.argmax(), x.argmin(1)),
     lambda np, x: (x.argmax(), x.argmin(1)), Input(S, "i"), dtypes=("uint8", "int64", "bool"),
     grad=False, out_dtype="int64", ops=("argmax", "argmin"))
case("argmax:special", lambda E, x: (x.argmax(1), x.argmin(1)),
     lambda np, x: (x.argmax(1), x.argmin(1)),
     Input((2, 4), "f", (1.0, math.nan, 3.0, math.nan, math.inf, -math.inf, 2.0, math.inf)),
     grad=False, out_dtype="int64", ops=("argmax", "argmin"))
case("argmax:ties", lambda E, x: (x.argmax(1), x.argmin(1)),
     lambda np, x: (x.argmax(1), x.argmin(1)),
     Input((2, 4), "i", (1, 3, 3, 0, 2, 2, 2, 2)), dtypes=("int64", "float32"), grad=False,
     out_dtype="int64", ops=("argmax", "argmin"))
case("any", lambda E, x: (x.any(), x.all(1), x.any(0, keepdim=True)),
     lambda np, x: (x.any(), x.all(1), x.any(0, keepdims=True)), Input(S, "b"),
     dtypes=("bool",), grad=False, ops=("any", "all"))
case("any:numbers", lambda E, x: (x.any(), x.all(1), E.any(x, 0)),
     lambda np, x: (x.any(), x.all(1), x.any(0)), Input(S, "i"),
     dtypes=("uint8", "int64", "float32"), grad=False, out_dtype="bool", ops=("any", "all"))
case("any:special", lambda E, x: (x.any(1), x.all(1)), lambda np, x: (x.any(1), x.all(1)),
     Input((3, 4), "s"), grad=False, out_dtype="bool", ops=("any", "all"))
case("mean", lambda E, x: (x.mean(), x.mean((0, 1)), x.mean(-1, keepdim=True)),
     lambda np, x: (x.mean(), x.mean((0, 1)), x.mean(-1, keepdims=True)), Input(M),
     dtypes=ALL_FLOATS)
case("var", lambda E, x: (x.var(), x.var(1), x.std(0, keepdim=True), x.var(1, correction=0)),
     lambda np, x: (x.var(ddof=1), x.var(1, ddof=1), x.std(0, ddof=1, keepdims=True),
                    x.var(1)), Input(M), ops=("var", "std"))
case("var_mean", lambda E, x: E.var_mean(x, 1), lambda np, x: (x.var(1, ddof=1), x.mean(1)),
     Input(M))
case("logsumexp", lambda E, x: (x.logsumexp(1), E.logsumexp(x, (0, 2), keepdim=True)),
     lambda np, x: (_lse(x, 1), np.log(np.exp(x).sum((0, 2), keepdims=True))), Input(M))
case("logsumexp:inf", lambda E, x: x.logsumexp(1), lambda np, x: np.logaddexp.reduce(x, 1),
     Input((3, 2), "f", (-np.inf, -np.inf, -np.inf, 0.0, np.inf, 1.0)), grad=False)
case("softmax", lambda E, x: x.softmax(-1), lambda np, x: _softmax(x, -1), Input(M),
     dtypes=ALL_FLOATS)
case("softmax:dim0", lambda E, x: E.softmax(x, 0), lambda np, x: _softmax(x, 0), Input(M))
case("softmax:extremes", lambda E, x: x.softmax(1), lambda np, x: _softmax(x, 1),
     Input((2, 3), "f", (1000.0, 0.0, -1000.0, -np.inf, 0.0, 1.0)), grad=False)
case("log_softmax", lambda E, x: x.log_softmax(1), lambda np, x: np.log(_softmax(x, 1)),
     Input(M), dtypes=ALL_FLOATS)

# --- movement ---------------------------------------------------------------------------
section("movement")
case("reshape", lambda E, x: (x.reshape(4, -1), x.reshape(24)),
     lambda np, x: (x.reshape(4, -1), x.reshape(24)), Input(M), dtypes=FLOATS + ("int64",))
case("reshape:view_flatten", lambda E, x: (x.view(6, 4), x.flatten(), x.flatten(1)),
     lambda np, x: (x.reshape(6, 4), x.reshape(-1), x.reshape(2, 12)), Input(M))
case("reshape:squeeze_unsqueeze", lambda E, x: (x.unsqueeze(1), x.unsqueeze(-1).squeeze(),
                                                x.reshape(1, 2, 1, 12).squeeze(2)),
     lambda np, x: (x[:, None], x, x.reshape(1, 2, 12)), Input(M))
case("permute", lambda E, x: x.permute(2, 0, 1), lambda np, x: x.transpose(2, 0, 1), Input(M),
     dtypes=FLOATS + ("int64", "bool"))
case("permute:transpose_T_mT", lambda E, x: (x.transpose(0, 2), x.mT, x[0].T, E.movedim(x, 0, -1)),
     lambda np, x: (x.transpose(2, 1, 0), x.swapaxes(-1, -2), x[0].T, np.moveaxis(x, 0, -1)),
     Input(M))
case("expand", lambda E, x: (x.expand(2, 3, 4), x.expand(-1, 2) * 1),
     lambda np, x: (np.broadcast_to(x, (2, 3, 4)), np.broadcast_to(x, (3, 2))), Input((3, 1)))
case("contiguous", lambda E, x: (x.mT.contiguous() * 1, x[:, ::-1].contiguous(), x.clone()),
     lambda np, x: (np.ascontiguousarray(x.swapaxes(-1, -2)), x[:, ::-1], x), Input(M))
case("concatenate", lambda E, x, y: (E.cat([x, y, x], 1), E.cat([x, x], 0)),
     lambda np, x, y: (np.concatenate([x, y, x], 1), np.concatenate([x, x], 0)),
     Input((2, 3)), Input((2, 1)), dtypes=FLOATS + ("int64", "bool"))
case("concatenate:empty", lambda E, x, y: E.cat([x, y], 0),
     lambda np, x, y: np.concatenate([x, y], 0), Input((0, 3)), Input((2, 3)))
case("concatenate:promotes", lambda E, x, y: E.cat([x, y.to(E.int32)], 0),
     lambda np, x, y: np.concatenate([x, y]).astype(np.float32), Input((2, 3)),
     Input((1, 3), "i"), dtypes=("float32",), grad=False)
case("concatenate:stack", lambda E, x, y: (E.stack([x, y], -1), E.stack([x, y])),
     lambda np, x, y: (np.stack([x, y], -1), np.stack([x, y])), Input(S), Input(S))
case("slice:split_chunk", lambda E, x: (*x.split(2, 1), *x.chunk(2, 0)),
     lambda np, x: (x[:, :2], x[:, 2:], x[:2], x[2:]), Input((3, 4)))
case("slice:split_sections", lambda E, x: x.split([1, 3], 1),
     lambda np, x: (x[:, :1], x[:, 1:]), Input(S))
case("flip", lambda E, x: (x.flip(0), x.flip((1, 2)), x.flip(-1)),
     lambda np, x: (x[::-1], x[:, ::-1, ::-1], x[..., ::-1]), Input(M),
     dtypes=FLOATS + ("int64", "bool"))
case("pad", lambda E, x: E.pad(x, (1, 2, 0, 1)), lambda np, x: np.pad(x, ((0, 0), (0, 1),
                                                                         (1, 2))), Input(M))
case("pad:value", lambda E, x: E.pad(x, (1, 1), value=-1.0),
     lambda np, x: np.pad(x, ((0, 0), (1, 1)), constant_values=-1.0), Input(S))
case("pad:int", lambda E, x: E.pad(x, (2, 0, 1, 1), value=7),
     lambda np, x: np.pad(x, ((1, 1), (2, 0)), constant_values=7), Input(S, "i"),
     dtypes=("int64", "uint8"), grad=False)
case("slice_scatter", lambda E, x, s: E.slice_scatter(
    x, s, (slice(0, 2), slice(None, None, -2), slice(1, 3))),
     lambda np, x, s: _slice_scatter_ref(x, s), Input(M), Input((2, 2, 2)))


def _slice_scatter_ref(x, s):
    out = x.copy()
    out[0:2, ::-2, 1:3] = s
    return out


# --- indexing ---------------------------------------------------------------------------
section("index")
case("slice", lambda E, x: (x[1], x[:, 1:3], x[..., ::-2], x[None, 0, :, -1],
                            x[1:, ::2, 1], x[:, 2:0:-1], x[::-1, ::-1, ::-1]),
     lambda np, x: (x[1], x[:, 1:3], x[..., ::-2], x[None, 0, :, -1], x[1:, ::2, 1],
                    x[:, 2:0:-1], x[::-1, ::-1, ::-1]), Input(M), dtypes=FLOATS + ("int64",))
case("take:index_tensor", lambda E, x, i: (x[i], x[:, i[:2]], x[[0, 0, 1]]),
     lambda np, x, i: (x[i], x[:, i[:2]], x[[0, 0, 1]]), Input(M), Input((5,), "ix2"),
     ops=("take",))
case("take:negative_index", lambda E, x: (x[[-1, 0, -2]], x[:, -1]),
     lambda np, x: (x[[-1, 0, -2]], x[:, -1]), Input(S), ops=("take", "slice"))
case("take:mask", lambda E, x: (x[x > 0], x[(x > 0).any(-1)]),
     lambda np, x: (x[x > 0], x[(x > 0).any(-1)]), Input(M), ops=("take", "nonzero"))
case("take:mixed", lambda E, x, i: x[i, 1:, i], lambda np, x, i: x[i, 1:, i],
     Input((3, 3, 3)), Input((2,), "ix3"), ops=("take",))
case("index_put", lambda E, x: _setitem_case(x), lambda np, x: _setitem_case(x.copy(), False),
     Input(M), ops=("index_put", "assign", "slice_scatter"))
case("index_put:int", lambda E, x: _setitem_int(x), lambda np, x: _setitem_int(x.copy(), False),
     Input(S, "i"), dtypes=("int64", "uint8"), grad=False, ops=("index_put", "assign"))
case("gather", lambda E, x, i: (
    E.index_select(x, 1, i), E.gather(x, 1, i.reshape(1, 5).expand(3, 5)), E.take(x, i),
    x.gather(1, i.reshape(1, 5).expand(3, 5)), x[i[:3]]),
     lambda np, x, i: (np.take(x, i, 1), np.take_along_axis(
         x, np.broadcast_to(i.reshape(1, 5), (3, 5)), 1), x.reshape(-1)[i], np.take_along_axis(
         x, np.broadcast_to(i.reshape(1, 5), (3, 5)), 1), x[i[:3]]),
     Input((3, 4)), Input((5,), "ix3"), ops=("gather", "take"))
case("index_add", lambda E, x, i, s: E.index_add(x, 0, i, s),
     lambda np, x, i, s: _index_add_ref(x, i, s), Input((3, 2)), Input((4,), "i",
                                                                       (0, 2, 0, 0)),
     Input((4, 2)))
case("index_add:int", lambda E, x, i, s: E.index_add(x, 1, i, s),
     lambda np, x, i, s: _index_add_ref(x.swapaxes(0, 1), i, s.swapaxes(0, 1)).swapaxes(0, 1),
     Input((2, 3), "i"), Input((4,), "i", (2, 2, 0, 2)), Input((2, 4), "i"),
     dtypes=("int64", "int32"), grad=False)
case("scatter_add", lambda E, x, i, s: E.scatter_add(x, 1, i, s),
     lambda np, x, i, s: _scatter_add_ref(x, i, s), Input((2, 3)),
     Input((2, 4), "i", (0, 0, 2, 0, 1, 1, 1, 2)), Input((2, 4)))
case("scatter_add:int", lambda E, x, i, s: E.scatter_add(x, 0, i, s),
     lambda np, x, i, s: _scatter_add_ref(x.T, i.T, s.T).T, Input((3, 2), "i"),
     Input((4, 2), "i", (0, 2, 0, 0, 2, 1, 0, 0)), Input((4, 2), "i"),
     dtypes=("int64", "int32"), grad=False, ops=("scatter_add",))
case("nonzero", lambda E, x: (E.nonzero(x), E.argwhere(x)),
     lambda np, x: (np.argwhere(x), np.argwhere(x)), Input(M, "b"),
     dtypes=("bool", "int64", "float32"), grad=False, out_dtype="int64")
case("nonzero:empty", lambda E, x: (E.nonzero(x), E.nonzero(x[:0])),
     lambda np, x: (np.argwhere(x), np.argwhere(x[:0])), Input(S, "b", (False,) * 12),
     dtypes=("bool",), grad=False, out_dtype="int64", layouts=False)
case("masked_fill", lambda E, x, m: (x.masked_fill(m, 0.5), E.masked_fill(x, m, -1.0)),
     lambda np, x, m: (np.where(m, 0.5, x), np.where(m, -1.0, x)), Input(M), Input((3, 4), "b"),
     ops=("masked_fill", "where"))
case("masked_fill:int", lambda E, x, m: x.masked_fill(m, 3),
     lambda np, x, m: np.where(m, 3, x).astype(x.dtype), Input(S, "i"), Input(S, "b"),
     dtypes=("int64", "uint8"), grad=False, ops=("masked_fill",))


def _setitem_case(x, ember=True):
    y = x * 1 if ember else x
    y[0] = 0.0
    y[1, :, 1] = y[1, :, 2] * 2
    y[y > 1.0] = 1.0
    y[:, ::-1, 0] = y[:, :, 3] + 1
    y[[1, 0], 2] = -2.0
    return y


def _setitem_int(x, ember=True):
    y = x + 0 if ember else x
    y[0] = 4
    y[:, ::-2] = y[:, 1::2] + 1
    y[y > 3] = 2
    return y


def _index_add_ref(x, i, s):
    out = x.copy()
    np.add.at(out, i, s)
    return out


def _scatter_add_ref(x, i, s):
    out = x.copy()
    for r in range(i.shape[0]):
        for c in range(i.shape[1]):
            out[r, i[r, c]] += s[r, c]
    return out


# --- creation -----------------------------------------------------------------------------
section("creation")
case("full", lambda E, x: (E.full((2, 3), 1.5, device=x.device), E.zeros(0, 3, device=x.device),
                           E.ones(2, dtype=E.int64, device=x.device), E.full_like(x, 7),
                           E.full((), -2.0, device=x.device)),
     lambda np, x: (np.full((2, 3), 1.5), np.zeros((0, 3)), np.ones(2, np.int64),
                    np.full_like(x, 7), np.array(-2.0)),
     Input(S), dtypes=("float32",), grad=False, layouts=False,
     out_dtype=("float32", "float32", "int64", "float32", "float32"))
case("full:dtypes", lambda E, x: tuple(E.full((2,), 1, dtype=d, device=x.device) for d in (
    E.bool, E.uint8, E.int8, E.int16, E.int32, E.int64, E.float32)),
     lambda np, x: tuple(np.full((2,), 1, dtype=d) for d in (
         np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float32)),
     Input(S), dtypes=("float32",), grad=False, layouts=False,
     out_dtype=("bool", "uint8", "int8", "int16", "int32", "int64", "float32"))
case("full:half_floats", lambda E, x: E.full((3,), 1.1, dtype=x.dtype, device=x.device),
     lambda np, x: np.full((3,), 1.1).astype(x.dtype), Input(S), dtypes=ALL_FLOATS,
     grad=False, layouts=False)
case("arange", lambda E, x: (E.arange(10, device=x.device), E.arange(2, 11, 3, device=x.device),
                             E.arange(0.5, 3.0, 0.25, device=x.device),
                             E.arange(5, 1, -1, device=x.device), E.arange(0, device=x.device),
                             E.arange(3, dtype=E.float64, device=x.device)),
     lambda np, x: (np.arange(10), np.arange(2, 11, 3), np.arange(0.5, 3.0, 0.25, dtype=np.float32),
                    np.arange(5, 1, -1), np.arange(0), np.arange(3.0)),
     Input(S), dtypes=("float64",), grad=False, layouts=False,
     out_dtype=("int64", "int64", "float32", "int64", "int64", "float64"))
case("tensor", lambda E, x: (E.tensor([[1, 2], [3, 4]], device=x.device),
                             E.tensor([1.5, -2.0], device=x.device),
                             E.tensor([True, False], device=x.device),
                             E.tensor(x.numpy(), device=x.device), E.tensor(3, device=x.device)),
     lambda np, x: (np.array([[1, 2], [3, 4]]), np.array([1.5, -2.0], np.float32),
                    np.array([True, False]), x, np.array(3)),
     Input(S), dtypes=("float32",), grad=False, layouts=False,
     out_dtype=("int64", "float32", "bool", "float32", "int64"), ops=("full",))

# --- linalg, conv building blocks --------------------------------------------------------
section("linalg")
case("matmul", lambda E, x, y: x @ y, np.matmul, Input((3, 4)), Input((4, 5)),
     dtypes=ALL_FLOATS)
case("matmul:batched_broadcast", lambda E, x, y: x @ y, np.matmul, Input((2, 1, 3, 4)),
     Input((3, 4, 2)))
case("matmul:vector", lambda E, x, y, v: (x @ v, v @ y, v @ v), lambda np, x, y, v: (
    x @ v, v @ y, v @ v), Input((3, 4)), Input((4, 2)), Input((4,)))
case("matmul:int", lambda E, x, y: x @ y, np.matmul, Input((2, 3), "i"), Input((3, 2), "i"),
     dtypes=("int64", "int32"), grad=False)
case("matmul:empty", lambda E, x, y: (x @ y, y.mT @ x.mT),
     lambda np, x, y: (x @ y, y.T @ x.T), Input((2, 0)), Input((0, 3)), grad=False)
case("matmul:long", lambda E, x, y: x @ y, lambda np, x, y: x @ y, Input((2, 300)),
     Input((300, 3)), dtypes=ALL_FLOATS, grad=False, layouts=False, atol=1e-4, rtol=1e-4)
case("matmul:special", lambda E, x, y: x @ y, np.matmul, Input((2, 2), "f",
                                                             (math.nan, 1.0, math.inf, 0.0)),
     Input((2, 2), "f", (1.0, 2.0, 0.0, 1.0)), grad=False, layouts=False)

# --- edge shapes --------------------------------------------------------------------------
section("shapes")
case("add:zero_dim", lambda E, x, y: (x + y, (x * y).exp(), x.reshape(1), x.sum(), x[None],
                                      x.flip(0), x.softmax(0), E.maximum(x, 0.5)),
     lambda np, x, y: (x + y, np.exp(x * y), x.reshape(1), x, x[None], x, np.ones_like(x),
                       np.maximum(x, 0.5)), Input(()), Input(()),
     ops=("add", "mul", "exp", "reshape", "sum", "flip", "softmax", "maximum"))
case("add:zero_dim_with_array", lambda E, x, y: (x * y, y - x),
     lambda np, x, y: (x * y, y - x), Input(()), Input(S), ops=("add", "sub"))
case("argmax:zero_dim", lambda E, x: (x.argmax(), x.argmax(0), x.amax(0), x.any()),
     lambda np, x: (np.array(0), np.array(0), x, x != 0), Input(()), grad=False,
     out_dtype=("int64", "int64", "same", "bool"), ops=("argmax", "max", "any"))
case("add:empty", lambda E, x: (x * 2 + 1, x.exp(), x.reshape(0, 4).sum(1), x.softmax(-1),
                                x.mean(0), x.amax(1), x.T @ x),
     lambda np, x: (x * 2 + 1, np.exp(x), x.reshape(0, 4).sum(1), x, x.mean(0), x.max(1),
                    x.T @ x), Input((0, 4)), grad=False,
     ops=("add", "exp", "sum", "softmax", "mean", "max", "matmul"))
case("add:noncontiguous", lambda E, x, y: (x.mT * y, (x.mT[::2] + 1).exp(), x[:, ::2].sum(0)),
     lambda np, x, y: (x.swapaxes(-1, -2) * y, np.exp(x.swapaxes(-1, -2)[::2] + 1),
                       x[:, ::2].sum(0)), Input((3, 4)), Input((4, 3)))
case("add:high_rank", lambda E, x, y: (x + y, (x * y).sum((1, 3, 5)), x.permute(5, 4, 3, 2, 1, 0)
                                       .flip(2) - 1),
     lambda np, x, y: (x + y, (x * y).sum((1, 3, 5)), x.transpose(5, 4, 3, 2, 1, 0)[:, :, ::-1]
                       - 1), Input((2, 1, 2, 3, 1, 2)), Input((1, 3, 2, 1, 2, 2)),
     ops=("add", "mul", "sum", "permute", "flip"))


# --- in-place ops -------------------------------------------------------------------------
section("inplace")


def _inplace_case(x, z, ember=True):
    y = x * 1 if ember else x.copy()
    if ember:
        y.add_(z).sub_(z, alpha=2).mul_(z).div_(z + 1)
    else:
        y += z
        y -= 2 * z
        y *= z
        y /= z + 1
    return y


case("add_", lambda E, x, z: _inplace_case(x, z), lambda np, x, z: _inplace_case(x, z, False),
     Input(M), Input((3, 4), "p"), dtypes=ALL_FLOATS, ops=("add_", "sub_", "mul_", "div_"))
case("add_:int", lambda E, x, z: _inplace_int(x, z), lambda np, x, z: _inplace_int(x, z, False),
     Input(S, "i"), Input(S, "n"), dtypes=("int64", "int32", "uint8"), grad=False,
     ops=("add_", "sub_", "mul_"))


def _inplace_int(x, z, ember=True):
    y = x + 0 if ember else x.copy()
    y += z
    y *= 2
    y -= z
    y //= z
    return y


# --- sorting and scans --------------------------------------------------------------------
section("sort_scan")
case("cumsum", lambda E, x: (E.cumsum(x, 1), E.cumsum(x, -1), E.cumprod(x, 0)),
     lambda np, x: (np.cumsum(x, 1), np.cumsum(x, -1), np.cumprod(x, 0)), Input(M),
     ops=("cumsum", "cumprod"))
case("cumsum:int", lambda E, x: (E.cumsum(x, 0), E.cumprod(x, 1)),
     lambda np, x: (np.cumsum(x, 0), np.cumprod(x, 1)), Input(S, "i"),
     dtypes=("int64", "int32"), grad=False, out_dtype="int64", ops=("cumsum", "cumprod"))
case("argsort", lambda E, x: (E.argsort(x), E.argsort(x, 0, descending=True)),
     lambda np, x: (np.argsort(x, -1, kind="stable"), np.argsort(-x, 0, kind="stable")),
     Input(M, "i"), dtypes=("int64", "float32"), grad=False, out_dtype="int64")
case("argsort:sort_topk", lambda E, x: (*E.sort(x, 1), *E.topk(x, 2, -1)),
     lambda np, x: (np.sort(x, 1), np.argsort(x, 1, kind="stable"),
                    -np.sort(-x, -1)[..., :2], np.argsort(-x, -1, kind="stable")[..., :2]),
     Input(M), out_dtype=("same", "int64", "same", "int64"), ops=("argsort", "sort", "topk"))

# --- PyTorch's tensor functions (composites: core/functional_extra.py, einsum, linalg) ------
section("tensor_functions")
_PERM = Input((3, 4), "i", (2, 0, 3, 1, 1, 3, 0, 2, 0, 1, 2, 3))     # one permutation per row
case("mm", lambda E, x, y, b: (E.mm(x, y), E.bmm(b, b.mT), E.addmm(x @ y, x, y, alpha=0.5),
                               E.mv(x, y[:, 0])),
     lambda np, x, y, b: (x @ y, b @ b.swapaxes(-1, -2), x @ y * 1.5, x @ y[:, 0]),
     Input((3, 4)), Input((4, 2)), Input((2, 3, 4)), ops=("mm", "bmm", "addmm", "mv"))
case("einsum", lambda E, x, y: (E.einsum("bij,bjk->bik", x, y), E.einsum("bij->j", x),
                                E.einsum("...ij,...kj", x, x), E.einsum("bii->b", x @ y)),
     lambda np, x, y: (np.einsum("bij,bjk->bik", x, y), np.einsum("bij->j", x),
                       np.einsum("...ij,...kj", x, x), np.einsum("bii->b", x @ y)),
     Input((2, 3, 4)), Input((2, 4, 3)), ops=("einsum", "matmul"))
case("tril", lambda E, x: (E.tril(x), E.triu(x, 1), x.tril(-2)),
     lambda np, x: (np.tril(x), np.triu(x, 1), np.tril(x, -2)), Input(M),
     dtypes=FLOATS + ("int64", "bool"), ops=("tril", "triu"))
case("diagonal", lambda E, x: (E.diagonal(x, 1), E.diag(x[0, :, 0]), E.trace(x[0]),
                               E.diag_embed(x[0])),
     lambda np, x: (np.diagonal(x, 1), np.diag(x[0, :, 0]), np.trace(x[0]),
                    np.stack([np.diag(r) for r in x[0]])), Input(M),
     ops=("diagonal", "diag", "trace", "diag_embed"))
case("roll", lambda E, x: (E.roll(x, 1, 2), x.roll((1, -1), (0, 1)), E.roll(x, 3),
                           x.narrow(2, 1, 2)),
     lambda np, x: (np.roll(x, 1, 2), np.roll(x, (1, -1), (0, 1)), np.roll(x, 3), x[:, :, 1:3]),
     Input(M), ops=("roll", "narrow"))
case("repeat", lambda E, x: (x.repeat(2, 1, 2), E.repeat_interleave(x, 2, 1), E.tile(x, (2,))),
     lambda np, x: (np.tile(x, (2, 1, 2)), np.repeat(x, 2, 1), np.tile(x, (1, 1, 2))),
     Input(M), ops=("repeat_interleave", "tile"))
case("norm", lambda E, x: (x.norm(), x.norm(1, 1), E.linalg.norm(x, dim=-1),
                           E.linalg.vector_norm(x, float("inf"), (0, 2))),
     lambda np, x: (np.sqrt((x * x).sum()), np.abs(x).sum(1), np.sqrt((x * x).sum(-1)),
                    np.abs(x).max((0, 2))), Input(M), ops=("norm",))
case("scatter", lambda E, x, i: (E.scatter(x, 1, i, x * 2), x.scatter(1, i[:, :2], -1.0),
                                 E.index_fill(x, 1, i[0, :2], 0.5)),
     lambda np, x, i: (_put_along(x, i, x * 2), _put_along(x, i[:, :2], -1.0),
                       _fill_cols(x, i[0, :2], 0.5)), Input(S), _PERM,
     ops=("scatter", "index_fill"))
case("cross", lambda E, x, y: E.cross(x, y, dim=1), lambda np, x, y: np.cross(x, y, axis=1),
     Input((2, 3)), Input((2, 3)), ops=("cross",))


def _put_along(x, i, v):
    out = x.copy()
    np.put_along_axis(out, i, v if np.isscalar(v) else v[:, :i.shape[1]], 1)
    return out


def _fill_cols(x, cols, v):
    out = x.copy()
    out[:, cols] = v
    return out
