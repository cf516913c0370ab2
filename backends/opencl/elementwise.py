"""Elementwise kernels: operands broadcast through strides, one build per op and dtypes.

Every program holds, for each array/scalar signature of the op, dense variants (all
operands in one layout: `out[i] = f(a[i])`, which PoCL vectorises across work-items; a
vector form with 8 elements per work-item) and a strided variant (3-D launch over shape and
strides). The ops themselves are deferred and fused (fusion.py); launch.py runs one.
"""
from __future__ import annotations

import math

import numpy as np
from ember import dtypes as D
from ember import ops

from . import codegen
from .codegen import BINARY, CTYPE, UNARY  # the op names: codegen's table keys
from .copies import assign, cast, contiguous
from .fusion import defer
from .reduce import reduction
from .runtime import CLArray

# which ops give bool results: from their declarations' dtype rule
BOOL_OUT = frozenset(name for name in UNARY + BINARY if ops.REGISTRY[name].rule == "bool")


def _runtime_of(operands):
    for v in operands:
        if isinstance(v, CLArray):
            return v.runtime
    raise TypeError("expected at least one OpenCL array")


def _dtype_of(operands):
    for v in operands:
        if isinstance(v, CLArray):
            return v.dtype
    raise TypeError("expected at least one OpenCL array")


def unary(op: str):
    def kernel(x: CLArray) -> CLArray:
        dt = x.dtype.name
        extra = codegen.helpers(dt) if dt in codegen.COMPLEX else ""
        return defer(op, x.runtime, op, lambda: (codegen.unary_expr(op, dt), extra), [x],
                     [dt], x.shape, D.bool_ if op in BOOL_OUT else x.dtype, ["A"])
    kernel.__name__ = op
    return kernel


_COMPARE = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _any(x: CLArray) -> bool:
    """Whether any element of a bool array is true (one reduction and a 1-byte read)."""
    return bool(x.runtime.to_host(reduction("any")(x, axes=tuple(range(x.ndim)),
                                                   keepdims=False)))


def _integer_checks(op: str, x, y, dtype) -> None:
    """The integer semantics of docs/semantics.md, checked when the op is called (not when
    a deferred kernel runs): // and % by zero, negative powers, out-of-range Python ints."""
    for v in (x, y):
        if isinstance(v, int) and not isinstance(v, bool) and op not in _COMPARE:
            info = np.iinfo(dtype.np)
            if not info.min <= v <= info.max:
                raise OverflowError(f"Python integer {v} out of bounds for {dtype.name}")
    if op in ("floor_divide", "remainder"):
        if y == 0 if not isinstance(y, CLArray) else _any(binary("eq")(y, 0)):
            raise ZeroDivisionError("integer division by zero; divide floats "
                                    "(x.float()) to get inf and nan instead")
    if op == "pow" and (y < 0 if not isinstance(y, CLArray) else _any(binary("lt")(y, 0))):
        raise ValueError("Integers to negative integer powers are not allowed; use a float "
                         "base or exponent (x.float() ** y)")


def _compare_out_of_range(op: str, x, y, dtype, shape):
    """An integer array compared with a Python int its dtype cannot hold: the answer is
    the same for every element (NumPy 2 compares the values; a wrapped int would not)."""
    array, number = (x, y) if isinstance(x, CLArray) else (y, x)
    if not isinstance(number, int) or isinstance(number, bool):
        return None
    info = np.iinfo(dtype.np)
    if info.min <= number <= info.max:
        return None
    name = op if array is x else _COMPARE[op]       # 300 > x is x < 300
    above = number > info.max                       # the number is above every element
    value = {"eq": False, "ne": True, "lt": above, "le": above, "gt": not above,
             "ge": not above}[name]
    return full(array.runtime, shape=shape, value=value, dtype=D.bool_)


