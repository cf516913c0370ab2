"""The CPU backend: the array-API kernel table with xp = NumPy; always available.

It registers through the `ember.plugins` entry point like any third-party backend.
"""
from __future__ import annotations

import math
import os
import warnings

import numpy as np
from ember import ops
from ember.backend import Capabilities, DeviceInfo, Probe
from ember.plugins import hookimpl

from .. import array_api
from . import conv as _conv
from . import linalg as _linalg
from . import loss as _loss
from . import reduce as _reduce
from . import rnn as _rnn
from . import spares as _spares

PLUGIN_API = 1          # the ember plugin API these hookimpls implement


def _sigmoid(x):
    """1 / (1 + exp(-x)) in one temporary, as PyTorch's CPU kernel: exp(-x) overflowing to
    inf gives 0, no nan; 4x the speed of the where() form of the array-API table."""
    t = np.negative(x, out=np.empty_like(x))      # a 0-d x gives a 0-d array, not a scalar
    np.exp(t, out=t)
    t += 1
    return np.reciprocal(t, out=t)


def _log_softmax(x, *, axis):
    """x - max - log(sum(exp(x - max))): the ops of the decomposition (ops/nn.py), the same
    values, without their temporaries or an ember op between them."""
    if x.ndim == 0:                    # one element: 0 (nan and inf give nan)
        return x - x
    if x.dtype.itemsize == 2 and x.dtype.kind in "fV":
        return _log_softmax_half(x, axis)
    shifted = np.subtract(x, _reduce.max_keepdims(x, axis))
    s = np.exp(shifted).sum(axis=axis, keepdims=True)
    shifted -= np.log(s, out=s)
    return shifted


def _log_softmax_half(x, axis):
    """float16 and bfloat16 as the decomposition's ops compute them, and PyTorch's CPU
    kernel: each step in float32 rounded to x's dtype (the sum accumulated in float32)."""
    f, dt = np.float32, x.dtype
    shifted = np.subtract(x, _reduce.max_keepdims(x, axis), dtype=f).astype(dt)
    s = np.exp(shifted, dtype=f).astype(dt).sum(axis=axis, keepdims=True, dtype=f)
    log_s = np.log(s.astype(dt), dtype=f).astype(dt)
    return np.subtract(shifted, log_s, dtype=f).astype(dt)


def _clamp(x, *, lo, hi):
    """np.clip with both bounds (an open side as an infinity): its compare-and-select loop
    keeps nan, gives hi where lo > hi and keeps -0.0, the where() form's values; with a
    bound of None np.clip takes np.maximum/np.minimum, whose max(-0.0, 0.0) is 0.0."""
    return np.clip(x, -np.inf if lo is None else lo, np.inf if hi is None else hi)


def _l2_norm(x, *, axes, keepdims):
    """sqrt(sum(x * x)): the decomposition's calls (ops/reduce.py), the same values."""
    return np.sqrt(np.add.reduce(np.multiply(x, x), axis=axes, keepdims=keepdims))


def _var(x, *, axes, keepdims, correction):
    """The decomposition's calls (ops/reduce.py), the same values: the mean as a sum over
    the count, the centered squares summed, over max(count - correction, 0)."""
    n = math.prod(x.shape[a] for a in axes)
    centered = x - np.add.reduce(x, axis=axes, keepdims=True) / n
    return np.add.reduce(centered * centered, axis=axes, keepdims=keepdims) / \
        max(n - correction, 0)


def _softmax(x, *, axis):
    if x.ndim == 0:                    # one element: 1 (nan stays nan)
        e = np.exp(x - x)
        return e / e
    e = np.exp(x - _reduce.max_keepdims(x, axis))
    return e / e.sum(axis=axis, keepdims=True)


_F16 = np.dtype(np.float16)


def _linear(x, w, b=None):
    if x.dtype is _F16:                # float32 BLAS products, rounded once: torch's result,
        out = np.matmul(x.astype(np.float32), w.T.astype(np.float32))   # ~8x NumPy's
        if b is not None:                                               # float16 loops
            out += b
        return out.astype(np.float16)
    # BLAS reads the transposed weight in place; a float result goes into a recycled
    # array (spares.py: a fresh one page-faults, every training step)
    if x.dtype == w.dtype and x.dtype.kind == "f":
        out = np.matmul(x, w.T, out=_spares.result(x.shape[:-1] + w.shape[:1], x.dtype))
    else:
        out = np.matmul(x, w.T)
    if b is not None:
        out += b
    return out


