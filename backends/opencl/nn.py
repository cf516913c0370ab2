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


def _unfold_rows_source(dt: str) -> str:
    t = CTYPE[dt]
    return f"""
__kernel void unfold_rows(long n, {_PARAMS}, long4 st, __global const {t}* x, long xo,
                     __global {t}* out) {{
  /* one work-item per output row (oy, b * C*kh*kw + ckk): index arithmetic once per row,
     then a plain loop along the row (per-element division ran at 6 ns an element) */
  long oy = get_global_id(0);
  if (oy >= oh) return;
  long r = get_global_id(1);
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
  }}
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


def _fold_rows_source(dt: str) -> str:
    """fold with one work-item per output row (CPU devices), the same sums in the same
    order as the element kernel above."""
    t, c = CTYPE[dt], COMPUTE[dt]
    return f"""
__kernel void fold_rows(long n, {_PARAMS}, long4 st, __global const {t}* cols, long co,
                        __global {t}* out) {{
  long y = get_global_id(0);
  if (y >= H) return;
  long r = get_global_id(1);
  long ch = r % C, b = r / C;
  __global {t}* dst = out + (r * H + y) * W;
  __global const {t}* base = cols + co + b * st.s0;
  for (long z = 0; z < W; z++) {{
    {_fold_sum(c)}
    dst[z] = ({t})acc;
  }}
}}
"""


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
        k = rt.kernel((f"{name}-rows", dt), lambda: _SOURCES[f"{name}_rows"](dt),
                      f"{name}_rows")
        local = min(16 if rows <= 16 else 64, rt.local_size)
        rt.launch_nd(k, (-(-rows // local) * local, planes), (local, 1), *args, fresh=True)
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


_SOURCES = {"unfold": _unfold_source, "unfold_rows": _unfold_rows_source,
            "fold": _fold_source, "fold_rows": _fold_rows_source}


def table() -> dict:
    return {"unfold": unfold, "fold": fold}
