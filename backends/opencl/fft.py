"""FFT on the device: a mixed-radix Stockham FFT (radices 8, 4, 2, 3, 5, 7) and Bluestein's
chirp-z transform for lengths with another prime factor, in OpenCL C.

Layout.  Every transform works on a contiguous complex working copy (float2 / double2,
interleaved), shape (outer, n, inner): the lines of one dim are read with element stride
`inner`, so no transpose is needed for any dim.  A 1-D pass of radix R has n / R
work-items per line; work-item i (k = i mod p, p the product of the radices already
applied) reads the R values i + r n/R, twiddles value r by w^(r k n/(p R)), does an R-point
DFT and writes value r to (i - k) R + k + r p (Stockham's autosort: natural order in and
out, ping-pong between two buffers, one launch per pass).  The twiddles come from one table
of the n roots of unity per length, computed on the host in float64.

On a GPU, contiguous lines of 16 .. 4096 points take one kernel instead: one work-group
per line runs every pass in local memory (Plan.fits_locally says when).

Lengths whose factors are not all in {2, 3, 5, 7} go through Bluestein: x_m w_m (w_m =
exp(-i pi m^2 / n)) zero-padded to a length M >= 2n - 1 with small factors, convolved with
conj(w) by two Stockham FFTs of length M and a pointwise product with the (cached) FFT of
the chirp, then multiplied by w_k again.  The chirp is computed with m^2 mod 2n in integers,
so it stays exact for long lines.

Real transforms: r2c along the tensor's last dim with an even length n packs the real
values in pairs (x[2m] + i x[2m+1]) into one complex FFT of length n/2 and unpacks the
n/2 + 1 values (half the work; the two-sided output is then extended Hermitian-ly);
otherwise it copies the real input into the complex working copy (imaginary part 0),
transforms the last dim, keeps its first n/2 + 1 values; then the other dims run on the
halved array; c2r transforms the other dims, extends the last dim Hermitian-ly to
its full length (X[n - k] = conj(X[k])), transforms it and keeps the real part (the
imaginary parts of X[0] and X[n/2] drop out, as in NumPy's and PyTorch's c2r).

Normalisation ("none", "by_root_n", "by_n", PyTorch's fft_norm_mode) is folded into the
last pass.  Kernel names of the table: fft_c2c, fft_r2c, fft_c2r (core/ops/fft.py).
"""
from __future__ import annotations

import math
import weakref

import numpy as np
from ember import dtypes as D

from .codegen import MAXDIM, collapse, long8, strides8, unravel
from .runtime import CLArray, max_dims_error

RADICES = (8, 4, 2, 3, 5, 7)
_TABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # runtime -> {key: buf}


def factor(n: int) -> list | None:
    """Radices (from RADICES) whose product is n, or None when n has another prime factor."""
    out = []
    for r in (4, 2, 3, 5, 7):
        while n % r == 0 and n > 1:
            out.append(r)
            n //= r
    if n != 1:
        return None
    # two radix-4 passes and a radix-2 one make radix-8 ones where they can (fewer passes)
    fours, twos = out.count(4), out.count(2)
    rest = [r for r in out if r not in (2, 4)]
    power = 4 ** fours * 2 ** twos
    pows = []
    while power % 8 == 0:
        pows.append(8)
        power //= 8
    while power % 4 == 0:
        pows.append(4)
        power //= 4
    if power == 2:
        pows.append(2)
    return pows + rest


def smooth_at_least(n: int) -> int:
    """The smallest 2,3,5,7-smooth number >= n (Bluestein's padded length)."""
    m = n
    while factor(m) is None:
        m += 1
    return m


# --- OpenCL C -------------------------------------------------------------------------

