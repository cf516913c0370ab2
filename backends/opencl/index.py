"""Indexing: take, gather, scatter_add, index_add, index_put, nonzero.

Accumulating ops are deterministic without atomics: each work-item owns every output
element along the indexed axis for one position of the other axes, and adds its sources in
index order, so repeated indices accumulate exactly as NumPy's `add.at` does (bit for bit).
index_put lets the last write win through an `atomic_max` of the writer's position.
"""
from __future__ import annotations

import numpy as np
from ember import dtypes as D

from . import codegen
from .codegen import COMPUTE, CTYPE
from .copies import contiguous
from .runtime import CLArray, max_dims_error, numel


def _check_dims(op, shape):
    if len(shape) > codegen.MAXDIM:
        raise max_dims_error(op, shape)


def _take_kernel(name: str, t: str, extra: str, store: str) -> str:
    """A take kernel over elements of C type t: the index arithmetic both take and
    take_words share; `extra` parameters after out, `store` writes element g. Past one
    dim the unravelling is out of line (`<name>_at`, codegen.offset_fn): inlined twice, it
    made PoCL's compile at first launch ~0.15 s of CPU."""
    indent = " " * len(f"__kernel void {name}(")
    return codegen.offset_fn(f"{name}_at") + f"""
__kernel void {name}(long n, long K, long Q, int ndp, long8 pshape, long8 pst, int ndq,
{indent}long8 qshape, long8 qst, long ast, __global const {t}* x, long xo,
{indent}__global const long* idx, long io, __global {t}* out{extra}) {{
  long g = get_global_id(0);
  if (g >= n) return;
  long q = g % Q, r = g / Q;
  long k = r % K, p = r / K;
  long off = xo + idx[io + k] * ast;
  off += ndp <= 1 ? p * pst.s7 : {name}_at(p, ndp, pshape, pst);
  off += ndq <= 1 ? q * qst.s7 : {name}_at(q, ndq, qshape, qst);
  {store}
}}
"""


def _take_source(dt: str) -> str:
    return _take_kernel("take", CTYPE[dt], "", "out[g] = x[off];")


def _take_words_source() -> str:
    """`take_words`: take for every dtype of 4, 8 or 16 bytes, an element `w` 32-bit words
    (a copy moves bits, whatever the dtype): one kernel where a typed one per dtype cost
    PoCL a compile each at its first launch (~0.2 s of CPU; a training step takes float32
    images and int64 labels). Offsets and strides come in words."""
    return _take_kernel("take_words", "uint", ", int w",
                        "for (int j = 0; j < w; j++) out[g * w + j] = x[off + j];")


def take(x: CLArray, index: CLArray, *, axis: int) -> CLArray:
    rt = x.runtime
    if x.ndim == 0:
        x = x.view((1,), (0,), x.offset)
    index = index if index.is_contiguous else contiguous(index)
    out = rt.empty(x.shape[:axis] + index.shape + x.shape[axis + 1:], x.dtype)
    if out.size == 0:
        return out
    pshape, (pst,) = codegen.collapse(x.shape[:axis], [x.strides[:axis]])
    qshape, (qst,) = codegen.collapse(x.shape[axis + 1:], [x.strides[axis + 1:]])
    _check_dims("take", pshape)
    _check_dims("take", qshape)
    dt = x.dtype.name
    w = x.dtype.itemsize // 4 if x.dtype.itemsize % 4 == 0 else 0
    if w:
        k = rt.kernel(("take-words",), _take_words_source, "take_words")
        pst, qst = tuple(s * w for s in pst), tuple(s * w for s in qst)
        tail = (np.int32(w),)
    else:
        k = rt.kernel(("take", dt), lambda: _take_source(dt), "take")
        w, tail = 1, ()
    rt.launch(k, out.size, np.int64(out.size), np.int64(index.size),
              np.int64(numel(x.shape[axis + 1:])), np.int32(len(pshape)), codegen.long8(pshape),
              codegen.strides8(pst), np.int32(len(qshape)), codegen.long8(qshape),
              codegen.strides8(qst), np.int64(x.strides[axis] * w), x.buffer,
              np.int64(x.offset * w), index.buffer, np.int64(index.offset), out.buffer, *tail)
    return out


