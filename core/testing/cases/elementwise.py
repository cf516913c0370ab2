"""Conformance rows of the elementwise ops: unary and binary (broadcasting, scalars,
promotion), comparisons, logical ops, where, relu, clamp and casts.
"""
from __future__ import annotations

import math

import numpy as np

from ._references import _erf
from ._table import (
    ALL_FLOATS,
    INTS,
    SPECIAL_COL,
    SPECIAL_IN,
    SPECIAL_ROW,
    Input,
    M,
    Rows,
    S,
    _function,
    _method,
)

ROWS = Rows("elementwise")
case = ROWS.case

# --- elementwise unary ------------------------------------------------------------------
UNARY_FLOAT = [
    ("neg", np.negative, "f"), ("abs", np.abs, "f"), ("exp", np.exp, "f"),
    ("log", np.log, "p"), ("log1p", np.log1p, "p"), ("expm1", np.expm1, "f"),
    ("sqrt", np.sqrt, "p"), ("rsqrt", lambda x: 1 / np.sqrt(x), "p"),
    ("sin", np.sin, "f"), ("cos", np.cos, "f"), ("tan", np.tan, "u"), ("tanh", np.tanh, "f"),
    ("asin", np.arcsin, "u"), ("acos", np.arccos, "u"), ("atan", np.arctan, "f"),
    ("asinh", np.arcsinh, "f"), ("atanh", np.arctanh, "u"),
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
# acosh's domain is x >= 1: the positive inputs (0.5, 2) shifted past it
case("acosh", lambda E, x: (x + 1.0).acosh(), lambda x: np.arccosh(x + 1.0), Input(M, "p"),
     dtypes=ALL_FLOATS)
case("acosh:special", _function("acosh"), np.arccosh, SPECIAL_IN, grad=False, layouts=False)
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
# bit operations (declared kernels, ops/bitwise.py): values that set every bit of a byte and
# the sign; shifts by 0 up to past the width (0 from the left, the sign from the right)
_BITS = Input((8,), "i", values=(-128, -1, 0, 1, 85, 127, -86, 64))
_BITS2 = Input((8,), "i", values=(127, -128, -1, 3, -86, 85, 64, 0))
case("bitwise_and", lambda E, x, y: (E.bitwise_and(x, y), x | y, x ^ y, ~x),
     lambda np, x, y: (x & y, x | y, x ^ y, ~x), _BITS, _BITS2, dtypes=(*INTS, "bool"),
     grad=False, ops=("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"))
case("bitwise_and:int64", lambda E, x, y: (x & y, x | y, x ^ y, ~x, x & 0xFF),
     lambda np, x, y: (x & y, x | y, x ^ y, ~x, x & 0xFF),
     Input((4,), "i", values=(-(2 ** 40) - 7, 2 ** 52 + 5, -1, 2 ** 33)),
     Input((4,), "i", values=(2 ** 45 + 3, -(2 ** 50), 2 ** 31 - 1, -5)), dtypes=("int64",),
     grad=False, ops=("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"))
case("bitwise_left_shift", lambda E, x, s: (x << s, x >> s),
     lambda np, x, s: (np.left_shift(x, s), np.right_shift(x, s)), _BITS,
     Input((8,), "i", values=(0, 1, 7, -1, 8, 9, 63, -64)), dtypes=INTS, grad=False,
     ops=("bitwise_left_shift", "bitwise_right_shift"))
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


# --- sign bits, infinities, powers of two, integer divisors (torch.* composites) ----------
case("copysign", lambda E, x, y: (E.copysign(x, y), x.copysign(-1.0)),
     lambda np, x, y: (np.copysign(x, y), np.copysign(x, -1.0)), Input(S), Input(S))
case("signbit", lambda E, x: x.signbit(), np.signbit, SPECIAL_IN, grad=False, layouts=False,
     out_dtype="bool")
case("ldexp", lambda E, x, e: E.ldexp(x, e), lambda np, x, e: np.ldexp(x, e.astype(int)),
     Input(S), Input(S, "e"), grad=False)
case("logaddexp2", lambda E, x, y: E.logaddexp2(x, y), np.logaddexp2, Input(S), Input(S))
# one step of the dtype under test (NumPy's in that dtype), the special values included
case("nextafter", lambda E, x, y: (E.nextafter(x, y), x.nextafter(-y)),
     lambda np, x, y: (np.nextafter(x, y), np.nextafter(x, -y)), SPECIAL_IN, Input((12,)),
     grad=False, ref_float64=False, atol=0.0, rtol=0.0, ops=("nextafter",))
case("isposinf", lambda E, x: (E.isposinf(x), E.isneginf(x), E.isreal(x)),
     lambda np, x: (np.isposinf(x), np.isneginf(x), np.isreal(x)), SPECIAL_IN, grad=False,
     layouts=False, ops=("isposinf", "isneginf", "isreal"), out_dtype="bool")
case("angle", lambda E, x: E.angle(x),
     lambda np, x: np.where(np.isnan(x), np.nan, np.where(x < 0, np.pi, 0.0)),
     SPECIAL_IN, grad=False, layouts=False)
case("rsub", lambda E, x, y: E.rsub(x, y, alpha=2), lambda np, x, y: y - 2 * x, Input(S),
     Input(S))
case("fill", lambda E, x: E.fill(x, 1.5), lambda np, x: np.full_like(x, 1.5), Input(S),
     grad=False)
case("real", lambda E, x: (E.real(x), E.conj(x), E.resolve_conj(x), E.resolve_neg(x),
                           E.conj_physical(x)),
     lambda np, x: (x, x, x, x, x), Input(S),
     ops=("real", "conj", "resolve_conj", "resolve_neg", "conj_physical"))
case("gcd", lambda E, a, b: (E.gcd(a, b), E.lcm(a, b)),
     lambda np, a, b: (np.gcd(a, b), np.lcm(a, b)), Input(S, "i"), Input(S, "z"),
     dtypes=("int64", "int32"), grad=False, ops=("gcd", "lcm"))
case("frexp", lambda E, x: (E.frexp(x)[0], E.frexp(x).exponent.to(x.dtype)),
     lambda np, x: (np.frexp(x)[0], np.frexp(x)[1].astype(x.dtype)), Input(S), grad=False)