def _pool_taps(x, kernel_size, stride, padding, dilation, extra, fill):
    """One strided view per window position (tap) of an (N, C, H, W) array, each shaped
    like the output.  With small planes and many of them the work happens channels-last,
    so every tap op runs over long contiguous lines."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw), (eh, ew) = (kernel_size, stride, padding,
                                                        dilation, extra)
    n, c, h, w = x.shape
    oh = (h + 2 * ph + eh - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw + ew - dw * (kw - 1) - 1) // sw + 1
    # measured: channels-last pays for its transposes only on the smallest planes
    last = ow < 4 and ow < n * c
    if last and not (ph or pw or eh or ew):
        x = np.ascontiguousarray(x.transpose(2, 3, 0, 1))
    elif last:
        x = x.transpose(2, 3, 0, 1)          # the padded copy below makes it contiguous
    if ph or pw or eh or ew:
        plane = (h + 2 * ph + eh, w + 2 * pw + ew)
        if last:
            padded = np.full(plane + (n, c), fill, x.dtype)
            padded[ph:ph + h, pw:pw + w] = x
        else:
            padded = np.full((n, c) + plane, fill, x.dtype)
            padded[:, :, ph:ph + h, pw:pw + w] = x
        x = padded
    taps = []
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
            cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
            taps.append(x[rows, cols] if last else x[:, :, rows, cols])
    return taps, last, x.shape


def _lowest(dtype):
    """The padding of a max-pool: -inf, or the integer dtype's minimum."""
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf    # bfloat16's kind is V


def _unfold(x, *, kernel_size, dilation, padding, stride):
    """im2col as one copy: a strided (N, C, kh, kw, OH, OW) window view of the zero-padded
    input copied once into the (N, C*kh*kw, L) result (the array-API table stacks kh*kw
    strided slices: 2.5-4x slower; benchmarks/conv.py)."""
    n, c = x.shape[:2]
    (kh, kw), (dh, dw), (sh, sw) = kernel_size, dilation, stride
    src, oh, ow = _conv.padded_windows(x, kernel_size, dilation, padding, stride)
    s0, s1, s2, s3 = src.strides
    windows = np.lib.stride_tricks.as_strided(
        src, (n, c, kh, kw, oh, ow), (s0, s1, dh * s2, dw * s3, sh * s2, sw * s3),
        writeable=False)
    out = np.empty((n, c, kh, kw, oh, ow), dtype=x.dtype)     # a new array, never x's view
    np.copyto(out, windows)
    return out.reshape(n, c * kh * kw, oh * ow)


_FOLD_BLOCK = 1 << 20      # bytes of widened patches per block of images (L2: 1 MiB here)


