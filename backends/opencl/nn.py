"""unfold (im2col) and fold (col2im), no atomics: one work-item per output element on GPUs,
one per output row on CPU devices (PoCL: index arithmetic per element cost ~10x).

fold gathers, for each output pixel, the patch entries that cover it, in the order the CPU
backend adds them, so both give the same floating-point sums.
"""
from __future__ import annotations

import numpy as np

from .codegen import COMPUTE, CTYPE
from .runtime import CLArray

_PARAMS = ("long C, long H, long W, long kh, long kw, long dh, long dw, long ph, long pw, "
           "long sh, long sw, long oh, long ow")


def _unfold_source(dt: str) -> str:
    t = CTYPE[dt]
    return f"""
__kernel void unfold(long n, {_PARAMS}, long4 st, __global const {t}* x, long xo,
                     __global {t}* out) {{
  long g = get_global_id(0);
  if (g >= n) return;
  long L = oh * ow, kk = kh * kw;
  long l = g % L, r = g / L;
  long ckk = r % (C * kk), b = r / (C * kk);
  long c = ckk / kk, k = ckk % kk;
  long y = (l / ow) * sh - ph + (k / kw) * dh;
  long z = (l % ow) * sw - pw + (k % kw) * dw;
  out[g] = (y >= 0 && y < H && z >= 0 && z < W)
           ? x[xo + b * st.s0 + c * st.s1 + y * st.s2 + z * st.s3] : ({t})0;
}}
"""


def _unfold_rows_body(t: str) -> str:
    """unfold of output row (oy, r = b * C*kh*kw + ckk) of `out`, from image `x`: index
    arithmetic once per row, then a plain loop along the row (per-element division ran at
    6 ns an element)."""
    return f"""if (oy >= oh || r * oh * ow >= n) return;
  long kk = kh * kw, ckk_n = C * kk;
  long b = r / ckk_n, ckk = r - b * ckk_n;
  long c = ckk / kk, k = ckk - c * kk;
  long ki = k / kw, kj = k - ki * kw;
  long y = oy * sh - ph + ki * dh;
  __global {t}* dst = out + (r * oh + oy) * ow;
  if (y < 0 || y >= H) {{
    for (long ox = 0; ox < ow; ox++) dst[ox] = ({t})0;
    return;
  }}
  __global const {t}* src = x + xo + b * st.s0 + c * st.s1 + y * st.s2;
  long z0 = kj * dw - pw;
  for (long ox = 0; ox < ow; ox++) {{
    long z = z0 + ox * sw;
    dst[ox] = (z >= 0 && z < W) ? src[z * st.s3] : ({t})0;
  }}"""


def _rows_source(dt: str) -> str:
    """`conv_rows`: unfold (fold 0) and fold (fold 1, from columns `x`) with one work-item
    per output row (CPU devices), one kernel: PoCL compiles each kernel at its first launch
    (~0.1 s of CPU, nearly all fixed), and a convolution's first step meets both (its
    forward and its input's gradient). The same arguments; the same code per work-item.
    Each way's row is a function kept out of line (one call a row): inlined, their loops
    made that compile ~0.21 s of CPU."""
    t, c = CTYPE[dt], COMPUTE[dt]
    rest = f"long n, {_PARAMS}, long4 st, __global const {t}* x, long xo, __global {t}* out"
    args = "n, C, H, W, kh, kw, dh, dw, ph, pw, sh, sw, oh, ow, st, x, xo, out"
    return f"""
__attribute__((noinline)) void conv_unfold_row(long oy, long r, {rest}) {{
  {_unfold_rows_body(t)}
}}
__attribute__((noinline)) void conv_fold_row(long y, long r, {rest}) {{
  {_fold_rows_body(t, c)}
}}
__kernel void conv_rows(long n, {_PARAMS}, long4 st, __global const {t}* x, long xo,
                        __global {t}* out, int fold) {{
  long i = get_global_id(0), r = get_global_id(1);
  if (fold)
    conv_fold_row(i, r, {args});
  else
    conv_unfold_row(i, r, {args});
}}
"""


