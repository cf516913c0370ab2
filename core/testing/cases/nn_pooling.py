"""Conformance rows of pooling: max, average, adaptive and lp, in one, two and three dimensions,
and max unpooling.

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


# --- three dimensions, lp pooling and max unpooling -----------------------------------------
def _taps(x, k, s, p, d, fill):
    """Every window tap of (N, C, *spatial) in any number of spatial dims (no ceil_mode):
    the taps' values stacked on a new axis 0, and each tap's flat index into the spatial
    volume (the max pools' indices), both shaped (taps, N, C, *out)."""
    dims, spatial = len(k), x.shape[2:]
    out = [(spatial[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(dims)]
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((q, q) for q in p), constant_values=fill)
    vals, flat = [], []
    for t in np.ndindex(*k):
        vals.append(xp[(slice(None), slice(None)) + tuple(
            slice(t[i] * d[i], t[i] * d[i] + s[i] * (out[i] - 1) + 1, s[i])
            for i in range(dims))])
        pos = np.ix_(*[np.arange(out[i]) * s[i] - p[i] + t[i] * d[i] for i in range(dims)])
        flat.append(np.broadcast_to(sum(pos[i] * int(np.prod(spatial[i + 1:]))
                                        for i in range(dims)), vals[-1].shape))
    return np.stack(vals), np.stack(flat)


def _max_pool_nd(x, k, s, p=None, d=None):
    p, d = p or (0,) * len(k), d or (1,) * len(k)
    vals, flat = _taps(x, k, s, p, d, -np.inf)
    at = vals.argmax(0)[None]
    return vals.max(0), np.take_along_axis(flat, at, 0)[0]


def _avg_pool_nd(x, k, s, p, count_include_pad=True, divisor=None):
    total = _taps(x, k, s, p, (1,) * len(k), 0.0)[0].sum(0)
    if divisor is not None:
        return total / divisor
    ones = np.ones((1, 1) + x.shape[2:])
    return total / _taps(ones, k, s, p, (1,) * len(k), float(count_include_pad))[0].sum(0)


def _adaptive_nd(x, size):
    """PyTorch's adaptive windows in any number of dims: the mean, the max and the max's
    flat index into the spatial volume of each."""
    spatial = x.shape[2:]
    mean, top = np.zeros(x.shape[:2] + tuple(size)), np.zeros(x.shape[:2] + tuple(size))
    idx = np.zeros(x.shape[:2] + tuple(size), np.int64)
    for o in np.ndindex(*size):
        bounds = [((o[i] * n) // size[i], -((-(o[i] + 1) * n) // size[i]))
                  for i, n in enumerate(spatial)]
        win = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in bounds)]
        flat = win.reshape(win.shape[:2] + (-1,))
        mean[(...,) + o], top[(...,) + o] = flat.mean(-1), flat.max(-1)
        local = np.unravel_index(flat.argmax(-1), win.shape[2:])
        idx[(...,) + o] = np.ravel_multi_index(
            tuple(local[i] + bounds[i][0] for i in range(len(size))), spatial)
    return mean, top, idx


def _unpool_ref(x, k, size=None):
    """max_unpool of max_pool (kernel = stride = k): each window's max back in its cell,
    zeros elsewhere, in an output of `size` (default: the pooled size times k)."""
    vals, idx = _max_pool_nd(x, k, k)
    size = size or tuple(v * kk for v, kk in zip(vals.shape[2:], k))
    out = np.zeros(x.shape[:2] + (int(np.prod(size)),))
    np.put_along_axis(out, idx.reshape(x.shape[:2] + (-1,)), vals.reshape(x.shape[:2] + (-1,)),
                      -1)
    return out.reshape(x.shape[:2] + tuple(size))


case("max_pool3d", lambda E, x: (F(E).max_pool3d(x, 2), F(E).max_pool3d(
    x, (2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2))),
     lambda np, x: (_max_pool_nd(x, (2,) * 3, (2,) * 3)[0],
                    _max_pool_nd(x, (2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2))[0]),
     Input((1, 2, 4, 5, 6)))
case("max_pool3d:indices", lambda E, x: F(E).max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0),
                                                        return_indices=True),
     lambda np, x: _max_pool_nd(x, (2, 3, 2), (1, 2, 2), (1, 1, 0)), Input((1, 2, 4, 5, 6)),
     out_dtype=("same", "int64"), ops=("max_pool3d",))
case("avg_pool3d", lambda E, x: (F(E).avg_pool3d(x, 2), F(E).avg_pool3d(
    x, (3, 2, 3), (2, 1, 2), (1, 1, 1), count_include_pad=False),
                                 F(E).avg_pool3d(x, 2, 1, divisor_override=3)),
     lambda np, x: (_avg_pool_nd(x, (2,) * 3, (2,) * 3, (0,) * 3),
                    _avg_pool_nd(x, (3, 2, 3), (2, 1, 2), (1, 1, 1), False),
                    _avg_pool_nd(x, (2,) * 3, (1,) * 3, (0,) * 3, divisor=3)),
     Input((1, 2, 4, 5, 6)))
case("adaptive_avg_pool3d", lambda E, x: (F(E).adaptive_avg_pool3d(x, (2, 3, 4)),
                                          F(E).adaptive_avg_pool3d(x, 1)),
     lambda np, x: (_adaptive_nd(x, (2, 3, 4))[0], _adaptive_nd(x, (1, 1, 1))[0]),
     Input((1, 2, 3, 5, 6)))
case("adaptive_max_pool3d", lambda E, x: F(E).adaptive_max_pool3d(x, (2, 3, 4),
                                                                  return_indices=True),
     lambda np, x: _adaptive_nd(x, (2, 3, 4))[1:], Input((1, 2, 3, 5, 6)),
     out_dtype=("same", "int64"))
