"""Writing and converting OpenCL arrays: assign (dst[...] = src), contiguous and cast.

Below every kernel family (they all copy), above fusion: cast is deferred like any
elementwise op, and assign writes a pending tree straight into its target (fusion's
assign_into).  The runtime makes contiguous copies through the callback installed here.
"""
from __future__ import annotations

from ember.backends.array_api import OVERLAP, overlapping

from .fusion import LazyArray, assign_into, defer
from .launch import _cast_expr, launch
from .runtime import CLArray, Runtime


def cast(x: CLArray, *, dtype) -> CLArray:
    return defer("cast", x.runtime, "cast", lambda: (_cast_expr(x.dtype.name, dtype.name), ""),
                 [x], [x.dtype.name], x.shape, dtype, ["A"])


def assign(dst: CLArray, src) -> None:
    """dst[...] = src in place (src broadcast, or a scalar), converting dtypes."""
    if overlapping(dst):
        raise ValueError(OVERLAP)
    if isinstance(src, LazyArray) and src.node is not None and assign_into(dst, src):
        return                         # src's pending ops ran as one kernel into dst
    if isinstance(src, CLArray) and src.buffer is dst.buffer:
        src = contiguous(src)          # overlapping views (x[1:] = x[:-1]): read, then write
    src_dt = src.dtype.name if isinstance(src, CLArray) else dst.dtype.name
    launch("assign", dst.runtime, "copy", lambda: (_cast_expr(src_dt, dst.dtype.name), ""),
           [src], [src_dt], dst, ["A", "S"])


def contiguous(x: CLArray) -> CLArray:
    out = x.runtime.empty(x.shape, x.dtype)
    assign(out, x)
    return out


Runtime.contiguous = staticmethod(contiguous)