def _fold_sum(c: str) -> str:
    """C code summing into `acc` the patch entries covering output pixel (b, ch, y, z),
    in the order the CPU backend adds them; `base` points at image b's columns."""
    return f"""{c} acc = 0;
    for (long i = 0; i < kh; i++) {{
      long ty = y + ph - i * dh;
      if (ty < 0 || ty % sh) continue;
      long oy = ty / sh;
      if (oy >= oh) continue;
      for (long j = 0; j < kw; j++) {{
        long tz = z + pw - j * dw;
        if (tz < 0) continue;
        long oz = tz;
        if (sw != 1) {{
          if (tz % sw) continue;
          oz = tz / sw;
        }}
        if (oz >= ow) continue;
        acc += ({c})base[((ch * kh + i) * kw + j) * st.s1 + (oy * ow + oz) * st.s2];
      }}
    }}"""


def _fold_source(dt: str) -> str:
    t, c = CTYPE[dt], COMPUTE[dt]
    return f"""
__kernel void fold(long n, {_PARAMS}, long4 st, __global const {t}* cols, long co,
                   __global {t}* out) {{
  long g = get_global_id(0);
  if (g >= n) return;
  long z = g % W, r = g / W;
  long y = r % H; r /= H;
  long ch = r % C, b = r / C;
  __global const {t}* base = cols + co + b * st.s0;
  {_fold_sum(c)}
  out[g] = ({t})acc;
}}
"""


def _fold_rows_body(t: str, c: str) -> str:
    """fold of output row (y, r = b * C + ch), from columns `x`: the same sums in the same
    order as the element kernel above."""
    return f"""if (y >= H || r * H * W >= n) return;
    long ch = r % C, b = r / C;
    __global {t}* dst = out + (r * H + y) * W;
    __global const {t}* base = x + xo + b * st.s0;
    for (long z = 0; z < W; z++) {{
      {_fold_sum(c)}
      dst[z] = ({t})acc;
    }}"""


_ZERO4 = None


def _zero4():
    global _ZERO4
    _ZERO4 = _long4((0, 0, 0, 0))
    return _ZERO4


def _long4(values):
    import pyopencl.cltypes as ct
    return np.array(list(values) + [0] * (4 - len(values)), dtype=np.int64).view(ct.long4)[0]


def _params(c, h, w, kernel_size, dilation, padding, stride, oh, ow):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    return [np.int64(v) for v in (c, h, w, kh, kw, dh, dw, ph, pw, sh, sw, oh, ow)]


