"""The complex primitives (ember/ops/complex.py) and abs of a complex array: elementwise
kernels over float2/double2 pairs (complexmath.py), deferred and fused like the others."""
from __future__ import annotations

from ember import dtypes as D

from . import codegen, complexmath
from .fusion import defer
from .launch import broadcast_shape
from .runtime import CLArray


def _part(op: str):
    def kernel(x: CLArray) -> CLArray:
        dt = x.dtype.name
        return defer(op, x.runtime, op, lambda: (complexmath.part_expr(op, dt),
                                                 complexmath.helpers(dt)),
                     [x], [dt], x.shape, x.dtype.to_real(), ["A"])
    kernel.__name__ = op
    return kernel


def conj(x: CLArray) -> CLArray:
    dt = x.dtype.name
    c = complexmath.CTYPE[dt]
    return defer("conj", x.runtime, "conj", lambda: (f"({c})(x0.x, -x0.y)", ""), [x], [dt],
                 x.shape, x.dtype, ["A"])


def complex_(re: CLArray, im: CLArray) -> CLArray:
    dt = re.dtype.name
    out = re.dtype.to_complex()
    c = complexmath.CTYPE[out.name]
    shape = broadcast_shape([re, im])
    return defer("complex", re.runtime, "complex", lambda: (f"({c})(x0, x1)", ""), [re, im],
                 [dt, dt], shape, out, ["AA"])


def with_complex_abs(real_abs):
    """abs: the real kernel for real arrays, |z| (a real array) for complex ones."""
    complex_abs = _part("abs")

    def abs(x):
        if x.dtype.category == D.COMPLEX:
            return complex_abs(x)
        return real_abs(x)
    return abs


def table(base: dict) -> dict:
    return {"real": _part("real"), "imag": _part("imag"), "conj": conj,
            "complex": complex_, "abs": with_complex_abs(base["abs"])}


assert set(complexmath.COMPLEX) <= set(codegen.CTYPE)
