"""Batched matmul with a kernel structure chosen per device by timing once.

Candidates: `packed` (A and B copied into contiguous panels; each work-item computes an
RM x RN block of C in float16 vector registers, written with plain `a*b + c` and vector
pointer casts: the structure that lets PoCL's CPU compiler reach NumPy's speed, since it
does not vectorise across work-items once a kernel loops), and `tiled` (local-memory tiles
with barriers: the classic GPU structure).  `naive` (one work-item per output element) serves
small products and dtypes other than float32.

Timing the candidates costs seconds (a program build and PoCL compiles per candidate, and
the 512^3 products themselves: ~8 s of CPU on a 2-core EPYC, `tiled` alone ~5 s), which a
short run never wins back (the packed shapes differ by 1.2-2.5x). So a device with no saved
choice runs DEFAULT_CPU (CPU devices) or DEFAULT_GPU until its float32 products have added
up to EMBER_OPENCL_TUNE_AFTER multiply-adds (default TUNE_AFTER, ~40 s of products at
6-7 G multiply-adds/s: the point where a 20% better structure has paid for the timing;
0 = time at the first product, as before), then times once and saves the winner. On a CPU
device `tiled` is not timed: local-memory barriers on PoCL's CPU device ran it 50x slower
than `packed` (1.02 s against 0.020 s for 512^3).
"""
from __future__ import annotations

import os
import time

import numpy as np
from ember.backend import autotune_requested

from . import codegen
from .codegen import COMPUTE, CTYPE
from .copies import assign
from .runtime import CLArray, max_dims_error, numel

TILE = 16
# (rows, columns) of C per work-item for the packed kernel; columns are float16 vectors.
# 8x32 suits 32 vector registers (AVX-512), 6x16 and 4x16 suit 16 (AVX2): timing decides.
PACKED_SHAPES = ((8, 32), (4, 32), (8, 16), (6, 16), (4, 16))
VECTOR_PACK = (4, 8, 16)   # panel widths with an OpenCL vector type: pack_any moves whole
                           # vectors for these
SMALL = 64 ** 3            # below this many multiply-adds one plain launch is fastest
PACK_ANY = 1 << 17         # panels of at most this many floats: pack_any (one kernel)
TUNE_SIZE = 512
TUNE_AFTER = 1 << 38       # float32 multiply-adds run before the structures are timed
DEFAULT_CPU = "packed6x16"  # the untimed choice: 16 vector registers (AVX2) suit it
DEFAULT_GPU = "tiled"


def tune_after() -> int:
    """EMBER_OPENCL_TUNE_AFTER: float32 multiply-adds of matmul a device runs with the
    default structure before timing the candidates (0: at the first product)."""
    raw = os.environ.get("EMBER_OPENCL_TUNE_AFTER", "").strip().lower()
    if raw in ("never", "inf", "off"):
        return 1 << 62
    try:
        return max(0, int(float(raw))) if raw else TUNE_AFTER
    except ValueError:
        return TUNE_AFTER

_HEAD = ("int nb, long8 bshape, long8 xb, long8 yb, long xs0, long xs1, long ys0, long ys1, "
         "__global const {t}* x, long xo, __global const {t}* y, long yo, __global {t}* out")


def _naive_source(dt: str) -> str:
    t, c = CTYPE[dt], COMPUTE[dt]
    return f"""
__kernel void naive(long n, long M, long N, long K, {_HEAD.format(t=t)}) {{
  long g = get_global_id(0);
  if (g >= n) return;
  long j = g % N, r = g / N;
  long i = r % M, b = r / M;
  long px = xo, py = yo;
  {codegen.unravel("b", "bshape", "nb", [("px", "xb"), ("py", "yb")])}
  px += i * xs0; py += j * ys1;
  {c} acc = 0;
  for (long k = 0; k < K; k++) acc += ({c})x[px + k * xs1] * ({c})y[py + k * ys0];
  out[g] = ({t})acc;
}}
"""