def _dft_source(radix: int, sign: int, t: str) -> str:
    """C statements: v0..v{R-1} = DFT_R(u0..u{R-1}) with exp(sign 2 pi i / R) as root;
    multiplications by 1, -1, i, -i are written as additions (exact, nan-safe)."""
    lines = []
    for m in range(radix):
        re_terms, im_terms = [], []
        for r in range(radix):
            e = (r * m) % radix
            ang = sign * 2.0 * math.pi * e / radix
            c, s = math.cos(ang), math.sin(ang)
            u = f"u{r}"
            if e == 0:
                re_terms.append(f"+{u}.x")
                im_terms.append(f"+{u}.y")
            elif 4 * e == 2 * radix:                         # -1
                re_terms.append(f"-{u}.x")
                im_terms.append(f"-{u}.y")
            elif 4 * e == radix or 4 * e == 3 * radix:       # +-i
                si = 1 if s > 0 else -1
                re_terms.append(f"{'-' if si > 0 else '+'}{u}.y")
                im_terms.append(f"{'+' if si > 0 else '-'}{u}.x")
            else:
                re_terms.append(f"+(({t}){c!r} * {u}.x - ({t}){s!r} * {u}.y)")
                im_terms.append(f"+(({t}){c!r} * {u}.y + ({t}){s!r} * {u}.x)")
        lines.append(f"{t}2 v{m} = ({t}2)({' '.join(re_terms)}, {' '.join(im_terms)});")
    return "\n  ".join(lines)


def _pass_kernel(radix: int, sign: int, t: str, name: str) -> str:
    loads = "\n  ".join(f"{t}2 u{r} = src[base + (i + {r} * q) * inner];" for r in range(radix))
    tw = "\n  ".join(
        f"{{ {t}2 w = tw[{r} * k * twstep]; w.y *= ({t}){-sign}; "
        f"u{r} = ({t}2)(u{r}.x * w.x - u{r}.y * w.y, u{r}.x * w.y + u{r}.y * w.x); }}"
        for r in range(1, radix))
    stores = "\n  ".join(f"dst[base + (j + {r} * p) * inner] = v{r} * scale;"
                         for r in range(radix))
    return f"""
__kernel void {name}(__global const {t}2* src, __global {t}2* dst, __global const {t}2* tw,
                     long n, long inner, long p, long twstep, {t} scale, int lines_first) {{
  long q = n / {radix};
  long i, b;
  if (lines_first) {{ b = get_global_id(0); i = get_global_id(1); }}
  else {{ i = get_global_id(0); b = get_global_id(1); }}
  long outer = b / inner, in_i = b - outer * inner;
  long base = outer * n * inner + in_i;
  long k = i % p;
  {loads}
  {tw}
  {_dft_source(radix, sign, t)}
  long j = (i - k) * {radix} + k;
  {stores}
}}
"""


def _line_source(n: int, radices, sign: int, t: str) -> str:
    """One work-group per line: every pass of an n-point transform in local memory (two
    buffers, ping-pong), one read and one write of global memory per value."""
    body = []
    p, cur, other = 1, "A", "B"
    for radix in radices:
        q = n // radix
        loads = " ".join(f"{t}2 u{r} = {cur}[i + {r * q}];" for r in range(radix))
        tw = " ".join(
            f"{{ {t}2 w = tw[{r} * k * {n // (p * radix)}]; w.y *= ({t}){-sign}; "
            f"u{r} = ({t}2)(u{r}.x * w.x - u{r}.y * w.y, u{r}.x * w.y + u{r}.y * w.x); }}"
            for r in range(1, radix))
        stores = " ".join(f"{other}[j + {r * p}] = v{r};" for r in range(radix))
        body.append(f"""
  for (int i = lid; i < {q}; i += W) {{
    int k = i % {p};
    {loads}
    {tw}
    {_dft_source(radix, sign, t)}
    int j = (i - k) * {radix} + k;
    {stores}
  }}
  barrier(CLK_LOCAL_MEM_FENCE);""")
        p *= radix
        cur, other = other, cur
    return f"""
__kernel void line(__global const {t}2* src, __global {t}2* dst, __global const {t}2* tw,
                   long inner, {t} scale) {{
  __local {t}2 A[{n}], B[{n}];
  long b = get_group_id(0);
  long outer = b / inner, in_i = b - outer * inner;
  long base = outer * {n} * inner + in_i;
  int lid = get_local_id(0), W = get_local_size(0);
  for (int i = lid; i < {n}; i += W) A[i] = src[base + i * inner];
  barrier(CLK_LOCAL_MEM_FENCE);
  {"".join(body)}
  for (int i = lid; i < {n}; i += W) dst[base + i * inner] = {cur}[i] * scale;
}}
"""


