"""Conformance rows of complex64/complex128: the elementwise ops torch defines on complex
numbers (arithmetic, exp/log/sqrt/pow, trig and hyperbolic, abs/angle/real/imag/conj, the
tests), the reductions, matmul, and the special values with nan or inf in either part,
each against NumPy's complex functions (C99 Annex G values).  Gradients of complex inputs
are checked against torch by tests/unit/test_complex_ops.py (gradcheck on complex leaves).
"""
from __future__ import annotations

import numpy as np

from ._table import COMPLEX, Input, M, Rows, _function, _method

ROWS = Rows("complex")
case = ROWS.case

CS = Input((18,), "cs")
C = Input(M, "c")

# name, NumPy reference
UNARY = [("neg", np.negative), ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt),
         ("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("tanh", np.tanh),
         ("sinh", np.sinh), ("cosh", np.cosh),
         ("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan),
         ("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh),
         ("reciprocal", lambda x: 1 / x), ("rsqrt", lambda x: 1 / np.sqrt(x)),
         ("expm1", np.expm1), ("log1p", np.log1p), ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
         ("square", np.square), ("log2", np.log2), ("log10", np.log10),
         ("conj", np.conj), ("sgn", lambda x: np.where(x == 0, 0, x / np.where(x == 0, 1, abs(x))))]
for _name, _ref in UNARY:
    case("complex:" + _name, _method(_name), _ref, C, dtypes=COMPLEX, grad=False,
         ops=(_name,), atol=1e-5, rtol=1e-4)
# nan, inf, signed zeros in either part: the values NumPy's (C99's) functions give
for _name, _ref in [("neg", np.negative), ("exp", np.exp), ("log", np.log),
                    ("sqrt", np.sqrt), ("conj", np.conj), ("reciprocal", lambda x: 1 / x)]:
    case("complex:" + _name + ":special", _function(_name), _ref, CS, dtypes=COMPLEX,
         grad=False, layouts=False, ops=(_name,), ref_float64=False)

# complex in, real out
for _name, _ref in [("abs", np.abs), ("angle", np.angle), ("real", np.real),
                    ("imag", np.imag)]:
    case("complex:" + _name, _function(_name), _ref, C, dtypes=COMPLEX, grad=False,
         out_dtype="complex_part", ops=(_name,))
    case("complex:" + _name + ":special", _function(_name), _ref, CS, dtypes=COMPLEX,
         grad=False, layouts=False, out_dtype="complex_part", ops=(_name,),
         ref_float64=False)
for _name in ("isnan", "isinf", "isfinite"):
    case("complex:" + _name, _method(_name), getattr(np, _name), CS, dtypes=COMPLEX,
         grad=False, layouts=False, out_dtype="bool", ops=(_name,))
case("complex:eq", lambda E, x, y: (x == y, x != y, x == x),
     lambda np, x, y: (x == y, x != y, x == x), CS, CS, dtypes=COMPLEX, grad=False,
     layouts=False, out_dtype="bool", ops=("eq", "ne"))

# binary arithmetic, broadcasting and Python numbers
case("complex:add", lambda E, x, y: (x + y, x - y, x + 2.5, 1j - x),
     lambda np, x, y: (x + y, x - y, x + 2.5, 1j - x), C, Input((4,), "c"), dtypes=COMPLEX,
     grad=False, ops=("add", "sub"))
case("complex:mul", lambda E, x, y: (x * y, x / y, x * 2.0, 3j / x),
     lambda np, x, y: (x * y, x / y, x * 2.0, 3j / x), C, Input((3, 1), "c"),
     dtypes=COMPLEX, grad=False, ops=("mul", "div"), rtol=1e-4)
case("complex:mul:special", lambda E, x, y: x * y, lambda np, x, y: x * y, CS,
     Input((18,), "c"), dtypes=COMPLEX, grad=False, layouts=False, ops=("mul",),
     ref_float64=False)
case("complex:pow", lambda E, x, y: (x ** y, x ** 2, x ** 0.5),
     lambda np, x, y: (x ** y, x ** 2, x ** 0.5), C, C, dtypes=COMPLEX, grad=False,
     ops=("pow",), rtol=1e-4, atol=1e-4)
case("complex:where", lambda E, x, y: E.where(x.real > 0, x, y),
     lambda np, x, y: np.where(x.real > 0, x, y), C, C, dtypes=COMPLEX, grad=False,
     ops=("where",))
case("complex:from_parts", lambda E, x: (E.complex(x.real, x.imag), E.view_as_real(x),
                                          E.polar(x.abs(), x.angle())),
     lambda np, x: (x, np.stack([x.real, x.imag], -1).astype(x.real.dtype), x), C,
     dtypes=COMPLEX, grad=False, out_dtype=("same", "complex_part", "same"),
     ops=("complex", "real", "imag"), rtol=1e-4, atol=1e-5)

# reductions, scans, products
case("complex:sum", lambda E, x: (x.sum(), x.sum(1), x.mean((0, 2)), x.prod(2)),
     lambda np, x: (x.sum(), x.sum(1), x.mean((0, 2)), x.prod(2)), C, dtypes=COMPLEX,
     grad=False, ops=("sum", "prod"), rtol=1e-4)
case("complex:cumsum", lambda E, x: (x.cumsum(1), x.cumprod(2)),
     lambda np, x: (np.cumsum(x, 1), np.cumprod(x, 2)), C, dtypes=COMPLEX, grad=False,
     ops=("cumsum", "cumprod"), rtol=1e-4)
case("complex:any", lambda E, x: (x.any(), x.all(1)), lambda np, x: (x.any(), x.all(1)),
     Input((3, 6), "cs"), dtypes=COMPLEX, grad=False, layouts=False, out_dtype="bool",
     ops=("any", "all"))
case("complex:matmul", lambda E, x, y: (x @ y, x.mT.conj() @ x),
     lambda np, x, y: (x @ y, np.swapaxes(x, -1, -2).conj() @ x), C, Input((4, 5), "c"),
     dtypes=COMPLEX, grad=False, ops=("matmul",), rtol=1e-4, atol=1e-4)
case("complex:linalg", lambda E, x: (E.linalg.inv(x), E.linalg.det(x),
                                     E.linalg.solve(x, x[..., :1])),
     lambda np, x: (np.linalg.inv(x), np.linalg.det(x), np.linalg.solve(x, x[..., :1])),
     Input((2, 3, 3), "c"), dtypes=COMPLEX, grad=False, layouts=False,
     ops=("inv", "det", "solve"), rtol=1e-3, atol=1e-4)

# casts: a real tensor into complex, complex64 <-> complex128, complex -> bool
case("complex:cast", lambda E, x: (x.to(E.complex128), x.to(E.complex64), x.to(E.bool),
                                   x.real.to(x.dtype)),
     lambda np, x: (x.astype(np.complex128), x.astype(np.complex64), x != 0,
                    x.real.astype(x.dtype)), CS, dtypes=COMPLEX, grad=False, layouts=False,
     out_dtype=("complex128", "complex64", "bool", "same"), ops=("cast",),
     ref_float64=False)
