"""ONE kernel table over an array namespace `xp`: NumPy for the CPU, CuPy for CUDA/ROCm.

Everything in `kernels(xp)` uses only the Python array API standard (a test runs it with
array_api_strict).  The few kernels the standard cannot express are named in
LIBRARY_SPECIFIC and supplied per library (numpy_extras here, cupy's in backends/cupy).
"""
from __future__ import annotations

import math

# Kernels each library supplies itself: scatter/accumulate, erf, and in-place writes.
LIBRARY_SPECIFIC = ("erf", "index_add", "scatter_add", "index_put", "assign")


def _dt(xp, dtype):
    """The namespace's dtype for an ember dtype."""
    name = dtype.name
    if name == "bfloat16":
        return dtype.np           # NumPy via ml_dtypes; others reject it via capabilities
    return getattr(xp, name)


def kernels(xp) -> dict:
    """The standard-only kernel table for namespace xp (see ember.ops for signatures)."""
    def sigmoid(x):
        # exp of a non-positive number only: no overflow for large |x|
        e = xp.exp(-xp.abs(x))
        return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))

    # kernels other than the movement ones return new memory (the backend contract): a
    # reduction over no axis (a 0-d input) is a copy, never the input itself
    def reduce(fn):
        def k(x, *, axes, keepdims):
            if not axes:
                return xp.asarray(x, copy=True)
            return fn(x, axis=axes, keepdims=keepdims)
        return k

    def logical(fn):
        def k(x, *, axes, keepdims):
            if not axes:                        # a 0-d tensor: still a bool answer
                return xp.astype(x, xp.bool)
            return fn(x, axis=axes, keepdims=keepdims)
        return k

    def arg(fn):
        def k(x, *, axis, keepdims):
            if axis is None:
                return fn(xp.reshape(x, (-1,)), axis=0)
            return fn(x, axis=axis, keepdims=keepdims)
        return k

    def sum_(x, *, axes, keepdims):
        # the op casts integer inputs to int64 first, so the dtype is already right
        if not axes:
            return xp.asarray(x, copy=True)
        return xp.sum(x, axis=None if len(axes) == x.ndim and not keepdims else axes,
                      keepdims=keepdims)

    def prod_(x, *, axes, keepdims):
        if not axes:
            return xp.asarray(x, copy=True)
        return xp.prod(x, axis=axes, keepdims=keepdims)

    def slice_(x, *, index):
        return x[index]

    def slice_scatter(base, src, *, index):
        out = xp.asarray(base, copy=True)
        out[index] = src
        return out

    def flip(x, *, axes):
        return xp.asarray(xp.flip(x, axis=axes), copy=True)    # never a view (PyTorch)

    def pad(x, *, pads, value):
        shape = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, pads))
        out = xp.full(shape, value, dtype=x.dtype)
        out[tuple(slice(lo, lo + n) for n, (lo, hi) in zip(x.shape, pads))] = x
        return out

    def take(x, index, *, axis):
        if index.ndim == 1:
            return xp.take(x, index, axis=axis)
        flat = xp.take(x, xp.reshape(index, (-1,)), axis=axis)
        return xp.reshape(flat, x.shape[:axis] + index.shape + x.shape[axis + 1:])

    def _tiles(h, w, kernel_size, dilation, padding, stride):
        # windows that tile the plane exactly: im2col is a reshape and one transpose
        (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
        return (kh, kw) == (sh, sw) and (dh, dw) == (1, 1) and (ph, pw) == (0, 0) and \
            h % kh == 0 and w % kw == 0

    def unfold(x, *, kernel_size, dilation, padding, stride):
        n, c, h, w = x.shape
        (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
        if _tiles(h, w, kernel_size, dilation, padding, stride):
            t = xp.reshape(x, (n, c, h // kh, kh, w // kw, kw))
            t = xp.permute_dims(t, (0, 1, 3, 5, 2, 4))
            return xp.reshape(t, (n, c * kh * kw, (h // kh) * (w // kw)))
        if ph or pw:
            x = pad(x, pads=((0, 0), (0, 0), (ph, ph), (pw, pw)), value=0)
        oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        patches = [x[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                     j * dw:j * dw + sw * (ow - 1) + 1:sw]
                   for i in range(kh) for j in range(kw)]
        cols = xp.stack(patches, axis=2)                  # (n, c, kh*kw, oh, ow)
        return xp.reshape(cols, (n, c * kh * kw, oh * ow))

    def fold(cols, *, output_size, kernel_size, dilation, padding, stride):
        (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (output_size, kernel_size, dilation,
                                                          padding, stride)
        n = cols.shape[0]
        c = cols.shape[1] // (kh * kw)
        if _tiles(h, w, kernel_size, dilation, padding, stride):
            t = xp.reshape(cols, (n, c, kh, kw, h // kh, w // kw))
            t = xp.permute_dims(t, (0, 1, 4, 2, 5, 3))
            return xp.reshape(t, (n, c, h, w))
        oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        cols = xp.reshape(cols, (n, c, kh * kw, oh, ow))
        if ow < n * c:
            # small planes, many of them: add the taps with batch x channels innermost, so
            # each strided add runs over long contiguous lines (4x faster on 4x4 planes)
            taps = xp.permute_dims(cols, (2, 3, 4, 0, 1))
            out = xp.zeros((h + 2 * ph, w + 2 * pw, n, c), dtype=cols.dtype)
            for i in range(kh):
                for j in range(kw):
                    out[i * dh:i * dh + sh * (oh - 1) + 1:sh,
                        j * dw:j * dw + sw * (ow - 1) + 1:sw] += taps[i * kw + j]
            return xp.permute_dims(out[ph:ph + h, pw:pw + w], (2, 3, 0, 1))
        out = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=cols.dtype)
        for i in range(kh):
            for j in range(kw):
                region = (slice(None), slice(None), slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
                          slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))
                out[region] += cols[:, :, i * kw + j, ...]
        return out[:, :, ph:ph + h, pw:pw + w]

    def nonzero(x):
        if x.ndim == 0:
            return xp.zeros((1 if bool(x) else 0, 0), dtype=xp.int64)
        return xp.stack([xp.astype(i, xp.int64) for i in xp.nonzero(x)], axis=1)

    def full(*, shape, value, dtype):
        return xp.full(shape, value, dtype=_dt(xp, dtype))

    def arange(*, start, stop, step, dtype):
        return xp.arange(start, stop, step, dtype=_dt(xp, dtype))

    def cast(x, *, dtype):
        return xp.astype(x, _dt(xp, dtype))

    def remainder(x, y):
        return xp.remainder(x, y)

    def div(x, y):
        return xp.divide(x, y)

    return {
        "neg": xp.negative, "abs": xp.abs, "sign": xp.sign, "exp": xp.exp, "log": xp.log,
        "log1p": xp.log1p, "expm1": xp.expm1, "sqrt": xp.sqrt,
        "rsqrt": lambda x: 1 / xp.sqrt(x), "sin": xp.sin, "cos": xp.cos, "tanh": xp.tanh,
        "sigmoid": sigmoid, "floor": xp.floor, "ceil": xp.ceil, "round": xp.round,
        "reciprocal": lambda x: 1 / x, "logical_not": xp.logical_not, "isnan": xp.isnan,
        "isinf": xp.isinf, "isfinite": xp.isfinite,
        "add": xp.add, "sub": xp.subtract, "mul": xp.multiply, "div": div, "pow": xp.pow,
        "maximum": xp.maximum, "minimum": xp.minimum, "remainder": remainder,
        "floor_divide": xp.floor_divide, "eq": xp.equal, "ne": xp.not_equal, "lt": xp.less,
        "le": xp.less_equal, "gt": xp.greater, "ge": xp.greater_equal,
        "logical_and": xp.logical_and, "logical_or": xp.logical_or,
        "logical_xor": xp.logical_xor, "where": xp.where, "cast": cast,
        "sum": sum_, "prod": prod_, "max": reduce(xp.max), "min": reduce(xp.min),
        "any": logical(xp.any), "all": logical(xp.all), "argmax": arg(xp.argmax),
        "argmin": arg(xp.argmin),
        "reshape": lambda x, *, shape: xp.reshape(x, shape),
        "permute": lambda x, *, dims: xp.permute_dims(x, dims),
        "expand": lambda x, *, shape: xp.broadcast_to(x, shape),
        "slice": slice_, "slice_scatter": slice_scatter, "flip": flip, "pad": pad,
        "concatenate": lambda *xs, axis: xp.concat(xs, axis=axis),
        "contiguous": lambda x: xp.asarray(x, copy=True),
        "take": take, "gather": lambda x, index, *, axis: xp.take_along_axis(x, index, axis=axis),
        "nonzero": nonzero, "matmul": xp.matmul, "unfold": unfold, "fold": fold,
        "full": full, "arange": arange,
    }


def numpy_extras(np) -> dict:
    """The LIBRARY_SPECIFIC kernels for NumPy (CuPy's live in backends/cupy)."""
    erf_scalar = np.frompyfunc(math.erf, 1, 1)

    def erf(x):
        return erf_scalar(x).astype(x.dtype)

    def index_add(x, index, src, *, axis):
        out = x.copy()
        np.add.at(out, (slice(None),) * axis + (index,), src)
        return out

    def scatter_add(x, index, src, *, axis):
        out = x.copy()
        if index.shape[axis] == 1:
            # one index per line along axis: no repeats, so a vectorised read-add-write
            # (np.add.at is an order of magnitude slower; max-pool gradients hit this)
            np.put_along_axis(out, index, np.take_along_axis(out, index, axis) + src, axis)
            return out
        grids = np.indices(index.shape, sparse=True)
        grids = tuple(index if d == axis else g for d, g in enumerate(grids))
        np.add.at(out, grids, src)
        return out

    def index_put(x, index, values):
        out = x.copy()
        out[index] = values
        return out

    def assign(dst, src):
        dst[...] = src

    return {"erf": erf, "index_add": index_add, "scatter_add": scatter_add,
            "index_put": index_put, "assign": assign}
