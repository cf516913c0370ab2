"""cumsum and cumprod: inclusive scans along one axis, read and written through strides.

Short lines (up to SERIAL elements) take one work-item each.  Longer lines take one
work-group each: every work-item scans its own chunk, the chunk totals are scanned in local
memory (Hillis-Steele), and each work-item rescans its chunk from its prefix; the work
is O(L) per line and one launch covers every line.
"""
from __future__ import annotations

import numpy as np

from . import codegen
from .codegen import COMPUTE, CTYPE
from .runtime import CLArray, contiguous_strides, max_dims_error

SERIAL = 64           # lines up to this length are scanned by one work-item each
GROUP = 256           # work-items per line otherwise (the local array's size)

_RULES = {"cumsum": ("0", "+"), "cumprod": ("1", "*")}


def _source(op: str, dt: str) -> str:
    t, c = CTYPE[dt], COMPUTE[dt]
    init, sym = _RULES[op]
    pre = ""
    if dt in codegen.COMPLEX:     # float2 pairs: (1, 0) and the complex product
        init = "(1, 0)" if op == "cumprod" else "(0, 0)"
        init = f"({c}){init}"
        if op == "cumprod":
            pre = (f"#define CMUL_(a, b) (({c})((a).x * (b).x - (a).y * (b).y, "
                   "(a).x * (b).y + (a).y * (b).x))\n")

    def comb(a, b):
        return f"CMUL_({a}, {b})" if pre else f"{a} {sym} {b}"
    head = """long base = xo, obase = 0;
  {unravel}""".format(unravel=codegen.unravel("line", "shape", "nd",
                                              [("base", "st"), ("obase", "ost")]))
    return pre + f"""
__kernel void serial(long nlines, long L, int nd, long8 shape, long8 st, long8 ost, long ast,
                     long oast, __global const {t}* x, long xo, __global {t}* out) {{
  long line = get_global_id(0);
  if (line >= nlines) return;
  {head}
  {c} acc = {init};
  for (long k = 0; k < L; k++) {{
    acc = {comb("acc", f"({c})x[base + k * ast]")};
    out[obase + k * oast] = ({t})acc;
  }}
}}
__kernel void group(long L, long chunk, int nd, long8 shape, long8 st, long8 ost, long ast,
                    long oast, __global const {t}* x, long xo, __global {t}* out) {{
  __local {c} part[{GROUP}];
  long line = get_group_id(0);
  int lid = get_local_id(0), wg = get_local_size(0);
  {head}
  long k0 = lid * chunk, k1 = min(L, k0 + chunk);
  {c} acc = {init};
  for (long k = k0; k < k1; k++) acc = {comb("acc", f"({c})x[base + k * ast]")};
  part[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int off = 1; off < wg; off *= 2) {{
    {c} v = lid >= off ? part[lid - off] : ({c}){init};
    barrier(CLK_LOCAL_MEM_FENCE);
    part[lid] = {comb("part[lid]", "v")};
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  acc = lid > 0 ? part[lid - 1] : ({c}){init};
  for (long k = k0; k < k1; k++) {{
    acc = {comb("acc", f"({c})x[base + k * ast]")};
    out[obase + k * oast] = ({t})acc;
  }}
}}
"""


def _scan(op: str, x: CLArray, axis: int) -> CLArray:
    rt = x.runtime
    out = rt.empty(x.shape, x.dtype)
    if out.size == 0:
        return out
    ostrides = contiguous_strides(x.shape)
    other = [d for d in range(x.ndim) if d != axis]
    shape, (st, ost) = codegen.collapse([x.shape[d] for d in other],
                                        [[x.strides[d] for d in other],
                                         [ostrides[d] for d in other]])
    if len(shape) > codegen.MAXDIM:
        raise max_dims_error(op, shape)
    length = x.shape[axis]
    nlines = out.size // length
    dt = x.dtype.name
    make = lambda: _source(op, dt)
    tail = (np.int32(len(shape)), codegen.long8(shape), codegen.strides8(st),
            codegen.strides8(ost), np.int64(x.strides[axis]), np.int64(ostrides[axis]),
            x.buffer, np.int64(x.offset), out.buffer)
    if length <= SERIAL:
        rt.launch(rt.kernel(("scan", op, dt), make, "serial"), nlines, np.int64(nlines),
                  np.int64(length), *tail, fresh=True)
        return out
    wg = min(GROUP, rt.device.max_work_group_size)
    wg = 1 << (wg.bit_length() - 1)           # a power of two: the local scan's steps
    chunk = -(-length // wg)
    rt.launch_nd(rt.kernel(("scan", op, dt), make, "group"), (nlines * wg,), (wg,),
                 np.int64(length), np.int64(chunk), *tail, fresh=True)
    return out


def cumsum(x: CLArray, *, axis: int) -> CLArray:
    return _scan("cumsum", x, axis)


def cumprod(x: CLArray, *, axis: int) -> CLArray:
    return _scan("cumprod", x, axis)


def table() -> dict:
    return {"cumsum": cumsum, "cumprod": cumprod}