def _source(t: str) -> str:
    """Every FFT kernel of one real type (float or double)."""
    parts = []
    for radix in RADICES:
        parts.append(_pass_kernel(radix, -1, t, f"pass{radix}_f"))
        parts.append(_pass_kernel(radix, 1, t, f"pass{radix}_i"))
    gather = unravel("g", "shape", "nd", [("off", "st")])
    parts.append(f"""
/* strided input -> contiguous complex working copy; is_real 0: complex input, 1: real
   (imaginary part 0), 2: real pairs (src[off], src[off + pair]) as one complex value */
__kernel void gather(__global const {t}* src, long offset, long8 shape, long8 st, int nd,
                     long total, int is_real, __global {t}2* dst, long pair) {{
  long g = get_global_id(0);
  if (g >= total) return;
  long off = offset;
  {gather}
  dst[g] = is_real == 2 ? ({t}2)(src[off], src[off + pair]) :
           is_real ? ({t}2)(src[off], ({t})0) : ({t}2)(src[2 * off], src[2 * off + 1]);
}}
/* rows of Z = FFT_h(x[2m] + i x[2m+1]) -> the h + 1 values X_k of the real FFT of x:
   X_k = (Z_k + conj Z_(h-k))/2 - i W^k (Z_k - conj Z_(h-k))/2, W = exp(-2 pi i / 2h) */
__kernel void unpack(__global const {t}2* z, __global const {t}2* roots, long h, {t} scale,
                     long total, __global {t}2* dst) {{
  long g = get_global_id(0);
  if (g >= total) return;
  long row = g / (h + 1), k = g - row * (h + 1);
  {t}2 a = z[row * h + (k % h)], b = z[row * h + ((h - k) % h)];
  b.y = -b.y;
  {t}2 e = (a + b) * ({t})0.5, o = (a - b) * ({t})0.5, w = roots[k];
  {t}2 c = ({t}2)(w.x * o.x - w.y * o.y, w.x * o.y + w.y * o.x);
  dst[g] = ({t}2)(e.x + c.y, e.y - c.x) * scale;
}}
__kernel void real_part(__global const {t}2* src, __global {t}* dst, long total) {{
  long g = get_global_id(0);
  if (g < total) dst[g] = src[g].x;
}}
__kernel void scale_all(__global {t}2* x, long total, {t} scale) {{
  long g = get_global_id(0);
  if (g < total) x[g] *= scale;
}}
/* (outer, h) rows of a one-sided spectrum -> (outer, L) full ones, X[L - k] = conj(X[k]);
   values past the h given are 0 */
__kernel void hermitian(__global const {t}2* src, long h, __global {t}2* dst, long L,
                        long total) {{
  long g = get_global_id(0);
  if (g >= total) return;
  long row = g / L, k = g - row * L;
  {t}2 v = ({t}2)(0, 0);
  if (k < L / 2 + 1) {{ if (k < h) v = src[row * h + k]; }}
  else {{ long m = L - k; if (m < h) {{ v = src[row * h + m]; v.y = -v.y; }} }}
  dst[g] = v;
}}
/* (outer, n, inner) lines -> (outer*inner, M) zero-padded, times the chirp */
__kernel void chirp_in(__global const {t}2* src, __global const {t}2* w, long n, long inner,
                       long M, long total, __global {t}2* dst) {{
  long g = get_global_id(0);
  if (g >= total) return;
  long b = g / M, m = g - b * M;
  {t}2 v = ({t}2)(0, 0);
  if (m < n) {{
    long outer = b / inner, in_i = b - outer * inner;
    {t}2 x = src[outer * n * inner + m * inner + in_i], c = w[m];
    v = ({t}2)(x.x * c.x - x.y * c.y, x.x * c.y + x.y * c.x);
  }}
  dst[g] = v;
}}
__kernel void pointwise(__global {t}2* a, __global const {t}2* f, long M, long total) {{
  long g = get_global_id(0);
  if (g >= total) return;
  {t}2 x = a[g], c = f[g % M];
  a[g] = ({t}2)(x.x * c.x - x.y * c.y, x.x * c.y + x.y * c.x);
}}
__kernel void chirp_out(__global const {t}2* src, __global const {t}2* w, long n,
                        long inner, long M, {t} scale, long total, __global {t}2* dst) {{
  long g = get_global_id(0);
  if (g >= total) return;
  long outer = g / (n * inner), rest = g - outer * n * inner;
  long k = rest / inner, in_i = rest - k * inner;
  {t}2 x = src[(outer * inner + in_i) * M + k], c = w[k];
  dst[g] = ({t}2)(x.x * c.x - x.y * c.y, x.x * c.y + x.y * c.x) * scale;
}}
""")
    return "\n".join(parts)