def _fold(general):
    """col2im. A stride-1 fold adds each tap's plane as ONE contiguous run of the padded
    output's flattened plane: the patches are first copied once into rows widened to the
    padded output's width (zeros after each row's OW values, which land in the padding or
    add nothing), so tap (i, j) is out_flat[i*dh*P + j*dw:][:OH*P] += its widened plane.
    NumPy's strided adds of OW-long rows cost ~70 ns a row (a 3x3 fold of 32x64x16x16:
    46 ms against 9 here); the taps are added in the same order, so the sums are the same.
    Other strides, 1x1 kernels and planes under 8 columns take the array-API table's
    kernel."""
    def fold(cols, *, output_size, kernel_size, dilation, padding, stride):
        (h, w), (kh, kw), (dh, dw), (ph, pw) = output_size, kernel_size, dilation, padding
        n = cols.shape[0]
        c = cols.shape[1] // (kh * kw)
        ow = w + 2 * pw - dw * (kw - 1)
        # the table's kernel adds small planes channels-last, faster below 8 columns
        if stride != (1, 1) or kh * kw == 1 or ow < min(8, n * c):
            return general(cols, output_size=output_size, kernel_size=kernel_size,
                           dilation=dilation, padding=padding, stride=stride)
        hp, wp = h + 2 * ph, w + 2 * pw
        oh = hp - dh * (kh - 1)
        cols = cols.reshape(n, c, kh, kw, oh, ow)
        flat = np.zeros((n, c, hp * wp + dw * (kw - 1)), dtype=cols.dtype)
        # a few images at a time, so that the widened patches and the planes they add into
        # stay in the cache across the kh*kw adds (the whole batch's do not: 2-4x slower)
        per_image = c * kh * kw * oh * wp * cols.itemsize
        step = max(1, min(n, _FOLD_BLOCK // max(per_image, 1)))
        wide = np.zeros((step, c, kh, kw, oh, wp), dtype=cols.dtype)
        for b in range(0, n, step):
            m = min(step, n - b)
            part = wide[:m]
            part[..., :ow] = cols[b:b + m]
            part = part.reshape(m, c, kh, kw, oh * wp)
            block = flat[b:b + m]
            for i in range(kh):
                for j in range(kw):
                    start = i * dh * wp + j * dw
                    block[:, :, start:start + oh * wp] += part[:, :, i, j]
        return flat[:, :, :hp * wp].reshape(n, c, hp, wp)[:, :, ph:ph + h, pw:pw + w]
    return fold


def _max_pool2d(x, *, kernel_size, stride, padding, dilation, extra):
    fill = _lowest(x.dtype)
    taps, last, _ = _pool_taps(x, kernel_size, stride, padding, dilation, extra, fill)
    out = taps[0].copy()
    for tap in taps[1:]:
        np.maximum(out, tap, out=out)          # NaN propagates, as in PyTorch
    return np.ascontiguousarray(out.transpose(2, 3, 0, 1)) if last else out


def _max_pool2d_backward(g, x, out, *, kernel_size, stride, padding, dilation, extra):
    """The gradient goes to the first maximum of each window (PyTorch's choice)."""
    fill = _lowest(x.dtype)
    taps, last, padded_shape = _pool_taps(x, kernel_size, stride, padding, dilation, extra,
                                          fill)
    grad = np.zeros(padded_shape, g.dtype)
    if last:
        g = np.ascontiguousarray(g.transpose(2, 3, 0, 1))
        out = np.ascontiguousarray(out.transpose(2, 3, 0, 1))
    (kh, kw), (sh, sw), (dh, dw) = kernel_size, stride, dilation
    oh, ow = out.shape[:2] if last else out.shape[2:]
    disjoint = sh >= dh * (kh - 1) + 1 and sw >= dw * (kw - 1) + 1
    free = np.ones(out.shape, bool)           # windows whose maximum is not yet found
    hit = np.empty(out.shape, bool)
    routed = np.empty(g.shape, g.dtype)
    k = 0
    for i in range(kh):
        for j in range(kw):
            np.equal(taps[k], out, out=hit)
            hit &= free
            free ^= hit
            rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
            cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
            region = grad[rows, cols] if last else grad[:, :, rows, cols]
            if disjoint:
                np.multiply(g, hit, out=region)     # windows do not overlap: write, not add
            else:
                np.multiply(g, hit, out=routed)
                region += routed
            k += 1
    (ph, pw), h, w = padding, x.shape[2], x.shape[3]
    grad = grad[ph:ph + h, pw:pw + w] if last else grad[:, :, ph:ph + h, pw:pw + w]
    return np.ascontiguousarray(grad.transpose(2, 3, 0, 1)) if last else grad


def _tanh_backward(g, out):
    r = np.multiply(out, out, out=np.empty_like(out))   # g * (1 - out^2), one temporary
    np.subtract(1, r, out=r)
    return np.multiply(g, r, out=r)


def _full(general):
    """full: np.zeros for a zero fill (calloc'd memory: 32x32 0.3 us against np.full's 1.5;
    not -0.0, whose sign np.zeros would drop), the general kernel otherwise."""
    def kernel(*, shape, value, dtype):
        if value == 0 and not (type(value) is float and math.copysign(1.0, value) < 0):
            return np.zeros(shape, array_api._dt(np, dtype))
        return general(shape=shape, value=value, dtype=dtype)
    return kernel


_INT_OF_SIZE = {2: np.int16, 4: np.int32, 8: np.int64}


def _relu(x):
    return np.maximum(x, 0)


def _relu_backward(g, out):
    """g where relu's output is not 0 (positive or nan: ~(out <= 0) on what relu gives),
    else +0, as PyTorch's threshold_backward selects (a product would give nan for an
    infinite g and -0 for a negative one): g's bits AND a mask of all ones or zeros, 4
    passes with no float arithmetic (19 us on 128x256 float32, np.where 206 us)."""
    keep = np.not_equal(out, 0)
    as_int = _INT_OF_SIZE.get(g.dtype.itemsize)
    if g.dtype.kind not in "fV" or as_int is None or g.shape != keep.shape or not keep.ndim:
        return np.where(keep, g, np.zeros((), g.dtype))
    mask = keep.view(np.uint8).astype(as_int)
    np.negative(mask, out=mask)                               # 1 -> all ones
    return np.bitwise_and(g.view(as_int), mask, out=mask).view(g.dtype)


def _sigmoid_backward(g, out):
    r = np.subtract(1, out, out=np.empty_like(out))     # g * out * (1 - out), one temporary
    np.multiply(r, out, out=r)
    return np.multiply(g, r, out=r)


def _ufunc_reduce(ufunc, general, halves: bool = False):
    """ufunc.reduce; the general kernel for identities, errors and (halves=True) float16
    and bfloat16, which it accumulates in float32.  max and min over short rows reduce
    their transposed copy (the same values: no rounding; sums keep NumPy's order)."""
    reduce = ufunc.reduce
    exact = ufunc in (np.maximum, np.minimum)

    def kernel(x, *, axes, keepdims):
        if not axes or not x.size or (halves and x.dtype.itemsize == 2 and
                                      x.dtype.kind in "fV"):
            return general(x, axes=axes, keepdims=keepdims)   # identities and errors
        if exact and len(axes) == 1 and _reduce.short_rows(x, axes[0]):
            return _reduce.by_columns(reduce, x, keepdims)
        return reduce(x, axis=axes, keepdims=keepdims)
    return kernel


def _arg_reduce(general, fn):
    """argmax/argmin: over short rows from their transposed copy (the first index of the
    extreme value, or of the first nan, as over the rows)."""
    def kernel(x, *, axis, keepdims):
        if axis is not None and x.size and _reduce.short_rows(x, axis):
            return _reduce.by_columns(fn, x, keepdims)
        return general(x, axis=axis, keepdims=keepdims)
    return kernel


_SCALAR_KINDS = ("unary", "binary", "reduce", "linalg", "composite", "gradient")


def _arrays(fn, kind, ndarray=np.ndarray, asarray=np.asarray):
    """fn, with a NumPy scalar result made a 0-d array, and NumPy's notes on inf and nan
    (RuntimeWarning: PyTorch says nothing there) kept quiet even where warnings are errors.
    One wrapper per arity (the defaults bind the names): *args costs more than the rest of
    a small op's dispatch; the try costs nothing until a warning is raised."""
    if kind == "unary":
        def kernel(x):
            try:
                out = fn(x)
            except RuntimeWarning:
                with np.errstate(all="ignore"):
                    out = fn(x)
            return out if out.__class__ is ndarray else asarray(out)
    elif kind == "binary":
        def kernel(x, y):
            try:
                out = fn(x, y)
            except RuntimeWarning:
                with np.errstate(all="ignore"):
                    out = fn(x, y)
            return out if out.__class__ is ndarray else asarray(out)
    elif kind == "reduce":
        def kernel(x, **attrs):
            try:
                out = fn(x, **attrs)
            except RuntimeWarning:
                with np.errstate(all="ignore"):
                    out = fn(x, **attrs)
            return out if out.__class__ is ndarray else asarray(out)
    else:
        def kernel(*args, **kwargs):
            try:
                out = fn(*args, **kwargs)
            except RuntimeWarning:
                with np.errstate(all="ignore"):
                    out = fn(*args, **kwargs)
            return out if out.__class__ is ndarray else asarray(out)
    kernel.__name__ = getattr(fn, "__name__", "kernel")
    kernel.__wrapped__ = fn
    return kernel


# NumPy's floating-point notes issued from ember's own kernels (inf * 0, exp overflow) stay
# quiet, as PyTorch's do; the filter matches warnings raised in ember.backends only, so user
# code keeps NumPy's default
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"ember\.backends(\.|$)")


def _inplace(ufunc):
    def kernel(x, y):
        if 0 in x.strides and array_api.overlapping(x):
            raise ValueError(array_api.OVERLAP)
        return ufunc(x, y, out=x)
    return kernel


def _expand(x, *, shape):
    lead = len(shape) - x.ndim
    strides = [0] * lead + [0 if n == 1 and m != 1 else s for n, m, s in
                            zip(x.shape, shape[lead:], x.strides)]
    if x.flags.c_contiguous and x.size:
        # the view straight over x's memory (its base is x; writeable where x is): 1 us,
        # where as_strided's Python takes 10-15
        return np.ndarray(shape, x.dtype, x, 0, strides)
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=x.flags.writeable)