def _tiled_source(dt: str) -> str:
    t, c = CTYPE[dt], COMPUTE[dt]
    return f"""
__kernel __attribute__((reqd_work_group_size({TILE}, {TILE}, 1)))
void tiled(long M, long N, long K, {_HEAD.format(t=t)}) {{
  __local {c} As[{TILE}][{TILE} + 1];
  __local {c} Bs[{TILE}][{TILE} + 1];
  int lj = get_local_id(0), li = get_local_id(1);
  long j = get_global_id(0), i = get_global_id(1), b = get_global_id(2);
  long px = xo, py = yo;
  {codegen.unravel("b", "bshape", "nb", [("px", "xb"), ("py", "yb")])}
  {c} acc = 0;
  for (long k0 = 0; k0 < K; k0 += {TILE}) {{
    As[li][lj] = (i < M && k0 + lj < K) ? ({c})x[px + i * xs0 + (k0 + lj) * xs1] : 0;
    Bs[li][lj] = (j < N && k0 + li < K) ? ({c})y[py + (k0 + li) * ys0 + j * ys1] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < {TILE}; k++) acc += As[li][k] * Bs[k][lj];
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  if (i < M && j < N) out[(b * M + i) * N + j] = ({t})acc;
}}
"""


def pack_any_source() -> str:
    """`pack_any`: pack_kernel with the block's rows `r` an argument, one kernel for every
    panel width where each pack{r} (and the vector one B's panels had) cost PoCL a compile
    at its first launch (~0.15-0.2 s of CPU each; a product met three). `vec`: for a
    source whose panel rows are contiguous (s_row == 1) and aligned to r floats (r in
    VECTOR_PACK), a whole block moves as one vector (one by one, PoCL turns the moves
    into gathers: 1.8 ms for B of a 1024 product); as fast as a kernel of a constant r at
    every size measured. The element loop is as fast as pack{r}'s for panels of up to
    PACK_ANY floats; larger ones run pack{r}, whose loop over a constant r was up to 2x
    faster. A copy: the same bits."""
    vec = " ".join(f"case {r}: *(__global float{r}*)dst = "
                   f"*(__global const float{r}*)(x + q + blk * {r}); return;"
                   for r in VECTOR_PACK)
    return f"""
__kernel void pack_any(long rows, long K, int nb, long8 bshape, long8 bst, long s_row,
    long s_k, __global const float* x, long xo, __global float* p, int r, int vec) {{
  long k = get_global_id(0), blk = get_global_id(1), b = get_global_id(2);
  if (k >= K) return;
  long q = xo + k * s_k;
  {codegen.unravel("b", "bshape", "nb", [("q", "bst")])}
  __global float* dst = p + ((b * get_global_size(1) + blk) * K + k) * r;
  if (vec && blk * r + r <= rows) {{
    switch (r) {{ {vec} }}
  }}
  for (int e = 0; e < r; e++) {{
    long row = blk * r + e;
    dst[e] = row < rows ? x[q + row * s_row] : 0.0f;
  }}
}}
"""


def pack_kernel(r: int) -> str:
    """Copy rows of x into panels [batch][row block][k][r], zero-padding the last block.
    One work-item per (k, block): r values each, no division on the way (large panels
    that pack_any's vector moves do not serve)."""
    return f"""
__kernel void pack{r}(long rows, long K, int nb, long8 bshape,
    long8 bst, long s_row, long s_k, __global const float* x, long xo, __global float* p) {{
  long k = get_global_id(0), blk = get_global_id(1), b = get_global_id(2);
  if (k >= K) return;
  long q = xo + k * s_k;
  {codegen.unravel("b", "bshape", "nb", [("q", "bst")])}
  __global float* dst = p + ((b * get_global_size(1) + blk) * K + k) * {r};
  for (int e = 0; e < {r}; e++) {{
    long row = blk * {r} + e;
    dst[e] = row < rows ? x[q + row * s_row] : 0.0f;
  }}
}}
"""