def _out_size(size, k, d, p, s):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _run(rt, name, dt, out, rows, planes, params, src: CLArray) -> None:
    """Launch unfold or fold into `out`: on CPU devices one work-item per output row (rows
    of a plane, planes), elsewhere one per output element."""
    args = (np.int64(out.size), *params, _long4(src.strides), src.buffer,
            np.int64(src.offset), out.buffer)
    if rt.is_cpu:
        # PoCL ran the element kernels at ~6 ns an element (index division per element);
        # the row loops are ~3-10x faster
        k = rt.kernel(("conv-rows", dt), lambda: _rows_source(dt), "conv_rows")
        args += (np.int32(name == "fold"),)
        # work-groups of ~64 work-items over rows and planes: one plane a group (16 items
        # for an 8-row image) cost PoCL its per-group overhead thousands of times a launch
        local = min(16 if rows <= 16 else 64, rt.local_size)
        lr = min(local, 1 << max(rows - 1, 0).bit_length())
        lp = max(1, min(planes, local // lr * 4, rt.local_size // lr))
        rt.launch_nd(k, (-(-rows // lr) * lr, -(-planes // lp) * lp), (lr, lp), *args,
                     fresh=True)
    else:
        k = rt.kernel((name, dt), lambda: _SOURCES[name](dt), name)
        rt.launch(k, out.size, *args, fresh=True)


def unfold(x: CLArray, *, kernel_size, dilation, padding, stride) -> CLArray:
    rt = x.runtime
    n, c, h, w = x.shape
    oh, ow = (_out_size(x.shape[2 + i], kernel_size[i], dilation[i], padding[i], stride[i])
              for i in range(2))
    out = rt.empty((n, c * kernel_size[0] * kernel_size[1], oh * ow), x.dtype)
    if out.size:
        _run(rt, "unfold", x.dtype.name, out, oh, n * out.shape[1],
             _params(c, h, w, kernel_size, dilation, padding, stride, oh, ow), x)
    return out


def fold(cols: CLArray, *, output_size, kernel_size, dilation, padding, stride) -> CLArray:
    rt = cols.runtime
    h, w = output_size
    kk = kernel_size[0] * kernel_size[1]
    n, c = cols.shape[0], cols.shape[1] // kk
    oh, ow = (_out_size(output_size[i], kernel_size[i], dilation[i], padding[i], stride[i])
              for i in range(2))
    out = rt.empty((n, c, h, w), cols.dtype)
    if out.size:
        _run(rt, "fold", cols.dtype.name, out, h, n * c,
             _params(c, h, w, kernel_size, dilation, padding, stride, oh, ow), cols)
    return out


# -- max_pool2d: one kernel each way (decomposed, it was unfold, argmax, gather and, for the
# gradient, scatter_add and fold: ten launches and an index check) ---------------------------

_POOL_PARAMS = ("long C, long H, long W, long kh, long kw, long sh, long sw, long ph, "
                "long pw, long dh, long dw, long oh, long ow")


def _lowest(dt: str) -> str:
    """The padding of a max-pool, as the CPU backend's: -inf, or the dtype's minimum."""
    if dt in ("float16", "float32", "float64"):
        return "-INFINITY"
    if dt in ("bool", "uint8"):
        return "0"
    return f"({CTYPE[dt]})({int(np.iinfo(np.dtype(dt)).min) + 1}L - 1L)"


def _pool_tap(t: str, c: str, dt: str) -> str:
    """C code setting `v` to tap (i, j) of window (oy, ox) of plane `src` (padding: the
    lowest value)."""
    return f"""long py = oy * sh - ph + i * dh, px = ox * sw - pw + j * dw;
      {c} v = (py >= 0 && py < H && px >= 0 && px < W) ? ({c})src[py * xs.s2 + px * xs.s3]
              : ({c}){_lowest(dt)};"""


def _max_pool_source(dt: str) -> str:
    """`max_pool_pair`: the forward max (grad 0: into `out`) and the gradient for disjoint
    windows (grad 1: _max_pool_windows_body) in one kernel, one work-item per window:
    PoCL compiles each kernel at its first launch (~0.1 s of CPU nearly all fixed), and a
    network that pools meets both in its first step."""
    t, c = CTYPE[dt], COMPUTE[dt]
    # NaN wins and stays, as NumPy's maximum (the CPU backend) and PyTorch propagate it
    better = "(v > m || v != v) && m == m" if dt in ("float16", "float32", "float64") \
        else "v > m"
    return f"""
__kernel void max_pool_pair(long n, {_POOL_PARAMS}, long4 xs, __global const {t}* x,
                            long xo, long4 gs, __global const {t}* g, long go, long4 os,
                            __global {t}* out, long oo, __global {t}* dx, int grad) {{
  long ox = get_global_id(0), oy = get_global_id(1), r = get_global_id(2);
  if (ox >= ow || oy >= oh || r * oh * ow >= n) return;
  long b = r / C, ch = r - b * C;
  __global const {t}* src = x + xo + b * xs.s0 + ch * xs.s1;
  if (!grad) {{
    {c} m = ({c}){_lowest(dt)};
    for (long i = 0; i < kh; i++)
      for (long j = 0; j < kw; j++) {{
        {_pool_tap(t, c, dt)}
        if ({better}) m = v;
      }}
    out[(r * oh + oy) * ow + ox] = ({t})m;
    return;
  }}
  {_max_pool_windows_body(t, c, dt)}
}}
"""


def _max_pool_backward_source(dt: str) -> str:
    """The gradient of each input element: the sum, over the windows holding it in the
    order of its tap in them, of g * (this tap is the window's first maximum): the CPU
    backend's sums, in its order (disjoint windows write that product, not 0 + it)."""
    t, c = CTYPE[dt], COMPUTE[dt]
    return f"""
__kernel void max_pool_backward(long n, {_POOL_PARAMS}, long disjoint, long4 xs,
                                __global const {t}* x, long xo, long4 gs,
                                __global const {t}* g, long go, long4 os,
                                __global const {t}* out, long oo, __global {t}* dx) {{
  long z = get_global_id(0), y = get_global_id(1), r = get_global_id(2);
  if (z >= W || y >= H || r * H * W >= n) return;
  long b = r / C, ch = r - b * C;
  __global const {t}* src = x + xo + b * xs.s0 + ch * xs.s1;
  {c} acc = 0;
  for (long a = 0; a < kh; a++) {{
    long ty = y + ph - a * dh;
    if (ty < 0 || ty % sh) continue;
    long wy = ty / sh;
    if (wy >= oh) continue;
    for (long e = 0; e < kw; e++) {{
      long tz = z + pw - e * dw;
      if (tz < 0 || tz % sw) continue;
      long wz = tz / sw;
      if (wz >= ow) continue;
      {c} best = ({c})out[oo + b * os.s0 + ch * os.s1 + wy * os.s2 + wz * os.s3];
      long first = -1, oy = wy, ox = wz;
      for (long i = 0; i < kh && first < 0; i++)
        for (long j = 0; j < kw; j++) {{
          {_pool_tap(t, c, dt)}
          if (v == best) {{ first = i * kw + j; break; }}
        }}
      {c} gv = ({c})g[go + b * gs.s0 + ch * gs.s1 + wy * gs.s2 + wz * gs.s3];
      {c} part = gv * ({c})(first == a * kw + e);
      acc = disjoint ? part : acc + part;
    }}
  }}
  dx[(r * H + y) * W + z] = ({t})acc;
}}
"""


def _max_pool_windows_body(t: str, c: str, dt: str) -> str:
    """The gradient for disjoint windows, one work-item per window: g goes to the window's
    first maximum, g * 0 to its other taps (as the CPU backend writes g * hit), branch-free
    (PoCL vectorises across work-items only where control flow does not diverge)."""
    return f"""{c} best = ({c})out[oo + b * os.s0 + ch * os.s1 + oy * os.s2 + ox * os.s3];
  {c} gv = ({c})g[go + b * gs.s0 + ch * gs.s1 + oy * gs.s2 + ox * gs.s3];
  long first = -1;
  for (long i = 0; i < kh; i++)
    for (long j = 0; j < kw; j++) {{
      {_pool_tap(t, c, dt)}
      first = (first < 0 && v == best) ? i * kw + j : first;
    }}
  __global {t}* plane = dx + r * H * W;
  for (long i = 0; i < kh; i++)
    for (long j = 0; j < kw; j++) {{
      long py = oy * sh - ph + i * dh, px = ox * sw - pw + j * dw;
      if (py >= 0 && py < H && px >= 0 && px < W)
        plane[py * W + px] = ({t})(gv * ({c})(first == i * kw + j));
    }}"""


def _pool_args(x: CLArray, kernel_size, stride, padding, dilation, oh, ow):
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    return [np.int64(v) for v in (c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)]


def _pool_out(x, kernel_size, stride, padding, dilation, extra):
    return tuple((x.shape[2 + i] + 2 * padding[i] + extra[i] - dilation[i] *
                  (kernel_size[i] - 1) - 1) // stride[i] + 1 for i in range(2))


def _launch3(rt, kernel, a: int, b: int, planes: int, *args) -> None:
    """A launch over (a, b, planes) in work-groups of ~64 work-items (PoCL, left to choose,
    ran groups of a few items: 8 ns an element for a max over 4)."""
    la = min(16, 1 << max(a - 1, 0).bit_length())
    lb = min(1 << max(b - 1, 0).bit_length(), max(1, 64 // la))
    lp = max(1, min(planes, 64 // (la * lb)))
    rt.launch_nd(kernel, (-(-a // la) * la, -(-b // lb) * lb, -(-planes // lp) * lp),
                 (la, lb, lp), *args, fresh=True)


def max_pool2d(x: CLArray, *, kernel_size, stride, padding, dilation, extra) -> CLArray:
    rt = x.runtime
    n, c = x.shape[:2]
    oh, ow = _pool_out(x, kernel_size, stride, padding, dilation, extra)
    out = rt.empty((n, c, oh, ow), x.dtype)
    if out.size:
        dt = x.dtype.name
        k = rt.kernel(("max_pool", dt), lambda: _max_pool_source(dt), "max_pool_pair")
        zero4, zero = _ZERO4 or _zero4(), np.int64(0)
        _launch3(rt, k, ow, oh, n * c, np.int64(out.size),
                 *_pool_args(x, kernel_size, stride, padding, dilation, oh, ow),
                 _long4(x.strides), x.buffer, np.int64(x.offset), zero4, x.buffer, zero,
                 zero4, out.buffer, zero, out.buffer, np.int32(0))
    return out


def max_pool2d_backward(g: CLArray, x: CLArray, out: CLArray, *, kernel_size, stride,
                        padding, dilation, extra) -> CLArray:
    rt = x.runtime
    n, c, h, w = x.shape
    oh, ow = out.shape[2:]
    (kh, kw), (sh, sw), (dh, dw), (ph, pw) = kernel_size, stride, dilation, padding
    disjoint = sh >= dh * (kh - 1) + 1 and sw >= dw * (kw - 1) + 1
    if disjoint and x.size and out.size:
        # windows that tile the input write every element; otherwise zeros first
        tiled = dh == dw == 1 and (sh, sw) == (kh, kw) and oh * sh - ph >= h and \
            ow * sw - pw >= w
        if tiled:
            dx = rt.empty(x.shape, g.dtype)
        else:
            from .elementwise import full
            dx = full(rt, shape=x.shape, value=0, dtype=g.dtype)
            dx.buffer                       # noqa: B018  (the zeros run before the writes)
        dt = x.dtype.name
        k = rt.kernel(("max_pool", dt), lambda: _max_pool_source(dt), "max_pool_pair")
        _launch3(rt, k, ow, oh, n * c, np.int64(out.size),
                 *_pool_args(x, kernel_size, stride, padding, dilation, oh, ow),
                 _long4(x.strides), x.buffer, np.int64(x.offset), _long4(g.strides),
                 g.buffer, np.int64(g.offset), _long4(out.strides), out.buffer,
                 np.int64(out.offset), dx.buffer, np.int32(1))
        return dx
    dx = rt.empty(x.shape, g.dtype)
    if dx.size:
        dt = x.dtype.name
        k = rt.kernel(("max_pool_backward", dt), lambda: _max_pool_backward_source(dt),
                      "max_pool_backward")
        _launch3(rt, k, w, h, n * c, np.int64(dx.size),
                 *_pool_args(x, kernel_size, stride, padding, dilation, oh, ow),
                 np.int64(disjoint), _long4(x.strides), x.buffer, np.int64(x.offset),
                 _long4(g.strides), g.buffer, np.int64(g.offset), _long4(out.strides),
                 out.buffer, np.int64(out.offset), dx.buffer)
    return dx


_SOURCES = {"unfold": _unfold_source, "fold": _fold_source, "rows": _rows_source}


def table() -> dict:
    return {"unfold": unfold, "fold": fold, "max_pool2d": max_pool2d,
            "max_pool2d_backward": max_pool2d_backward}
