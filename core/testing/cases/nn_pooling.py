"""Conformance rows of pooling: max, average and adaptive, in one and two dimensions.

Each reference is written directly in NumPy over the pooling windows.
"""
from __future__ import annotations

import numpy as np

from ._table import ALL_FLOATS, FLOATS, F, Input, Rows

ROWS = Rows("pooling")
case = ROWS.case


def _windows(x, k, s, p, d, fill, ceil_mode=False, fill_past=None):
    """Every window tap of an (N, C, H, W) array, each shaped like the output; the padding
    holds `fill`, cells past it (ceil_mode) `fill_past` (default: fill)."""
    n, c, h, w = x.shape
    outs, extra = [], []
    for i, size in enumerate((h, w)):
        span = d[i] * (k[i] - 1) + 1
        num = size + 2 * p[i] - span
        o = (-(-num // s[i]) if ceil_mode else num // s[i]) + 1
        if ceil_mode and (o - 1) * s[i] >= size + p[i]:
            o -= 1
        outs.append(o)
        extra.append(max(0, (o - 1) * s[i] + span - (size + 2 * p[i])))
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])), constant_values=fill)
    xp = np.pad(xp, ((0, 0), (0, 0), (0, extra[0]), (0, extra[1])),
                constant_values=fill if fill_past is None else fill_past)
    (oh, ow) = outs
    return [xp[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
               j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
            for i in range(k[0]) for j in range(k[1])]


def _two(v):
    return v if isinstance(v, tuple) else (v, v)


def _max_pool(x, k, s=None, p=0, d=1, ceil_mode=False):
    return np.max(_windows(x, _two(k), _two(s or k), _two(p), _two(d), -np.inf, ceil_mode), 0)


def _avg_pool(x, k, s=None, p=0, ceil_mode=False, count_include_pad=True, divisor=None):
    k, s, p = _two(k), _two(s or k), _two(p)
    total = np.sum(_windows(x, k, s, p, (1, 1), 0.0, ceil_mode), 0)
    if divisor is not None:
        return total / divisor
    # the cells each window averages: the input, the padding too where it counts, never
    # the cells past it (ceil_mode)
    ones = np.ones((1, 1) + x.shape[2:])
    count = np.sum(_windows(ones, k, s, p, (1, 1), float(count_include_pad), ceil_mode, 0.0), 0)
    return total / count


def _adaptive(x, size, reduce):
    """PyTorch's adaptive pooling windows (start floor(i*h/oh), end ceil((i+1)*h/oh)),
    each reduced by reduce(window, axes)."""
    n, c, h, w = x.shape
    oh, ow = size
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        r0, r1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            c0, c1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            out[:, :, i, j] = reduce(x[:, :, r0:r1, c0:c1], (2, 3))
    return out


def _adaptive_avg(x, size):
    return _adaptive(x, size, np.mean)


for _name, _kw in [("max_pool2d", dict(kernel_size=2)),
                   ("max_pool2d:pad_stride", dict(kernel_size=3, stride=2, padding=1)),
                   ("max_pool2d:dilation_ceil", dict(kernel_size=(2, 3), stride=2, dilation=(2, 1),
                                                     ceil_mode=True)),
                   ("max_pool2d:overlapping", dict(kernel_size=3, stride=1))]:
    case(_name, (lambda kw: lambda E, x: F(E).max_pool2d(x, **kw))(_kw),
         (lambda kw: lambda np, x: _max_pool(x, kw["kernel_size"], kw.get("stride"),
                                             kw.get("padding", 0), kw.get("dilation", 1),
                                             kw.get("ceil_mode", False)))(_kw),
         Input((2, 3, 6, 7)), dtypes=ALL_FLOATS if _name == "max_pool2d" else FLOATS,
         ops=("max_pool2d",))
case("max_pool2d:ties_first", lambda E, x: F(E).max_pool2d(x * 0 + x.round(), 2),
     lambda np, x: _max_pool(np.round(x), 2), Input((1, 1, 4, 4)), grad=False,
     ops=("max_pool2d",))
case("max_pool2d:indices", lambda E, x: F(E).max_pool2d(x, 2, return_indices=True),
     lambda np, x: (_max_pool(x, 2), _pool_indices(x)), Input((2, 2, 4, 6)),
     out_dtype=("same", "int64"), ops=("max_pool2d",))
case("max_pool2d:unbatched_int", lambda E, x: F(E).max_pool2d(x, 2),
     lambda np, x: _max_pool(x[None].astype(np.float64), 2)[0].astype(x.dtype),
     Input((2, 4, 4), "i"), dtypes=("int64",), grad=False, ops=("max_pool2d",))
for _name, _kw in [("avg_pool2d", dict(kernel_size=2)),
                   ("avg_pool2d:pad", dict(kernel_size=3, stride=2, padding=1)),
                   ("avg_pool2d:exclude_pad", dict(kernel_size=3, stride=2, padding=1,
                                                   count_include_pad=False)),
                   ("avg_pool2d:ceil", dict(kernel_size=2, stride=2, ceil_mode=True)),
                   ("avg_pool2d:divisor", dict(kernel_size=2, stride=1, divisor_override=3))]:
    case(_name, (lambda kw: lambda E, x: F(E).avg_pool2d(x, **kw))(_kw),
         (lambda kw: lambda np, x: _avg_pool(x, kw["kernel_size"], kw.get("stride"),
                                             kw.get("padding", 0), kw.get("ceil_mode", False),
                                             kw.get("count_include_pad", True),
                                             kw.get("divisor_override")))(_kw),
         Input((2, 3, 5, 7)), ops=("avg_pool2d",))
case("adaptive_avg_pool2d", lambda E, x: (F(E).adaptive_avg_pool2d(x, (2, 3)),
                                          F(E).adaptive_avg_pool2d(x, 1),
                                          F(E).adaptive_avg_pool2d(x, (3, None))),
     lambda np, x: (_adaptive_avg(x, (2, 3)), _adaptive_avg(x, (1, 1)),
                    _adaptive_avg(x, (3, x.shape[3]))), Input((2, 3, 5, 7)))


def _pool_indices(x):
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(
        n, c, h // 2, w // 2, 4)
    k = win.argmax(-1)
    rows = np.arange(h // 2).reshape(-1, 1) * 2 + k // 2
    cols = np.arange(w // 2).reshape(1, -1) * 2 + k % 2
    return rows * w + cols


case("max_pool1d", lambda E, x: (F(E).max_pool1d(x, 3), F(E).max_pool1d(x, 3, 2, 1, 2)),
     lambda np, x: (_max_pool(x[:, :, None], (1, 3))[:, :, 0],
                    _max_pool(x[:, :, None], (1, 3), (1, 2), (0, 1), (1, 2))[:, :, 0]),
     Input((2, 3, 10)))
case("avg_pool1d", lambda E, x: (F(E).avg_pool1d(x, 3), F(E).avg_pool1d(x, 3, 2, 1, True, False)),
     lambda np, x: (_avg_pool(x[:, :, None], (1, 3))[:, :, 0],
                    _avg_pool(x[:, :, None], (1, 3), (1, 2), (0, 1), True, False)[:, :, 0]),
     Input((2, 3, 10)))
case("adaptive_avg_pool1d", lambda E, x: F(E).adaptive_avg_pool1d(x, 4),
     lambda np, x: _adaptive_avg(x[:, :, None], (1, 4))[:, :, 0], Input((2, 3, 10)))


def _adaptive_max(x, size):
    return _adaptive(x, size, np.max)


case("adaptive_max_pool2d", lambda E, x: (F(E).adaptive_max_pool2d(x, (2, 3)),
                                          F(E).adaptive_max_pool2d(x, (3, None)),
                                          F(E).adaptive_max_pool2d(x[:, :, :4, :6], 2)),
     lambda np, x: (_adaptive_max(x, (2, 3)), _adaptive_max(x, (3, x.shape[3])),
                    _adaptive_max(x[:, :, :4, :6], (2, 2))), Input((2, 3, 5, 7)))