def _along(x, index, axis):
    """The fancy index that reads x along `axis` at `index` (take_along_axis's), or None
    where index and x differ outside axis (the general kernel's case)."""
    shape = index.shape
    if not index.ndim or index.ndim != x.ndim or any(
            a != b for d, (a, b) in enumerate(zip(shape, x.shape)) if d != axis):
        return None
    ones = (1,) * index.ndim
    return tuple(index if d == axis else np.arange(n).reshape(ones[:d] + (n,) + ones[d + 1:])
                 for d, n in enumerate(shape))


def _gather(general):
    def gather(x, index, *, axis):
        where = _along(x, index, axis)
        return general(x, index, axis=axis) if where is None else x[where]
    return gather


def _scatter_add(general):
    def scatter_add(x, index, src, *, axis):
        # one index per line along axis (cross-entropy's and max-pool's gradients): no
        # repeats, so one read-add-write through a fancy index (put_along_axis and
        # take_along_axis spend 20-60 us in Python on a small array)
        where = _along(x, index, axis) if index.ndim and index.shape[axis] == 1 and \
            src.shape == index.shape else None
        if where is None:
            return general(x, index, src, axis=axis)
        out = x.copy()
        out[where] = out[where] + src
        return out
    return scatter_add


def _scipy_fft():
    try:
        import scipy.fft
    except ImportError:
        return None
    return scipy.fft


