"""argsort: a stable bottom-up merge sort of every line along the sorted axis, on the device.

The lines are copied into a contiguous (other dims..., L) layout; then each pass merges
sorted runs of width w into runs of 2w, one work-item per element: an element of the left
run lands at its own offset plus the number of right-run elements that sort strictly
before it (a binary search), a right-run element at its offset plus the number of left-run
elements that do not sort after it.  Equal keys therefore keep their order (stable), and
ceil(log2 L) passes sort every line at once, whatever the number of lines.
"""
from __future__ import annotations

import numpy as np
from ember import dtypes as D

from .codegen import COMPUTE, CTYPE, FLOATS
from .copies import contiguous
from .runtime import CLArray, contiguous_strides


def _before(dt: str, descending: bool) -> str:
    """C for `a sorts strictly before b`; nan counts as the largest value (PyTorch)."""
    if dt not in FLOATS:
        return "(a > b)" if descending else "(a < b)"
    if descending:
        return "(!isnan(b) && (isnan(a) || a > b))"
    return "(!isnan(a) && (isnan(b) || a < b))"


def _source(dt: str, descending: bool) -> str:
    t, c = CTYPE[dt], COMPUTE[dt]
    return f"""
inline int before({c} a, {c} b) {{ return {_before(dt, descending)}; }}
__kernel void iota(long n, long L, __global long* idx) {{
  long g = get_global_id(0);
  if (g < n) idx[g] = g % L;
}}
__kernel void merge(long n, long L, long w, __global const {t}* ka, __global const long* ia,
                    __global {t}* kb, __global long* ib) {{
  long g = get_global_id(0);
  if (g >= n) return;
  long row = g / L, pos = g - row * L, base = row * L;
  long start = (pos / (2 * w)) * (2 * w);
  long mid = min(start + w, L), end = min(start + 2 * w, L);
  {c} key = ({c})ka[g];
  long lo, hi, dst;
  if (pos < mid) {{
    lo = mid; hi = end;                       /* right-run keys strictly before key */
    while (lo < hi) {{ long m = (lo + hi) / 2;
      if (before(({c})ka[base + m], key)) lo = m + 1; else hi = m; }}
    dst = pos + (lo - mid);
  }} else {{
    lo = start; hi = mid;                     /* left-run keys not after key */
    while (lo < hi) {{ long m = (lo + hi) / 2;
      if (!before(key, ({c})ka[base + m])) lo = m + 1; else hi = m; }}
    dst = start + (pos - mid) + (lo - start);
  }}
  kb[base + dst] = ka[g];
  ib[base + dst] = ia[g];
}}
"""


def argsort(x: CLArray, *, axis: int, descending: bool) -> CLArray:
    rt = x.runtime
    dims = [d for d in range(x.ndim) if d != axis] + [axis]
    moved = x.view(tuple(x.shape[d] for d in dims), tuple(x.strides[d] for d in dims),
                   x.offset)
    keys = contiguous(moved)                  # lines contiguous along the last dim
    n, length = keys.size, x.shape[axis]
    idx = rt.empty(keys.shape, D.int64)
    if n == 0:
        return _unmove(idx, dims)
    dt = x.dtype.name
    key = ("argsort", dt, bool(descending))
    make = lambda: _source(dt, descending)
    rt.launch(rt.kernel(key, make, "iota"), n, np.int64(n), np.int64(length), idx.buffer,
              fresh=True)
    merge = rt.kernel(key, make, "merge")
    other_keys, other_idx = rt.empty(keys.shape, x.dtype), rt.empty(keys.shape, D.int64)
    width = 1
    while width < length:
        rt.launch(merge, n, np.int64(n), np.int64(length), np.int64(width), keys.buffer,
                  idx.buffer, other_keys.buffer, other_idx.buffer, fresh=True)
        keys, other_keys, idx, other_idx = other_keys, keys, other_idx, idx
        width *= 2
    return _unmove(idx, dims)


def _unmove(idx: CLArray, dims) -> CLArray:
    """The (other dims..., L) result laid out in the input's dim order again."""
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    strides = contiguous_strides(idx.shape)
    view = idx.view(tuple(idx.shape[i] for i in inverse), tuple(strides[i] for i in inverse),
                    idx.offset)
    return view if dims == sorted(dims) else contiguous(view)


def table() -> dict:
    return {"argsort": argsort}