def broadcast_shape(arrays) -> tuple:
    """The broadcast of the arrays' shapes; a ValueError where two sizes of one dim differ
    and neither is 1 (the dispatcher turns it into the op's ShapeError, as NumPy's refusal
    is on the CPU): a (5, 4) - (5,) must not answer with a (5, 5)."""
    nd = max((a.ndim for a in arrays), default=0)
    out = [1] * nd
    for a in arrays:
        for i, n in enumerate(a.shape, nd - a.ndim):
            if n != 1:
                m = out[i]
                if m != 1 and m != n:
                    raise ValueError(f"shapes {' and '.join(str(tuple(x.shape)) for x in arrays)}"
                                     f" do not broadcast")
                out[i] = n
    return tuple(out)


def binary(op: str):
    def kernel(x, y) -> CLArray:
        dtype = _dtype_of((x, y))
        dt = dtype.name
        runtime = _runtime_of((x, y))
        shape = broadcast_shape([v for v in (x, y) if isinstance(v, CLArray)])
        if dtype.category == D.INT:
            if op in _COMPARE:
                const = _compare_out_of_range(op, x, y, dtype, shape)
                if const is not None:
                    return const
            _integer_checks(op, x, y, dtype)
        elif dt == "bool" and op == "sub":
            raise TypeError("sub: subtracting bool tensors is not supported (PyTorch); use "
                            "logical_xor() or `^` instead")
        extra = codegen.helpers(dt) if op in ("pow", "remainder", "floor_divide", "atan2") or \
            dt in codegen.COMPLEX else ""
        return defer(op, runtime, op, lambda: (codegen.binary_expr(op, dt), extra), [x, y],
                     [dt, dt], shape, D.bool_ if op in BOOL_OUT else dtype,
                     ["AA", "AS", "SA"])
    kernel.__name__ = op
    return kernel


def where(cond: CLArray, x, y) -> CLArray:
    dtype = _dtype_of((x, y)) if any(isinstance(v, CLArray) for v in (x, y)) else None
    if dtype is None:      # both branches are scalars: the dtype is the promoted scalar's
        dtype = D.result_type(x, y)
    dt = dtype.name
    shape = broadcast_shape([v for v in (cond, x, y) if isinstance(v, CLArray)])
    return defer("where", cond.runtime, "where", lambda: ("x0 ? x1 : x2", ""),
                 [cond, x, y], ["bool", dt, dt], shape, dtype, ["AAA", "AAS", "ASA", "ASS"])


def full(runtime, *, shape, value, dtype) -> CLArray:
    out = runtime.empty(shape, dtype)
    if dtype.category < D.FLOAT and isinstance(value, (float, complex)):
        value = value.real if isinstance(value, complex) else value
        value = int(value) if math.isfinite(value) else 0
    assign(out, value)
    return out


def arange(runtime, *, start, stop, step, dtype) -> CLArray:
    n = max(0, math.ceil((stop - start) / step))
    out = runtime.empty((n,), dtype)
    t = CTYPE[dtype.name]
    if dtype.category == D.FLOAT:
        # computed in double where the device has it, as NumPy does, then rounded once
        c = "double" if runtime.fp64 else "float"
        args = [np.float64(start), np.float64(step)] if runtime.fp64 else [
            np.float32(start), np.float32(step)]
    else:
        c = "long"
        args = [np.int64(start), np.int64(step)]

    def make():
        return (f"__kernel void arange(long n, __global {t}* out, {c} start, {c} step) {{\n"
                f"  long i = get_global_id(0); if (i >= n) return;\n"
                f"  out[i] = ({t})(start + ({c})i * step);\n}}")
    kernel = runtime.kernel(("arange", dtype.name, c), make, "arange")
    runtime.launch(kernel, n, np.int64(n), out.buffer, *args)
    return out


def table() -> dict:
    out = {name: unary(name) for name in UNARY}
    out.update({name: binary(name) for name in BINARY})
    out.update(where=where, cast=cast, assign=assign, contiguous=contiguous)
    return out