class CPUBackend:
    """NumPy on the host."""

    name = "cpu"
    aliases = ()
    # NumPy mixes ml_dtypes' bfloat16 with Python numbers in float32: compute bfloat16
    # elementwise math in float32 and round the result (the dispatcher does it)
    upcast_bfloat16 = True
    # NumPy's slicing, reshape, transpose and broadcast_to return views, negative steps too
    views = "strided"

    def __init__(self):
        table = array_api.numpy_like(np)
        table.update(array_api.numpy_extras(np))
        # scipy.fft where it is installed: NumPy's pocketfft too, but a 2-D float32 FFT of
        # 1024x1024 took 6 ms there against NumPy's 55 ms (benchmarks/fft.py)
        table.update(array_api.fft_kernels(np, _scipy_fft, native=True))
        # LAPACK's getrf/getrs through scipy where it is installed (NumPy has no getrf)
        table.update(_linalg.kernels())
        # NumPy's notes on log(0), x/0 and overflow stay quiet without errstate (1 us a
        # call): see _arrays and the warnings filter below
        table["softmax"] = _softmax                  # a composite's faster kernel
        table["log_softmax"] = _log_softmax
        table["clamp"] = _clamp
        table["l2_norm"] = _l2_norm
        table["var"] = _var
        table["sigmoid"] = _sigmoid
        # a copy in row-major order whatever the source layout (asarray(copy=True) keeps a
        # transposed layout, and gradients of transposed weights would stay slow to update)
        table["contiguous"] = lambda x: np.array(x, order="C", copy=True)
        # fused gradient kernels the engine uses when create_graph is off
        table["relu"] = _relu                       # a composite's one-kernel form
        # 0 where out <= 0, else g: a nan output passes g, as PyTorch's threshold_backward
        table["relu_backward"] = _relu_backward
        # in-place forms (x op= y, broadcasting y) for optimizer updates without temporaries
        for name, ufunc in (("add_", np.add), ("sub_", np.subtract), ("mul_", np.multiply),
                            ("div_", np.divide)):
            table[name] = _inplace(ufunc)
        # writeable broadcast views: a write into one row of x.expand(2, 3) reaches x (as in
        # PyTorch); writes whose target overlaps itself are refused by assign and _inplace
        table["expand"] = _expand
        table["gather"] = _gather(table["gather"])
        table["scatter_add"] = _scatter_add(table["scatter_add"])
        # ndarray methods skip the Python wrappers of np.reshape/np.permute_dims (0.7 us
        # each, on the hot path of every view)
        table["reshape"] = lambda x, *, shape: x.reshape(shape)
        table["permute"] = lambda x, *, dims: x.transpose(dims)
        table["linear"] = _linear
        table["unfold"] = _unfold
        table["fold"] = _fold(table["fold"])
        # conv2d and its gradients (ops/nn.py): Winograd for 3x3 stride 1 (backends/cpu/conv.py)
        table.update(_conv.kernels(table["unfold"], table["fold"]))
        table["max_pool2d"] = _max_pool2d
        table["full"] = _full(table["full"])
        # cross-entropy over class indices and its gradient, one pass each (ops/loss.py)
        table["cross_entropy"] = _loss.cross_entropy
        table["cross_entropy_backward"] = _loss.cross_entropy_backward
        table["max_pool2d_backward"] = _max_pool2d_backward
        table["tanh_backward"] = _tanh_backward
        table["sigmoid_backward"] = _sigmoid_backward
        # an LSTM or GRU direction's whole time loop in one call (ops/rnn.py's
        # lstm_sequence, gru_sequence)
        table["lstm_sequence"] = _rnn.lstm_sequence
        table["lstm_sequence_backward"] = _rnn.lstm_sequence_backward
        table["gru_sequence"] = _rnn.gru_sequence
        table["gru_sequence_backward"] = _rnn.gru_sequence_backward
        # the ufuncs' reduce skips np.sum's Python wrapper: a microsecond on small tensors
        for name, ufunc in (("sum", np.add), ("prod", np.multiply), ("max", np.maximum),
                            ("min", np.minimum), ("any", np.logical_or),
                            ("all", np.logical_and)):
            table[name] = _ufunc_reduce(ufunc, table[name], name in ("sum", "prod"))
        table["argmax"] = _arg_reduce(table["argmax"], np.argmax)
        table["argmin"] = _arg_reduce(table["argmin"], np.argmin)
        # NumPy gives 0-d results as scalars, which nothing can write into (`loss += 1`,
        # `t[...] = 0`) and which no view shares: the contract is an array from every kernel
        for name, op in ops.REGISTRY.items():
            if name in table and op.kind in _SCALAR_KINDS:
                table[name] = _arrays(table[name], op.kind if name != "cast" else "")
        self.kernels = table

    def probe(self) -> Probe:
        return Probe(True, details={"numpy": np.__version__})

    def devices(self) -> list[DeviceInfo]:
        return [DeviceInfo(None, f"host CPU ({os.cpu_count()} cores)", "cpu",
                           platform="NumPy " + np.__version__)]

    def from_host(self, array, index=None):
        return array

    def to_host(self, native):
        return native

    def strides(self, native) -> tuple:
        itemsize = native.itemsize
        return tuple(s // itemsize for s in native.strides)

    def data_ptr(self, native) -> int:
        return native.__array_interface__["data"][0]

    def capabilities(self, index=None) -> Capabilities:
        from ember import dtypes
        return Capabilities(frozenset(d.name for d in dtypes.ALL))

    def synchronize(self, index=None) -> None:
        pass

    def compile_graph(self, graph):
        """ember.compile's replay: the generic one, with the rewrites graphs.py makes
        (None where it makes none)."""
        from .graphs import compile_graph
        return compile_graph(graph)

    def set_num_threads(self, n: int) -> None:
        """NumPy's BLAS (matmul, linear, conv, linalg) uses n threads from now on, through
        threadpoolctl (imported here, not at `import ember`); elementwise NumPy is
        single-threaded anyway.  Applies to the BLAS libraries loaded in this process."""
        from threadpoolctl import threadpool_limits
        threadpool_limits(limits=n, user_api="blas")


@hookimpl
def ember_backends():
    return [CPUBackend()]