def gather(x: CLArray, index: CLArray, *, axis: int) -> CLArray:
    rt = x.runtime
    out = rt.empty(index.shape, x.dtype)
    if out.size == 0:
        return out
    xst = tuple(0 if d == axis else s for d, s in enumerate(x.strides))
    shape, (ost, ist, xst) = codegen.collapse(index.shape, [out.strides, index.strides, xst])
    _check_dims("gather", shape)
    dt = x.dtype.name
    k = rt.kernel(("scatter_add", dt), lambda: _scatter_source(dt), "gather_scatter")
    zero = np.int64(0)
    rt.launch(k, out.size, np.int64(out.size), zero, np.int32(len(shape)), codegen.long8(shape),
              codegen.strides8(ist), codegen.strides8(xst), codegen.strides8(ost), zero,
              np.int64(x.strides[axis]), zero, index.buffer, np.int64(index.offset),
              x.buffer, np.int64(x.offset), out.buffer, np.int32(1))
    return out


def _scatter_source(dt: str) -> str:
    """`gather_scatter`: gather (gather 1: out[g] = src[its position + idx * sax], one
    work-item per element) and scatter_add (gather 0: one work-item per position of the
    other axes, adding along the axis in index order) in one kernel: PoCL compiles each
    kernel at its first launch (~0.1 s of CPU, nearly all fixed), and a gather's gradient
    is a scatter_add (a classifier's loss meets both in its first step). Both walk the
    index, source and output offsets of the same unravelled position."""
    t, c = CTYPE[dt], COMPUTE[dt]
    add = codegen.binary_expr("add", dt)
    return f"""
__kernel void gather_scatter(long n, long L, int nd, long8 shape, long8 ist, long8 sst,
                             long8 ost, long iax, long sax, long oax,
                             __global const long* idx, long io, __global const {t}* src,
                             long so, __global {t}* out, int gather) {{
  long g = get_global_id(0);
  if (g >= n) return;
  long pi = io, ps = so, po = 0;
  {codegen.unravel("g", "shape", "nd", [("pi", "ist"), ("ps", "sst"), ("po", "ost")])}
  if (gather) {{
    out[po] = src[ps + idx[pi] * sax];
    return;
  }}
  for (long l = 0; l < L; l++) {{
    long p = po + idx[pi + l * iax] * oax;
    {c} x0 = ({c})out[p], x1 = ({c})src[ps + l * sax];
    out[p] = ({t})({add});
  }}
}}
"""


def _scatter(op: str, x: CLArray, index: CLArray, src: CLArray, axis: int) -> CLArray:
    """out = copy of x; out[..., index[i], ...] += src[i] along axis, in index order."""
    rt = x.runtime
    out = contiguous(x)
    if index.size == 0:
        return out
    length = index.shape[axis]
    # one work-item per position of the other axes: the axis itself is looped over
    rest = tuple(1 if d == axis else n for d, n in enumerate(index.shape))
    shape, (ist, sst, ost) = codegen.collapse(rest, [index.strides, src.strides,
                                                     tuple(0 if d == axis else s for d, s in
                                                           enumerate(out.strides))])
    _check_dims(op, shape)
    dt = x.dtype.name
    k = rt.kernel(("scatter_add", dt), lambda: _scatter_source(dt), "gather_scatter")
    n = numel(rest)
    rt.launch(k, n, np.int64(n), np.int64(length), np.int32(len(shape)), codegen.long8(shape),
              codegen.strides8(ist), codegen.strides8(sst), codegen.strides8(ost),
              np.int64(index.strides[axis]), np.int64(src.strides[axis]),
              np.int64(out.strides[axis]), index.buffer, np.int64(index.offset), src.buffer,
              np.int64(src.offset), out.buffer, np.int32(0), local=64)
    return out


def scatter_add(x: CLArray, index: CLArray, src: CLArray, *, axis: int) -> CLArray:
    return _scatter("scatter_add", x, index, src, axis)


def index_add(x: CLArray, index: CLArray, src: CLArray, *, axis: int) -> CLArray:
    # index_add is scatter_add with the flattened index broadcast over src's other axes
    from .movement import reshape
    k = index.size
    index = reshape(index, shape=(k,))
    src = reshape(src, shape=x.shape[:axis] + (k,) + x.shape[axis + 1:])
    istrides = tuple(index.strides[0] if d == axis else 0 for d in range(src.ndim))
    return _scatter("index_add", x, index.view(src.shape, istrides, index.offset), src, axis)


def _put_source(dt: str) -> str:
    t, c = CTYPE[dt], COMPUTE[dt]
    body = """
  long g = get_global_id(0);
  if (g >= n) return;
  long t = idx[io + g * ist];"""
    return f"""
__kernel void claim(long n, __global const long* idx, long io, long ist, __global int* win) {{
  {body}
  atomic_max(win + t, (int)g);
}}
__kernel void put_A(long n, __global const long* idx, long io, long ist,
                    __global const int* win, __global const {t}* v, long vo, long vst,
                    __global {t}* out) {{
  {body}
  if (win[t] == (int)g) out[t] = v[vo + g * vst];
}}
__kernel void put_S(long n, __global const long* idx, long io, long ist,
                    __global const int* win, {c} v, __global {t}* out) {{
  {body}
  if (win[t] == (int)g) out[t] = ({t})v;
}}
"""