def _packed_source(rm: int, rn: int) -> str:
    nv = rn // 16
    acc = [f"c{r}_{v}" for r in range(rm) for v in range(nv)]
    loads = " ".join(f"float a{r} = a[{r}];" for r in range(rm))
    loads += " " + " ".join(f"float16 b{v} = bp[k * {nv} + {v}];" for v in range(nv))
    fma = "\n    ".join(f"c{r}_{v} += a{r} * b{v};" for r in range(rm) for v in range(nv))
    stores = "\n  ".join(f"*(__global float16*)(c + {r} * ld + {16 * v}) = c{r}_{v};"
                         for r in range(rm) for v in range(nv))
    return f"""
{pack_kernel(rm)}
{pack_kernel(rn) if rn != rm else ""}
__kernel void packed(long K, long ld, long apb, long bpb, long cpb,
                     __global const float* ap, __global const float* bpanels,
                     __global float* cp) {{
  long nbi = get_global_id(0), mb = get_global_id(1), b = get_global_id(2);
  __global const float* a = ap + b * apb + mb * K * {rm};
  __global const float16* bp = (__global const float16*)(bpanels + b * bpb + nbi * K * {rn});
  float16 {", ".join(f"{name} = 0" for name in acc)};
  for (long k = 0; k < K; k++, a += {rm}) {{
    {loads}
    {fma}
  }}
  __global float* c = cp + b * cpb + mb * {rm} * ld + nbi * {rn};
  {stores}
}}
"""


def _batch(x: CLArray, y: CLArray, out_batch):
    """Collapsed batch shape and the batch strides of x, y (0 where broadcast)."""
    def strides(a):
        lead = len(out_batch) - (a.ndim - 2)
        return tuple(0 if i < lead or a.shape[i - lead] == 1 else a.strides[i - lead]
                     for i in range(len(out_batch)))
    shape, (xb, yb) = codegen.collapse(out_batch, [strides(x), strides(y)])
    if len(shape) > codegen.MAXDIM:
        raise max_dims_error("matmul", shape)
    return shape, xb, yb


def _common(x, y, batch, M, N, K):
    bshape, xb, yb = _batch(x, y, batch)
    return [np.int32(len(bshape)), codegen.long8(bshape), codegen.strides8(xb),
            codegen.strides8(yb), np.int64(x.strides[-2]), np.int64(x.strides[-1]),
            np.int64(y.strides[-2]), np.int64(y.strides[-1]), x.buffer, np.int64(x.offset),
            y.buffer, np.int64(y.offset)]


def _naive(x, y, out, batch, M, N, K):
    rt, dt = x.runtime, x.dtype.name
    k = rt.kernel(("matmul-naive", dt), lambda: _naive_source(dt), "naive")
    rt.launch(k, out.size, np.int64(out.size), np.int64(M), np.int64(N), np.int64(K),
              *_common(x, y, batch, M, N, K), out.buffer, local=64)