# --- host side ------------------------------------------------------------------------

def _real_of(dtype_name: str) -> tuple:
    """('float', np.float32, np.complex64) for complex64 / float32, the double ones else."""
    if dtype_name in ("complex64", "float32"):
        return "float", np.float32, np.complex64
    return "double", np.float64, np.complex128


class Plan:
    """The kernels and cached tables for one runtime and one precision."""

    def __init__(self, rt, t: str):
        self.rt, self.t = rt, t
        self.np_real = np.float32 if t == "float" else np.float64
        self.np_complex = np.complex64 if t == "float" else np.complex128
        self.itemsize = 2 * np.dtype(self.np_real).itemsize
        self.cache = _TABLES.setdefault(rt, {})

    def kernel(self, name):
        t = self.t
        return self.rt.kernel(("fft", t), lambda: _source(t), name)

    def alloc(self, count: int):
        """A working buffer of `count` complex values (a graph being recorded learns of it,
        as of every runtime allocation)."""
        buf = self.rt.pool.allocate(max(count, 1) * self.itemsize)
        if self.rt.recorder is not None:
            self.rt.recorder.allocated(buf)
        return buf

    def upload(self, host: np.ndarray):
        """A device copy of a complex table, through the runtime (as (n, 2) real values)."""
        real = D.float32 if self.t == "float" else D.float64
        pairs = np.ascontiguousarray(host).view(self.np_real)
        arr = self.rt.from_host(pairs, real)
        self.cache.setdefault("_arrays", []).append(arr)      # the table's buffer lives on
        return arr.buffer

    def roots(self, n: int):
        """exp(-2 pi i t / n), t < n, as a device buffer (cached)."""
        key = ("roots", self.t, n)
        buf = self.cache.get(key)
        if buf is None:
            ang = -2.0 * np.pi * np.arange(n, dtype=np.float64) / n
            buf = self.cache[key] = self.upload(
                (np.cos(ang) + 1j * np.sin(ang)).astype(self.np_complex))
        return buf

    def chirp(self, n: int, M: int, sign: int):
        """(w, F): w_m = exp(sign i pi m^2 / n), F = FFT_M of the filter conj(w) (cached)."""
        key = ("chirp", self.t, n, M, sign)
        found = self.cache.get(key)
        if found is None:
            m = np.arange(n, dtype=np.int64)
            sq = (m * m) % (2 * n)                            # exact for long lines
            w = np.exp(sign * 1j * np.pi * sq.astype(np.float64) / n)
            filt = np.zeros(M, dtype=np.complex128)
            filt[:n] = np.conj(w)
            filt[M - n + 1:] = np.conj(w[1:])[::-1]
            found = self.cache[key] = (self.upload(w.astype(self.np_complex)),
                                       self.upload(np.fft.fft(filt).astype(self.np_complex)))
        return found

    def fits_locally(self, n: int, inner: int) -> bool:
        """Whether one work-group per line takes this transform: on a GPU, for contiguous
        lines whose two ping-pong buffers fill at most a quarter of local memory.  Not on a
        CPU device: PoCL runs a work-group's barriers as loops, and there the passes were
        faster (2-D 1024x1024: 69 + 110 ms against 95 + 180 ms)."""
        if self.rt.is_cpu or inner != 1 or not 16 <= n <= 4096:
            return False
        return 2 * n * self.itemsize <= int(self.rt.device.local_mem_size) // 4

    def group_width(self, n: int) -> int:
        return max(1, min(int(self.rt.device.max_work_group_size), 256, n // 8))

    def launch1(self, name, total, *args):
        self.rt.launch(self.kernel(name), total, *args)

    # -- one dim ---------------------------------------------------------------------
    def transform(self, buf, other, outer: int, n: int, inner: int, inverse: bool,
                  scale: float):
        """Transform dim n of the contiguous (outer, n, inner) complex array in `buf`;
        `other` is a scratch buffer of the same size.  Returns (result, scratch)."""
        total = outer * n * inner
        if n == 1 or total == 0:
            if scale != 1.0 and total:
                self.launch1("scale_all", total, buf, np.int64(total), self.np_real(scale))
            return buf, other
        radices = factor(n)
        if radices is None:
            return self.bluestein(buf, other, outer, n, inner, inverse, scale)
        tw = self.roots(n)
        lines = outer * inner
        if self.fits_locally(n, inner):
            sign = 1 if inverse else -1
            t = self.t
            kernel = self.rt.kernel(("fft_line", t, n, sign),
                                    lambda: _line_source(n, radices, sign, t), "line")
            width = self.group_width(n)
            self.rt.launch_nd(kernel, (lines * width,), (width,), buf, other, tw,
                              np.int64(inner), self.np_real(scale))
            return other, buf
        lines_first = inner > 1
        suffix = "_i" if inverse else "_f"
        p = 1
        for idx, radix in enumerate(radices):
            q = n // radix
            size = (lines, q) if lines_first else (q, lines)
            s = scale if idx == len(radices) - 1 else 1.0
            self.rt.launch_nd(self.kernel(f"pass{radix}{suffix}"), size, None, buf, other, tw,
                              np.int64(n), np.int64(inner), np.int64(p),
                              np.int64(n // (p * radix)), self.np_real(s),
                              np.int32(lines_first))
            buf, other = other, buf
            p *= radix
        return buf, other

    def bluestein(self, buf, other, outer, n, inner, inverse, scale):
        sign = 1 if inverse else -1
        M = smooth_at_least(2 * n - 1)
        w, filt = self.chirp(n, M, sign)
        lines = outer * inner
        a, b = self.alloc(lines * M), self.alloc(lines * M)
        self.launch1("chirp_in", lines * M, buf, w, np.int64(n), np.int64(inner),
                     np.int64(M), np.int64(lines * M), a)
        a, b = self.transform(a, b, lines, M, 1, False, 1.0)
        self.launch1("pointwise", lines * M, a, filt, np.int64(M), np.int64(lines * M))
        a, b = self.transform(a, b, lines, M, 1, True, 1.0)
        total = outer * n * inner
        self.launch1("chirp_out", total, a, w, np.int64(n), np.int64(inner), np.int64(M),
                     self.np_real(scale / M), np.int64(total), other)
        return other, buf

    # -- whole arrays ----------------------------------------------------------------
    def gather(self, x: CLArray, is_real, pair: int = 0):
        """A contiguous complex copy of x (any strides; real x gets imaginary part 0;
        is_real=2: the real values x and x + pair elements further as one complex)."""
        total = x.size
        out = self.alloc(total)
        if total:
            # a row-major copy: dims contiguous with each other merge, size-1 dims drop
            shape, (strides,) = collapse(x.shape, [x.strides])
            if len(shape) > MAXDIM:
                raise max_dims_error("fft", shape)
            self.launch1("gather", total, x.buffer, np.int64(x.offset), long8(shape),
                         strides8(strides), np.int32(len(shape)), np.int64(total),
                         np.int32(int(is_real)), out, np.int64(pair))
        return out

    def real_last_dim(self, x: CLArray, scale: float):
        """The one-sided FFT of real x along its last dim (even length n >= 4) through
        one complex FFT of length n/2 of the packed pairs (half the work of a complex
        transform of the real values), as a contiguous (..., n/2 + 1) complex buffer."""
        n = x.shape[-1]
        h = n // 2
        lead = tuple(x.shape[:-1])
        pairs = x.view(lead + (h,), tuple(x.strides[:-1]) + (2 * x.strides[-1],), x.offset)
        z = self.gather(pairs, 2, x.strides[-1])
        rows = int(np.prod(lead))
        z, other = self.transform(z, self.alloc(rows * h), rows, h, 1, False, 1.0)
        total = rows * (h + 1)
        out = self.alloc(total)
        self.launch1("unpack", total, z, self.roots(n), np.int64(h), self.np_real(scale),
                     np.int64(total), out)
        return out

    def c2c_dims(self, buf, shape, dims, inverse, scale):
        """Transform every dim of `dims` (the last one listed gets the scale)."""
        other = self.alloc(int(np.prod(shape)))
        dims = list(dims)
        for idx, d in enumerate(dims):
            outer = int(np.prod(shape[:d]))
            inner = int(np.prod(shape[d + 1:]))
            s = scale if idx == len(dims) - 1 else 1.0
            buf, other = self.transform(buf, other, outer, shape[d], inner, inverse, s)
        return buf


def _scale(normalization: str, count: int) -> float:
    if normalization == "none" or count == 0:
        return 1.0
    if normalization == "by_root_n":
        return 1.0 / math.sqrt(count)
    if normalization == "by_n":
        return 1.0 / count
    raise ValueError(f"FFT normalization must be 'none', 'by_root_n' or 'by_n', got "
                     f"{normalization!r}")


def _plan(rt, dtype_name):
    t, _, _ = _real_of(dtype_name)
    return Plan(rt, t)


def _wrap(rt, buf, shape, dtype) -> CLArray:
    return CLArray(rt, buf, shape, dtype)


def c2c_buffers(rt, x: CLArray, dims, normalization, forward, out_dtype):
    plan = _plan(rt, x.dtype.name)
    shape = tuple(x.shape)
    buf = plan.gather(x, False)
    if x.size:
        count = int(np.prod([shape[d] for d in dims])) if dims else 1
        buf = plan.c2c_dims(buf, shape, dims, not forward, _scale(normalization, count))
    return _wrap(rt, buf, shape, out_dtype)


def r2c_buffers(rt, x: CLArray, dims, normalization, onesided, out_dtype):
    plan = _plan(rt, x.dtype.name)
    shape = list(x.shape)
    dims = list(dims)
    last = dims[-1]
    count = int(np.prod([shape[d] for d in dims])) if dims else 1
    scale = _scale(normalization, count)
    if not x.size:
        if onesided:
            shape[last] = shape[last] // 2 + 1
        return _wrap(rt, plan.alloc(int(np.prod(shape))), tuple(shape), out_dtype)
    rest = dims[:-1]
    n = shape[last]
    if last == len(shape) - 1 and n % 2 == 0 and n >= 4:
        # the packed real transform of the last dim, then the other dims
        half_shape = shape[:-1] + [n // 2 + 1]
        half = plan.real_last_dim(x, 1.0 if rest else scale)
        if not onesided:
            full = plan.alloc(x.size)
            plan.launch1("hermitian", x.size, half, np.int64(n // 2 + 1), full, np.int64(n),
                         np.int64(x.size))
            half, half_shape = full, shape
        if rest:
            half = plan.c2c_dims(half, tuple(half_shape), rest, False, scale)
        return _wrap(rt, half, tuple(half_shape), out_dtype)
    buf = plan.gather(x, True)
    if not onesided:
        buf = plan.c2c_dims(buf, tuple(shape), dims, False, scale)
        return _wrap(rt, buf, tuple(shape), out_dtype)
    # the last dim first, then keep n//2 + 1 of it, then the others on the halved array
    buf = plan.c2c_dims(buf, tuple(shape), [last], False, 1.0 if rest else scale)
    full = CLArray(rt, buf, tuple(shape), out_dtype)
    half_shape = list(shape)
    half_shape[last] = shape[last] // 2 + 1
    half = plan.gather(full.view(tuple(half_shape), full.strides, 0), False)
    if rest:
        half = plan.c2c_dims(half, tuple(half_shape), rest, False, scale)
    return _wrap(rt, half, tuple(half_shape), out_dtype)


def c2r_buffers(rt, x: CLArray, dims, normalization, last_dim_size, out_dtype):
    plan = _plan(rt, x.dtype.name)
    dims = list(dims)
    last = dims[-1]
    shape = list(x.shape)
    out_shape = list(shape)
    out_shape[last] = last_dim_size
    count = int(np.prod([out_shape[d] for d in dims])) if dims else 1
    scale = _scale(normalization, count)
    total_out = int(np.prod(out_shape))
    out = rt.empty(tuple(out_shape), out_dtype)
    if total_out == 0:
        return out
    # the Hermitian half the c2r reads: the first last_dim_size//2 + 1 values
    h = last_dim_size // 2 + 1
    shape[last] = min(shape[last], h)
    view = x.view(tuple(shape), x.strides, x.offset)
    buf = plan.gather(view, False)
    if dims[:-1]:
        buf = plan.c2c_dims(buf, tuple(shape), dims[:-1], True, 1.0)
    # move the last transformed dim's lines into (outer*inner..., h) rows: gather again
    # through a permuted view so the Hermitian extension works on contiguous rows
    order = [d for d in range(len(shape)) if d != last] + [last]
    half = CLArray(rt, buf, tuple(shape), x.dtype)
    moved = half.view(tuple(shape[d] for d in order), tuple(half.strides[d] for d in order), 0)
    rows = plan.gather(moved, False) if last != len(shape) - 1 else buf
    lines = total_out // last_dim_size
    full = plan.alloc(total_out)
    plan.launch1("hermitian", total_out, rows, np.int64(shape[last]), full,
                 np.int64(last_dim_size), np.int64(total_out))
    full, _ = plan.transform(full, plan.alloc(total_out), lines, last_dim_size, 1, True,
                             scale)
    if last == len(shape) - 1:
        plan.launch1("real_part", total_out, full, out.buffer, np.int64(total_out))
        return out
    # back to the input's dim order
    moved_shape = [out_shape[d] for d in order]
    tmp = rt.empty(tuple(moved_shape), out_dtype)
    plan.launch1("real_part", total_out, full, tmp.buffer, np.int64(total_out))
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    view = tmp.view(tuple(moved_shape[i] for i in inverse),
                    tuple(tmp.strides[i] for i in inverse), 0)
    return rt.contiguous(view)


# --- the kernel table (core/ops/fft.py's signatures) ------------------------------------

def fft_c2c(x: CLArray, *, dims, normalization, forward) -> CLArray:
    return c2c_buffers(x.runtime, x, tuple(dims), normalization, forward, x.dtype)


def fft_r2c(x: CLArray, *, dims, normalization, onesided) -> CLArray:
    return r2c_buffers(x.runtime, x, tuple(dims), normalization, onesided,
                       x.dtype.to_complex())


def fft_c2r(x: CLArray, *, dims, normalization, last_dim_size) -> CLArray:
    return c2r_buffers(x.runtime, x, tuple(dims), normalization, last_dim_size,
                       x.dtype.to_real())


def table() -> dict:
    return {"fft_c2c": fft_c2c, "fft_r2c": fft_r2c, "fft_c2r": fft_c2r}
