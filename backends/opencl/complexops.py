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


def with_complex_matmul(real_matmul):
    """matmul: the real kernel for real arrays; for complex ones four real products of the
    parts, (Ar Br - Ai Bi) + (Ar Bi + Ai Br) i (the real GEMM kernels, their tuning and
    batching; the 3-product form saves one but loses accuracy where parts differ in size)."""
    real, imag = _part("real"), _part("imag")

    def matmul(x, y):
        if x.dtype.category != D.COMPLEX:
            return real_matmul(x, y)
        xr, xi, yr, yi = real(x), imag(x), real(y), imag(y)
        re = _sub(real_matmul(xr, yr), real_matmul(xi, yi))
        im = _add(real_matmul(xr, yi), real_matmul(xi, yr))
        return complex_(re, im)
    return matmul


def _add(a, b):
    from .elementwise import binary
    return binary("add")(a, b)


def _sub(a, b):
    from .elementwise import binary
    return binary("sub")(a, b)


def with_complex_nonzero(real_nonzero):
    """nonzero of a complex array: the coordinates of its `!= 0` (either part nonzero)."""
    def nonzero(x):
        if x.dtype.category == D.COMPLEX:
            from .elementwise import binary
            x = binary("ne")(x, 0)
        return real_nonzero(x)
    return nonzero


def table(base: dict) -> dict:
    return {"real": _part("real"), "imag": _part("imag"), "conj": conj,
            "complex": complex_, "abs": with_complex_abs(base["abs"]),
            "matmul": with_complex_matmul(base["matmul"]),
            "nonzero": with_complex_nonzero(base["nonzero"])}


assert set(complexmath.COMPLEX) <= set(codegen.CTYPE)