def _tiled(x, y, out, batch, M, N, K):
    rt, dt = x.runtime, x.dtype.name
    k = rt.kernel(("matmul-tiled", dt), lambda: _tiled_source(dt), "tiled")
    nbatch = numel(batch)
    gsize = (-(-N // TILE) * TILE, -(-M // TILE) * TILE, nbatch)
    rt.launch_nd(k, gsize, (TILE, TILE, 1), np.int64(M), np.int64(N), np.int64(K),
                 *_common(x, y, batch, M, N, K), out.buffer)


def _pack(rt, key, make, a: CLArray, batch, rows, K, R, s_row, s_k, lead_dims,
          vector_ok=False):
    """Panels of `a` ([batch][rows/R][K][R]); one copy when a is broadcast over the batch.
    `vector_ok`: B's panels, moved as whole vectors where the layout allows (pack_any)."""
    from ember import dtypes as D
    lead = len(batch) - lead_dims
    bst = tuple(0 if i < lead or a.shape[i - lead] == 1 else a.strides[i - lead]
                for i in range(len(batch)))
    shared = all(s == 0 for s in bst)
    pbatch = (1,) if shared else batch
    bshape, (bst,) = codegen.collapse(pbatch, [(0,) * len(pbatch) if shared else bst])
    nblk = -(-rows // R)
    panels = rt.empty((numel(pbatch), nblk, K, R), D.float32)
    tail = ()
    vector = (vector_ok and R in VECTOR_PACK and s_row == 1 and a.offset % R == 0
              and s_k % R == 0 and all(s % R == 0 for s in bst))
    if vector or panels.size <= PACK_ANY:
        kernel = rt.kernel(("matmul-pack",), pack_any_source, "pack_any")
        tail = (np.int32(R), np.int32(vector))
    else:
        kernel = rt.kernel(key, make, f"pack{R}")
    rt.launch_nd(kernel, (-(-K // 64) * 64, nblk, numel(pbatch)), (64, 1, 1),
                 np.int64(rows), np.int64(K), np.int32(len(bshape)), codegen.long8(bshape),
                 codegen.strides8(bst), np.int64(s_row), np.int64(s_k), a.buffer,
                 np.int64(a.offset), panels.buffer, *tail)
    return panels, (0 if shared else nblk * K * R)


def _packed(x, y, out, batch, M, N, K, shape=(8, 32)):
    rt = x.runtime
    rm, rn = shape
    key = ("matmul-packed", rm, rn)
    make = lambda: _packed_source(rm, rn)
    ap, apb = _pack(rt, key, make, x, batch, M, K, rm,
                    x.strides[-2], x.strides[-1], x.ndim - 2)
    # B's panels run along columns: rows of the panel are y's columns
    bp, bpb = _pack(rt, key, make, y, batch, N, K, rn,
                    y.strides[-1], y.strides[-2], y.ndim - 2, vector_ok=True)
    mb, nbl = -(-M // rm), -(-N // rn)
    nbatch = numel(batch)
    exact = M % rm == 0 and N % rn == 0
    cp = out if exact else rt.empty((nbatch, mb * rm, nbl * rn), out.dtype)
    ld = nbl * rn
    rt.launch_nd(rt.kernel(key, make, "packed"), (nbl, mb, nbatch), (1, 1, 1), np.int64(K),
                 np.int64(ld), np.int64(apb), np.int64(bpb), np.int64(mb * rm * ld), ap.buffer,
                 bp.buffer, cp.buffer)
    if not exact:
        assign(out, cp.view(out.shape, _restride(out.shape, cp.strides), 0))


def _broadcast(a, b) -> tuple:
    nd = max(len(a), len(b))
    a, b = (1,) * (nd - len(a)) + tuple(a), (1,) * (nd - len(b)) + tuple(b)
    return tuple(m if n == 1 else n for m, n in zip(a, b))


def _restride(shape, cstrides):
    """Strides of the padded (batch, Mp, Np) result seen with out's (batch..., M, N) shape."""
    bstride, rstride = cstrides[0], cstrides[1]
    nb = len(shape) - 2
    strides, step = [], bstride
    for n in reversed(shape[:nb]):
        strides.append(step)
        step *= n
    return tuple(reversed(strides)) + (rstride, 1)


def _packed_variant(shape):
    def run(*args):
        _packed(*args, shape=shape)
    return run


VARIANTS = {"naive": _naive, "tiled": _tiled}
VARIANTS.update({f"packed{r}x{c}": _packed_variant((r, c)) for r, c in PACKED_SHAPES})


def _choose(rt, work: int = 0) -> str:
    """The fastest float32 structure on this device, timed once on a mid-size product (and
    saved: see tuning.py) once `work` multiply-adds summed over the calls reach
    tune_after(); the default structure until then (see the module docstring)."""
    choice = rt.choices.get("matmul")
    if choice is not None:
        return choice
    cold = rt.choices.get("matmul_cold")
    if cold is None:                        # the first product: a saved choice, if any
        from . import tuning
        saved = tuning.load(rt.device, "matmul", VARIANTS)
        if saved is not None:               # timed by an earlier process on this device
            rt.choices["matmul"], rt.choices["matmul_times"] = saved
            rt.choices["matmul_source"] = "cache"
            return saved[0]
        cold = rt.choices["matmul_cold"] = [0, tune_after()]
    cold[0] += work
    if cold[0] < cold[1]:
        rt.choices["matmul_source"] = "default"
        return DEFAULT_CPU if rt.is_cpu else DEFAULT_GPU
    return _time_choice(rt)


def _time_choice(rt) -> str:
    from ember import dtypes as D

    from . import tuning
    n = TUNE_SIZE
    rng = np.random.default_rng(0)
    a = rt.from_host(rng.standard_normal((n, n), dtype=np.float32), D.float32)
    b = rt.from_host(rng.standard_normal((n, n), dtype=np.float32), D.float32)
    out = rt.empty((n, n), D.float32)
    times = {}
    for name, fn in VARIANTS.items():
        if name == "naive" or (name == "tiled" and _no_tiled(rt)):
            continue
        fn(a, b, out, (), n, n, n)          # builds and warms up
        rt.synchronize()
        best = float("inf")
        for _ in range(3):                  # the best of three: other load only slows down
            start = time.perf_counter()
            fn(a, b, out, (), n, n, n)
            rt.synchronize()
            best = min(best, time.perf_counter() - start)
        times[name] = best
    choice = min(times, key=times.get)
    rt.choices["matmul"] = choice
    rt.choices["matmul_times"] = times
    rt.choices["matmul_source"] = "timed"
    tuning.store(rt.device, "matmul", choice, times)
    return choice


def _no_tiled(rt) -> bool:
    """`tiled` is not a candidate: too large for the device, or a CPU device (see the module
    docstring)."""
    return rt.is_cpu or rt.device.max_work_group_size < TILE * TILE


def _choose_for(rt, x, y, out, batch, M, N, K) -> str:
    """This product shape's own structure, where ember.compile(mode="max-autotune") timed
    one (and times it now if a capture under backend.autotuning() meets a new shape); the
    device-wide choice otherwise."""
    key = ("matmul", M, N, K, numel(batch))
    choice = rt.choices.get(key)
    if choice is not None:
        return choice
    if not autotune_requested():
        return _choose(rt, numel(batch) * M * N * K)
    times = {}
    for name, fn in VARIANTS.items():
        if name == "naive" or (name == "tiled" and rt.device.max_work_group_size < TILE * TILE):
            continue                           # as _choose: naive serves small products
        fn(x, y, out, batch, M, N, K)          # builds and warms up
        rt.synchronize()
        best = float("inf")
        for _ in range(3):                     # the best of three, as _choose
            start = time.perf_counter()
            fn(x, y, out, batch, M, N, K)
            rt.synchronize()
            best = min(best, time.perf_counter() - start)
        times[name] = best
    choice = rt.choices[key] = min(times, key=times.get)
    rt.choices.setdefault("matmul_shapes", {})[key[1:]] = times
    return choice


def matmul(x: CLArray, y: CLArray) -> CLArray:
    rt = x.runtime
    vec_x, vec_y = x.ndim == 1, y.ndim == 1
    if vec_x:
        x = x.view((1,) + x.shape, (0,) + x.strides, x.offset)
    if vec_y:
        y = y.view(y.shape + (1,), y.strides + (0,), y.offset)
    M, K = x.shape[-2:]
    N = y.shape[-1]
    batch = _broadcast(x.shape[:-2], y.shape[:-2])
    if len(batch) and x.ndim > 2 and y.ndim == 2 and x.is_contiguous:
        # (batch..., M, K) @ (K, N): one (batch*M, K) @ (K, N) product, better blocked
        rows = numel(batch) * M
        flat = matmul(x.view((rows, K), (K, 1), x.offset), y)
        out = flat.view(batch + (M, N), None, flat.offset)
    else:
        out = rt.empty(batch + (M, N), x.dtype)
        if out.size and K == 0:
            assign(out, 0)
        elif out.size:
            if x.dtype.name == "float32" and numel(batch) * M * N * K >= SMALL:
                VARIANTS[_choose_for(rt, x, y, out, batch, M, N, K)](x, y, out, batch, M, N, K)
            elif (x.dtype.name != "float32" and not rt.is_cpu and M * N * K >= SMALL
                  and rt.device.max_work_group_size >= TILE * TILE):
                _tiled(x, y, out, batch, M, N, K)
            else:
                _naive(x, y, out, batch, M, N, K)
    shape = out.shape
    if vec_x:
        shape = shape[:-2] + shape[-1:]
    if vec_y:
        shape = shape[:-1]
    return out.view(shape, None, out.offset) if shape != out.shape else out


def table() -> dict:
    return {"matmul": matmul}