case("adaptive_max_pool1d", lambda E, x: F(E).adaptive_max_pool1d(x, 4, return_indices=True),
     lambda np, x: _adaptive_nd(x, (4,))[1:], Input((2, 3, 10)), out_dtype=("same", "int64"))
# lp pooling: (sum of x^p over each window)^(1/p); positive inputs for the odd power
case("lp_pool1d", lambda E, x: (F(E).lp_pool1d(x, 2, 3), F(E).lp_pool1d(x, 3, 2, 1)),
     lambda np, x: (_taps(x, (3,), (3,), (0,), (1,), 0.0)[0].__pow__(2).sum(0) ** 0.5,
                    _taps(x, (2,), (1,), (0,), (1,), 0.0)[0].__pow__(3).sum(0) ** (1 / 3)),
     Input((2, 3, 7), "p"))
case("lp_pool2d", lambda E, x: (F(E).lp_pool2d(x, 2, 2), F(E).lp_pool2d(x, 3, (2, 3), (1, 2))),
     lambda np, x: (_taps(x, (2, 2), (2, 2), (0, 0), (1, 1), 0.0)[0].__pow__(2).sum(0) ** 0.5,
                    _taps(x, (2, 3), (1, 2), (0, 0), (1, 1), 0.0)[0].__pow__(3).sum(0)
                    ** (1 / 3)),
     Input((2, 2, 4, 5), "p"))
case("lp_pool3d", lambda E, x: F(E).lp_pool3d(x, 2, (2, 2, 3), (1, 2, 2)),
     lambda np, x: _taps(x, (2, 2, 3), (1, 2, 2), (0,) * 3, (1,) * 3, 0.0)[0].__pow__(2).sum(0)
     ** 0.5, Input((1, 2, 3, 4, 5), "p"))
# unpooling what max pooling picked (kernel = stride): the maxima back in place, zeros
# elsewhere; the indices come from ember's own max pool, whose row checks them
case("max_unpool1d", lambda E, x: (F(E).max_unpool1d(*F(E).max_pool1d(x, 2, return_indices=True),
                                                     2),
                                   F(E).max_unpool1d(*F(E).max_pool1d(x, 2, return_indices=True),
                                                     2, output_size=(7,))),
     lambda np, x: (_unpool_ref(x, (2,)), _unpool_ref(x, (2,), (7,))), Input((2, 3, 7)))
case("max_unpool2d", lambda E, x: F(E).max_unpool2d(*F(E).max_pool2d(x, 2, return_indices=True),
                                                    2, output_size=(5, 6)),
     lambda np, x: _unpool_ref(x, (2, 2), (5, 6)), Input((2, 2, 5, 6)))
case("max_unpool3d", lambda E, x: F(E).max_unpool3d(*F(E).max_pool3d(x, 2, return_indices=True),
                                                    2),
     lambda np, x: _unpool_ref(x, (2, 2, 2)), Input((1, 2, 4, 4, 6)))


# --- fractional max pooling: windows at the starts torch's formula gives the samples ---------
_U2 = np.array([[[0.25, 0.7], [0.9, 0.1], [0.55, 0.35]],
                [[0.05, 0.6], [0.75, 0.45], [0.2, 0.95]]])                  # (N, C, 2): W, H
_U3 = np.array([[[0.3, 0.8, 0.15], [0.65, 0.05, 0.5]]])                   # (N, C, 3): T, H, W


def _fractional_starts(u, size, out, k):
    """torch's generate_intervals (the sample u of one plane along one dim)."""
    if out == 1:
        return [size - k]
    alpha = (size - k) / (out - 1)
    return [int((i + u) * alpha) - int(u * alpha) for i in range(out - 1)] + [size - k]


def _fractional_max(x, k, out, u):
    """(values, flat indices into each plane) of fractional max pooling with samples u."""
    dims = len(k)
    which = (1, 0) if dims == 2 else (0, 1, 2)
    sizes = x.shape[2:]
    vals = np.zeros(x.shape[:2] + tuple(out), x.dtype)
    idx = np.zeros(x.shape[:2] + tuple(out), np.int64)
    for n, c in np.ndindex(*x.shape[:2]):
        starts = [_fractional_starts(u[n, c, which[d]], sizes[d], out[d], k[d])
                  for d in range(dims)]
        for pos in np.ndindex(*out):
            lo = [starts[d][pos[d]] for d in range(dims)]
            window = x[(n, c) + tuple(slice(a, a + b) for a, b in zip(lo, k))]
            local = np.unravel_index(int(np.argmax(window)), window.shape)
            vals[(n, c) + pos] = window[local]
            idx[(n, c) + pos] = np.ravel_multi_index(tuple(a + b for a, b in zip(lo, local)),
                                                     sizes)
    return vals, idx


case("fractional_max_pool2d", lambda E, x: F(E).fractional_max_pool2d(
    x, 2, output_size=(3, 4), return_indices=True,
    _random_samples=E.tensor(_U2, dtype=x.dtype, device=x.device)),
     lambda np, x: _fractional_max(x, (2, 2), (3, 4), _U2), Input((2, 3, 6, 7)),
     out_dtype=("same", "int64"))
case("fractional_max_pool3d", lambda E, x: F(E).fractional_max_pool3d(
    x, (2, 3, 2), output_size=(2, 3, 2), return_indices=True,
    _random_samples=E.tensor(_U3, dtype=x.dtype, device=x.device)),
     lambda np, x: _fractional_max(x, (2, 3, 2), (2, 3, 2), _U3), Input((1, 2, 5, 6, 4)),
     out_dtype=("same", "int64"))