def index_put(x: CLArray, index: CLArray, values) -> CLArray:
    """A copy of flat x with x[index] = values; of repeated indices the last write wins."""
    from .elementwise import full
    from .launch import _scalar
    rt = x.runtime
    out = contiguous(x)
    n = index.size
    if n == 0:
        return out
    if n >= 2 ** 31:
        raise ValueError(f"index_put: {n} indices; the OpenCL backend handles fewer than 2**31")
    win = full(rt, shape=(out.size,), value=-1, dtype=D.int32)
    dt = x.dtype.name
    make = lambda: _put_source(dt)
    head = (np.int64(n), index.buffer, np.int64(index.offset), np.int64(index.strides[0]))
    rt.launch(rt.kernel(("index_put", dt), make, "claim"), n, *head, win.buffer)
    if isinstance(values, CLArray):
        rt.launch(rt.kernel(("index_put", dt), make, "put_A"), n, *head, win.buffer,
                  values.buffer, np.int64(values.offset),
                  np.int64(values.strides[0] if values.ndim else 0), out.buffer)
    else:
        rt.launch(rt.kernel(("index_put", dt), make, "put_S"), n, *head, win.buffer,
                  _scalar(values, dt), out.buffer)
    return out


NONZERO_BLOCK = 1024


def _nonzero_source(dt: str) -> str:
    t = CTYPE[dt]
    head = """
  long g = get_global_id(0);
  if (g >= nblocks) return;"""
    walk = f"""
  long sh[8] = {{shape.s0, shape.s1, shape.s2, shape.s3, shape.s4, shape.s5, shape.s6,
                 shape.s7}};
  long st[8] = {{strides.s0, strides.s1, strides.s2, strides.s3, strides.s4, strides.s5,
                 strides.s6, strides.s7}};
  long end = min(n, (g + 1) * {NONZERO_BLOCK});
  for (long i = g * {NONZERO_BLOCK}; i < end; i++) {{
    long r = i, p = xo;
    for (int d = 7; d >= 8 - nd; d--) {{ p += (r % sh[d]) * st[d]; r /= sh[d]; }}
    if (x[p] != 0) {{"""
    return f"""
__kernel void count(long n, long nblocks, int nd, long8 shape, long8 strides,
                    __global const {t}* x, long xo, __global long* counts) {{
  {head}
  long c = 0;
  {walk} c++; }}
  }}
  counts[g] = c;
}}
__kernel void write(long n, long nblocks, int nd, long8 shape, long8 strides,
                    __global const {t}* x, long xo, __global const long* starts,
                    __global long* out) {{
  {head}
  long k = starts[g];
  {walk}
      long r = i;
      for (int d = 7; d >= 8 - nd; d--) {{ out[k * nd + d - (8 - nd)] = r % sh[d]; r /= sh[d]; }}
      k++;
    }}
  }}
}}
"""


def nonzero(x: CLArray) -> CLArray:
    """(count, ndim) int64 coordinates; the count is a host value, so this one op waits."""
    rt = x.runtime
    _check_dims("nonzero", x.shape)
    shape = x.shape or (1,)
    strides = x.strides or (0,)
    n = numel(shape)
    nblocks = max(1, -(-n // NONZERO_BLOCK))
    dt = x.dtype.name
    make = lambda: _nonzero_source(dt)
    counts = rt.empty((nblocks,), D.int64)
    head = (np.int64(n), np.int64(nblocks), np.int32(len(shape)), codegen.long8(shape),
            codegen.strides8(strides), x.buffer, np.int64(x.offset))
    if n:
        rt.launch(rt.kernel(("nonzero", dt), make, "count"), nblocks, *head, counts.buffer,
                  local=1)
        host = rt.to_host(counts)
    else:
        host = np.zeros(nblocks, np.int64)
    total = int(host.sum())
    out = rt.empty((total, x.ndim), D.int64)
    if total and x.ndim:
        starts = rt.from_host(np.concatenate([[0], np.cumsum(host)[:-1]]).astype(np.int64),
                              D.int64)
        rt.launch(rt.kernel(("nonzero", dt), make, "write"), nblocks, *head, starts.buffer,
                  out.buffer, local=1)
    return out


def table() -> dict:
    return {"take": take, "gather": gather, "scatter_add": scatter_add,
            "index_add": index_add, "index_put": index_put, "nonzero": nonzero}

