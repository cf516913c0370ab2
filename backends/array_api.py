"""ONE kernel table over an array namespace `xp`: NumPy for the CPU, CuPy for CUDA/ROCm.

Everything in `kernels(xp)` uses only the Python array API standard (a test runs it with
array_api_strict).  The few kernels the standard cannot express are named in
LIBRARY_SPECIFIC and supplied per library (numpy_extras here, cupy's in backends/cupy).
"""
from __future__ import annotations

import math

# Kernels each library supplies itself: scatter/accumulate, erf, in-place writes, and the
# general eigenproblem (the standard has no eig, CuPy none for non-symmetric matrices).
LIBRARY_SPECIFIC = ("erf", "index_add", "scatter_add", "index_put", "assign", "eig",
                    "eigvals")


def _dt(xp, dtype):
    """The namespace's dtype for an ember dtype."""
    name = dtype.name
    if name == "bfloat16":
        return dtype.np           # NumPy via ml_dtypes; others reject it via capabilities
    return getattr(xp, name)


def kernels(xp, native: bool = False) -> dict:
    """The standard-only kernel table for namespace xp (see ember.ops for signatures).
    native=True (numpy_like: NumPy, CuPy) lets a few kernels use what those libraries have
    beyond the standard (partial selection, out= arguments)."""
    ints = (xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8)

    def integral(v) -> bool:
        return isinstance(v, int) or getattr(v, "dtype", None) in ints

    def identity_on(kinds, fn):
        # sign/floor/ceil/round of bool (and floor/ceil/round of ints) are the input, as in
        # PyTorch (NumPy has no bool sign, and its bool round gives float16)
        def k(x):
            if x.dtype == xp.bool or (kinds == "ints" and x.dtype in ints):
                return xp.asarray(x, copy=True)
            return fn(x)
        return k

    def is_bool(v) -> bool:
        return isinstance(v, bool) or getattr(v, "dtype", None) == xp.bool

    def as_bool(fn):
        # logical ops take numbers too (nonzero is true), as in PyTorch
        def k(*xs):
            return fn(*[x if is_bool(x) or not hasattr(x, "dtype") else x != 0 for x in xs])
        return k

    def bool_logic(numeric, logic):
        # bool + bool is or, bool * bool and, max/min of bools or/and (PyTorch); the standard
        # defines no arithmetic on bool
        def k(x, y):
            return logic(x, y) if is_bool(x) and is_bool(y) else numeric(x, y)
        return k

    def bool_as_uint8(fn, back: bool = False):
        # comparisons, max/min and argmax of bool arrays, through uint8 (False < True)
        def k(*xs, **attrs):
            out = fn(*[xp.astype(x, xp.uint8) if is_bool(x) and hasattr(x, "dtype") else x
                       for x in xs], **attrs)
            return xp.astype(out, xp.bool) if back and is_bool(xs[0]) else out
        return k

    def float_test(fn, on_bool: bool):
        # isnan/isinf/isfinite of bool: never nan nor inf (the standard takes numbers only)
        def k(x):
            return xp.full(x.shape, on_bool, dtype=xp.bool) if is_bool(x) else fn(x)
        return k

    def nonzero_divisor(fn):
        # integer // 0 and % 0 raise, as PyTorch's CPU (NumPy would give 0 and warn):
        # docs/semantics.md, integer_division_by_zero_raises
        def k(x, y):
            if integral(x) and integral(y) and (
                    y == 0 if isinstance(y, int) else bool(xp.any(y == 0))):
                raise ZeroDivisionError("integer division by zero; divide floats "
                                        "(x.float()) to get inf and nan instead")
            return fn(x, y)
        return k

    def pow_(x, y):
        # integers to negative integer powers raise (NumPy), tensor exponents too
        if integral(x) and integral(y) and (
                y < 0 if isinstance(y, int) else bool(xp.any(y < 0))):
            raise ValueError("Integers to negative integer powers are not allowed; use a "
                             "float base or exponent (x.float() ** y)")
        return xp.pow(x, y)

    def half(fn):
        # float16 and bfloat16 sums and products accumulate in float32 and round once, as
        # PyTorch (a bfloat16 running sum stops growing at 256 ones)
        def k(x, *, axes, keepdims):
            name = x.dtype.name if hasattr(x.dtype, "name") else str(x.dtype)
            if axes and name in ("float16", "bfloat16"):
                wide = fn(xp.astype(x, xp.float32), axes=axes, keepdims=keepdims)
                return xp.astype(wide, x.dtype)
            return fn(x, axes=axes, keepdims=keepdims)
        return k

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
        if ow < min(8, n * c):
            # small planes, many of them: add the taps with batch x channels innermost, so
            # each strided add runs over long contiguous lines (4x faster on 4x4 planes;
            # from 8 columns on, the plane-by-plane adds below win: 2.5x on 16x16)
            taps = xp.permute_dims(cols, (2, 3, 4, 0, 1))
            out = xp.zeros((h + 2 * ph, w + 2 * pw, n, c), dtype=cols.dtype)
            for i in range(kh):
                for j in range(kw):
                    out[i * dh:i * dh + sh * (oh - 1) + 1:sh,
                        j * dw:j * dw + sw * (ow - 1) + 1:sw, ...] += taps[i * kw + j, ...]
            return xp.permute_dims(out[ph:ph + h, pw:pw + w, ...], (2, 3, 0, 1))
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

    def argsort(x, *, axis, descending):
        if not descending:
            return xp.astype(xp.argsort(x, axis=axis, stable=True), xp.int64)
        # stable and descending: sort the reversed line ascending and read it backwards
        # (ties keep their order; nan, sorted last ascending, comes first, as in PyTorch)
        idx = xp.argsort(xp.flip(x, axis=axis), axis=axis, stable=True)
        return xp.astype(x.shape[axis] - 1 - xp.flip(idx, axis=axis), xp.int64)

    def div(x, y):
        return xp.divide(x, y)

    def topk(x, *, axis, k, largest):
        """The k largest (smallest) along axis by a partial selection (O(n)), then a stable
        sort of those k: the same indices as the first k of the stable argsort."""
        n = x.shape[axis]

        def first_k_sorted():
            return xp.asarray(argsort(x, axis=axis, descending=largest)[
                (slice(None),) * axis + (slice(0, k), ...)])
        # NumPy's partition orders nan last (the largest, as topk): another library's nan
        # takes the sort, as before (checked on NumPy only)
        if not native or k == 0 or k == n or x.dtype.kind in "bc" or (
                x.dtype.kind == "f" and xp.__name__ != "numpy" and bool(xp.isnan(x).any())):
            return first_k_sorted()
        lines = xp.moveaxis(x, axis, -1)
        pos = n - k if largest else k - 1
        # the k best by one partial selection (NumPy orders nan last: the largest); where
        # no other key equals the k-th, they are the answer, else the lower indices of the
        # equal keys must win: the general selection below (so must nan, which == misses)
        part = xp.argpartition(lines, pos, axis=-1)
        part = part[..., pos:] if largest else part[..., :k]
        picked = xp.take_along_axis(lines, part, axis=-1)
        kth = picked[..., :1] if largest else picked[..., k - 1:]
        if not (x.dtype.kind == "f" and bool(xp.isnan(picked).any())) and bool(
                (xp.sum(lines == kth, axis=-1) == xp.sum(picked == kth, axis=-1)).all()):
            index = xp.sort(part, axis=-1).reshape(-1, k)          # ascending in each row
        elif x.dtype.kind == "f" and bool(xp.isnan(x).any()):
            return first_k_sorted()
        else:
            beyond = lines > kth if largest else lines < kth
            tied = lines == kth
            # all beyond the k-th value, then the first (by index) of those equal to it
            room = k - xp.sum(beyond, axis=-1, keepdims=True)
            chosen = beyond | (tied & (xp.cumsum(tied, axis=-1) <= room))
            rows = chosen.reshape(-1, n)
            index = xp.nonzero(rows)[1].reshape(rows.shape[0], k)  # ascending in each row
        values = xp.take_along_axis(lines.reshape(-1, n), index, axis=-1)
        if largest:       # stable descending: sort the reversed line ascending, read back
            order = k - 1 - xp.flip(xp.argsort(xp.flip(values, axis=-1), axis=-1,
                                               stable=True), axis=-1)
        else:
            order = xp.argsort(values, axis=-1, stable=True)
        index = xp.take_along_axis(index, order, axis=-1)
        return xp.astype(xp.moveaxis(index.reshape(lines.shape[:-1] + (k,)), -1, axis),
                         xp.int64)

    # the standard leaves a negative count undefined: PyTorch (and NumPy) shift every bit out
    def left_shift(x, s):
        negative = s < 0
        out = xp.bitwise_left_shift(x, xp.where(negative, xp.zeros_like(s), s))
        return xp.where(negative, xp.zeros_like(out), out)

    def right_shift(x, s):
        negative = s < 0
        out = xp.bitwise_right_shift(x, xp.where(negative, xp.zeros_like(s), s))
        sign = xp.where(x < 0, -xp.ones_like(out), xp.zeros_like(out)) \
            if xp.isdtype(x.dtype, "signed integer") else xp.zeros_like(out)
        return xp.where(negative, sign, out)

    # the recurrent cells (ops/rnn.py): the gate arithmetic of one step in one kernel
    def logistic(x):
        # 1 / (1 + exp(-x)) in one temporary (exp(-x) overflowing to inf gives 0)
        t = xp.exp(-x)
        t += 1
        return xp.reciprocal(t, out=t) if native else 1 / t

    def lstm_cell(gates, c):
        # out: h, c, then what the gradient reads (tanh(c), i, f, tanh(g), o): (N, 7H)
        n = c.shape[-1]
        out = xp.empty((c.shape[0], 7 * n), dtype=c.dtype)
        act = out[:, 3 * n:]
        act[...] = logistic(gates)
        act[:, 2 * n:3 * n] = xp.tanh(gates[:, 2 * n:3 * n])
        c2 = out[:, n:2 * n]
        c2[...] = act[:, n:2 * n] * c
        c2 += act[:, :n] * act[:, 2 * n:3 * n]
        tc = out[:, 2 * n:3 * n]
        tc[...] = xp.tanh(c2)
        out[:, :n] = act[:, 3 * n:] * tc
        return out

    def lstm_cell_backward(grad, out, gates, c):
        n = c.shape[-1]
        gh, gc = grad[:, :n], grad[:, n:2 * n]
        tc, i, f, g, o = (out[:, k * n:(k + 1) * n] for k in range(2, 7))
        d = xp.empty((c.shape[0], 5 * n), dtype=c.dtype)
        dc2 = gh * o
        dc2 *= 1 - tc * tc
        dc2 += gc
        d[:, :n] = (dc2 * g) * (i * (1 - i))
        d[:, n:2 * n] = (dc2 * c) * (f * (1 - f))
        d[:, 2 * n:3 * n] = (dc2 * i) * (1 - g * g)
        d[:, 3 * n:4 * n] = (gh * tc) * (o * (1 - o))
        d[:, 4 * n:] = (dc2) * (f)
        return d

    def _gru(gi, gh, h):
        n = h.shape[-1]
        rz = logistic(gi[:, :2 * n] + gh[:, :2 * n])
        r, z = rz[:, :n], rz[:, n:]
        return r, z, xp.tanh(gi[:, 2 * n:] + r * gh[:, 2 * n:])

    def gru_cell(gi, gh, h):
        r, z, new = _gru(gi, gh, h)
        return new + z * (h - new)

    def gru_cell_backward(grad, gi, gh, h):
        n = h.shape[-1]
        r, z, new = _gru(gi, gh, h)
        dn = grad * (1 - z) * (1 - new * new)
        dr = dn * gh[:, 2 * n:] * r * (1 - r)
        dz = grad * (h - new) * z * (1 - z)
        return xp.concat([dr, dz, dn, dr, dz, dn * r, grad * z], axis=1)

    def complex_(re, im):
        dtype = xp.complex64 if re.dtype == xp.float32 else xp.complex128
        if not native:       # the standard has no part setters (inf * 1j is nan + inf j)
            return xp.astype(re, dtype) + xp.astype(im, dtype) * 1j
        out = xp.empty(xp.broadcast_shapes(re.shape, im.shape), dtype=dtype)
        out.real[...] = re      # re + 1j * im would turn inf * 1j into nan + inf j
        out.imag[...] = im
        return out

    def unique(x):
        if x.shape[0] == 0:
            return xp.asarray(x, copy=True)
        # of equal floats the first keeps its sign (-0.0, 0.0): a stable sort; integers
        # need none (the faster sort)
        values = xp.sort(x, stable=xp.isdtype(x.dtype, ("real floating",
                                                         "complex floating")))
        first = xp.concat([xp.ones((1,), dtype=xp.bool), values[1:] != values[:-1]])
        return values[first]

    return {
        "neg": xp.negative, "abs": identity_on("bool", xp.abs),
        "sign": identity_on("bool", xp.sign), "exp": xp.exp, "log": xp.log,
        "log1p": xp.log1p, "expm1": xp.expm1, "sqrt": xp.sqrt,
        "rsqrt": lambda x: 1 / xp.sqrt(x), "sin": xp.sin, "cos": xp.cos, "tanh": xp.tanh,
        "tan": xp.tan,
        "asin": xp.asin, "acos": xp.acos, "atan": xp.atan, "asinh": xp.asinh,
        "acosh": xp.acosh, "atanh": xp.atanh,
        "sigmoid": sigmoid, "floor": identity_on("ints", xp.floor),
        "ceil": identity_on("ints", xp.ceil), "round": identity_on("ints", xp.round),
        "reciprocal": lambda x: 1 / x, "logical_not": as_bool(xp.logical_not),
        "isnan": float_test(xp.isnan, False), "isinf": float_test(xp.isinf, False),
        "isfinite": float_test(xp.isfinite, True),
        "add": bool_logic(xp.add, xp.logical_or), "sub": xp.subtract,
        "mul": bool_logic(xp.multiply, xp.logical_and), "div": div, "pow": pow_,
        "maximum": bool_logic(xp.maximum, xp.logical_or),
        "minimum": bool_logic(xp.minimum, xp.logical_and),
        "remainder": nonzero_divisor(remainder),
        "floor_divide": nonzero_divisor(xp.floor_divide), "eq": xp.equal,
        "ne": xp.not_equal, "lt": bool_as_uint8(xp.less),
        "le": bool_as_uint8(xp.less_equal), "gt": bool_as_uint8(xp.greater),
        "ge": bool_as_uint8(xp.greater_equal),
        "logical_and": as_bool(xp.logical_and), "logical_or": as_bool(xp.logical_or),
        "logical_xor": as_bool(xp.logical_xor), "where": xp.where, "cast": cast,
        "sum": half(sum_), "prod": half(prod_), "max": bool_as_uint8(reduce(xp.max), True),
        "min": bool_as_uint8(reduce(xp.min), True),
        "any": logical(xp.any), "all": logical(xp.all),
        "argmax": bool_as_uint8(arg(xp.argmax)), "argmin": bool_as_uint8(arg(xp.argmin)),
        "reshape": lambda x, *, shape: xp.reshape(x, shape),
        "permute": lambda x, *, dims: xp.permute_dims(x, dims),
        "expand": lambda x, *, shape: xp.broadcast_to(x, shape),
        "slice": slice_, "slice_scatter": slice_scatter, "flip": flip, "pad": pad,
        "concatenate": lambda *xs, axis: xp.concat(xs, axis=axis),
        "contiguous": lambda x: xp.asarray(x, copy=True),
        "take": take, "gather": lambda x, index, *, axis: xp.take_along_axis(x, index, axis=axis),
        "nonzero": nonzero, "matmul": xp.matmul, "unfold": unfold, "fold": fold,
        "full": full, "arange": arange, "argsort": argsort,
        "cumsum": lambda x, *, axis: xp.cumulative_sum(x, axis=axis),
        "cumprod": lambda x, *, axis: xp.cumulative_prod(x, axis=axis),
        # declared kernels (ops/special.py, ops/bitwise.py): one pass instead of their
        # decompositions (xp's shifts by a count past the width or negative are PyTorch's)
        "atan2": xp.atan2, "bitwise_and": xp.bitwise_and, "bitwise_or": xp.bitwise_or,
        "bitwise_xor": xp.bitwise_xor, "bitwise_not": xp.bitwise_invert,
        "bitwise_left_shift": left_shift, "bitwise_right_shift": right_shift,
        # complex parts (ops/complex.py): new arrays, never views of the input
        "real": lambda x: xp.asarray(xp.real(x), copy=True),
        "imag": lambda x: xp.asarray(xp.imag(x), copy=True), "conj": xp.conj,
        "complex": complex_,
        "topk": topk, "unique": unique, "lstm_cell": lstm_cell,
        "lstm_cell_backward": lstm_cell_backward, "gru_cell": gru_cell,
        "gru_cell_backward": gru_cell_backward,
        **linalg_kernels(xp),
        **fft_kernels(xp, native=native),
    }


# PyTorch's fft_norm_mode -> the standard's norm= for a forward (fftn, rfftn) and a
# backward (ifftn, irfftn) transform
_NORM_FORWARD = {"none": "backward", "by_n": "forward", "by_root_n": "ortho"}
_NORM_BACKWARD = {"none": "forward", "by_n": "backward", "by_root_n": "ortho"}


def fft_kernels(xp, module=None, native: bool = False) -> dict:
    """fft_c2c, fft_r2c, fft_c2r (core/ops/fft.py) through the standard's fft extension
    (xp.fft: numpy.fft, cupy.fft, array_api_strict.fft), or through `module`, a namespace
    with the same fftn/ifftn/rfftn/irfftn (the CPU backend hands scipy.fft: the same
    pocketfft, several times faster on real input).  `module` may be a function returning
    it (imported on the first call).  native=True: the library transforms real input in
    fftn itself (NumPy, SciPy, CuPy); the standard's fftn wants complex input."""
    found = []

    def fft():
        if not found:
            m = module() if callable(module) else module
            found.append(m if m is not None else xp.fft)
        return found[0]

    def astype(a, dtype):
        # NumPy and CuPy arrays have the method (CuPy has no module-level astype); the
        # standard has the function
        if native:
            return a.astype(dtype, copy=False)
        return xp.astype(a, dtype, copy=False)

    def complex_of(x):
        return xp.complex64 if x.dtype in (xp.float32, xp.complex64) else xp.complex128

    def real_of(x):
        return xp.float32 if x.dtype == xp.complex64 else xp.float64

    def c2c(x, *, dims, normalization, forward):
        if forward:
            out = fft().fftn(x, axes=list(dims), norm=_NORM_FORWARD[normalization])
        else:
            out = fft().ifftn(x, axes=list(dims), norm=_NORM_BACKWARD[normalization])
        return astype(out, x.dtype)

    def r2c(x, *, dims, normalization, onesided):
        norm = _NORM_FORWARD[normalization]
        if onesided:
            out = fft().rfftn(x, axes=list(dims), norm=norm)
        else:
            out = fft().fftn(x if native else astype(x, complex_of(x)), axes=list(dims),
                             norm=norm)
        return astype(out, complex_of(x))

    def c2r(x, *, dims, normalization, last_dim_size):
        sizes = [x.shape[d] for d in dims[:-1]] + [last_dim_size]
        out = fft().irfftn(x, s=sizes, axes=list(dims), norm=_NORM_BACKWARD[normalization])
        return astype(out, real_of(x))

    return {"fft_c2c": c2c, "fft_r2c": r2c, "fft_c2r": c2r}


def _svdvals(xp):
    """linalg.svdvals, which CuPy (and NumPy before 2.0) spell svd(compute_uv=False)."""
    found = getattr(xp.linalg, "svdvals", None)
    if found is not None:
        return found
    return lambda a: xp.linalg.svd(a, compute_uv=False)


def linalg_kernels(xp) -> dict:
    """The decompositions (core/ops/decompositions.py) through the standard's linalg
    extension; a singular or non-definite input raises, as in PyTorch, never inf/nan.

    Non-finite input (docs/semantics.md, non_finite_linear_algebra) never reaches LAPACK
    where its answer would be garbage (eigvalsh of [[nan, 0], [0, 1]] is [0, -0] there,
    MKL crashes on some): per matrix, eigvalsh/eigh and qr give nan, svd gives nan for
    infinities and raises for nan, cholesky raises, inv and solve give nan for a matrix
    holding a nan.
    A finite input pays one isfinite pass per call (eigh, svd, qr, cholesky) or nothing
    (inv, solve: the output is looked at, as before)."""
    from ember.errors import EmberValueError

    nan = float("nan")

    def finite(a):
        """Per matrix: whether all its entries are finite, shape (*,)."""
        return xp.all(xp.isfinite(a), axis=(-2, -1))

    def has_nan(a):
        return xp.any(xp.isnan(a), axis=(-2, -1))

    def fill(ok, out, value=nan):
        """out where the matrix was fine, else `value`: ok (*,) broadcast to out's shape."""
        mask = xp.reshape(ok, ok.shape + (1,) * (out.ndim - ok.ndim))
        return xp.where(mask, out, xp.full(out.shape, value, dtype=out.dtype))

    def zeroed(ok, a):
        """a with the matrices ok marks False replaced by zeros (what LAPACK then sees)."""
        return xp.where(xp.reshape(ok, ok.shape + (1, 1)), a, xp.zeros_like(a))

    def checked(name, fn, why):
        def kernel(*arrays, **attrs):
            try:
                out = fn(*arrays, **attrs)
            except EmberValueError:
                raise
            except Exception as e:     # NumPy's LinAlgError; other libraries' own classes
                if "singular" in str(e).lower() or "definite" in str(e).lower():
                    raise EmberValueError(f"linalg.{name}: {why}") from None
                raise
            if not bool(xp.all(xp.isfinite(out))):
                if bool(xp.all(xp.isfinite(arrays[0]))):
                    raise EmberValueError(f"linalg.{name}: {why}")
                # LU with a nan pivot leaves some entries finite (NumPy: inv of
                # [[nan, 0], [0, 1]] has a row [0, 1]); PyTorch's whole matrix is nan
                out = fill(xp.logical_not(has_nan(arrays[0])), out)
            return out
        return kernel

    def cholesky(a):
        # the triangle LAPACK reads (made only when something is not finite)
        if not bool(xp.all(xp.isfinite(a))) and not bool(xp.all(xp.isfinite(xp.tril(a)))):
            raise EmberValueError(
                "linalg.cholesky: the input holds inf or nan in the triangle it reads, so it "
                "is not positive-definite (PyTorch raises too); find them with "
                "ember.isfinite(A).all((-2, -1)), or use linalg.cholesky_ex, which marks "
                "such matrices in `info`")
        return xp.linalg.cholesky(a)

    def symmetric(fn):
        """eigvalsh/eigh on the UPLO triangle; a matrix with inf or nan there gives nan."""
        def kernel(a, *, UPLO):
            t = _triangle(xp, a, UPLO)
            if bool(xp.all(xp.isfinite(t))):
                return fn(t)
            ok = finite(t)
            return fill(ok, fn(zeroed(ok, t)))
        return kernel

    def singular_values(fn):
        """svd: a matrix with nan raises (PyTorch: the algorithm does not converge), one
        with infinities gives nan factors (PyTorch: nan S, U and Vh from LAPACK's guess)."""
        def kernel(a, **attrs):
            if bool(xp.all(xp.isfinite(a))):
                return fn(a, **attrs)
            ok = finite(a)
            if bool(xp.any(has_nan(a))):
                raise EmberValueError(
                    "linalg.svd: the input holds nan, so the SVD is not defined (PyTorch "
                    "raises too: the algorithm does not converge); find them with "
                    "ember.isnan(A).any((-2, -1))")
            return fill(ok, fn(zeroed(ok, a), **attrs))
        return kernel

    def all_or_nothing(fn):
        """qr: a matrix with inf or nan gives nan factors (LAPACK's Householder makes some
        entries of them finite: R[0, 0] of [[nan, .5], [.5, 2]] is 0.707 in PyTorch)."""
        def kernel(a, **attrs):
            if bool(xp.all(xp.isfinite(a))):
                return fn(a, **attrs)
            ok = finite(a)
            return fill(ok, fn(zeroed(ok, a), **attrs))
        return kernel

    svdvals = _svdvals(xp)
    singular = ("the input is singular (a zero pivot): it has no inverse; linalg.pinv gives "
                "the pseudo-inverse")
    return {
        "inv": checked("inv", xp.linalg.inv, singular),
        "solve": checked("solve", xp.linalg.solve, singular),
        "det": xp.linalg.det,
        "logabsdet": lambda a: xp.linalg.slogdet(a)[1],
        "cholesky": checked("cholesky", cholesky,
                            "the input is not symmetric positive-definite"),
        "eigh": symmetric(lambda t: xp.linalg.eigh(t)[1]),
        "eigvalsh": symmetric(xp.linalg.eigvalsh),
        "svdvals": singular_values(lambda a: svdvals(a)),
        "svd_u": singular_values(lambda a, *, full_matrices: xp.linalg.svd(
            a, full_matrices=full_matrices)[0]),
        "svd_vh": singular_values(lambda a, *, full_matrices: xp.linalg.svd(
            a, full_matrices=full_matrices)[2]),
        "qr_q": all_or_nothing(lambda a, *, mode: xp.linalg.qr(a, mode=mode)[0]),
        "qr_r": all_or_nothing(lambda a, *, mode: xp.linalg.qr(a, mode=mode)[1]),
        "lu_factor": lambda a: _lu(xp, a),
        "lu_permutation": lambda pivots, *, m: _lu_permutation(xp, pivots, m),
        "lu_solve": lambda lu, pivots, b, *, adjoint: _lu_solve(xp, lu, pivots, b, adjoint),
        "geqrf": lambda a: _geqrf(xp, a)[0],
        "geqrf_tau": lambda a: _geqrf(xp, a)[1],
        "ldl_factor": lambda a, *, hermitian: _ldl(xp, a, hermitian),
        "ldl_solve": lambda ld, pivots, b, *, hermitian: _ldl_solve(xp, ld, pivots, b,
                                                                    hermitian),
    }


def _copy(xp, x):
    """A copy (the right side of a swap must not be a view of what the left overwrites)."""
    return xp.asarray(x, copy=True)


def _per_matrix(xp, a, fn):
    """fn(matrix) -> (factor, pivots) on each matrix of a batch, stacked back."""
    batch, n = a.shape[:-2], a.shape[-1]
    count = math.prod(batch)
    flat = xp.reshape(a, (count, n, n))
    outs = [fn(flat[i, ...]) for i in range(count)]
    if not outs:
        return xp.zeros(a.shape, dtype=a.dtype), xp.zeros((*batch, n), dtype=xp.int32)
    return (xp.reshape(xp.stack([o[0] for o in outs]), a.shape),
            xp.reshape(xp.stack([o[1] for o in outs]), (*batch, n)))


_BUNCH_KAUFMAN = (1 + 17 ** 0.5) / 8


def _ldl(xp, a, hermitian):
    """LAPACK sytf2's (hetf2's for complex hermitian) Bunch-Kaufman L D L^T from the lower
    triangle, per matrix, packed by _ldl_packed: (L below the diagonal and D's blocks on
    and beside it, packed as LAPACK's with the upper triangle zeroed as torch's; 1-based
    pivots, negative for the two rows of a 2x2 block; info).  Sizes are |re| + |im|
    (LAPACK's cabs1) for complex.  One Python step per column of each matrix: meant for
    small matrices (the CPU takes LAPACK's sytrf where SciPy is installed)."""
    complex_ = xp.isdtype(a.dtype, "complex floating")
    h = bool(hermitian) and complex_

    def cj(z):
        return xp.conj(z) if h else z

    def re(z):              # hetf2 keeps D's diagonal real
        return xp.astype(xp.real(z), z.dtype) if h else z

    def size(z):
        return xp.abs(xp.real(z)) + xp.abs(xp.imag(z)) if complex_ else xp.abs(z)

    def dsize(z):           # a diagonal entry's size: hetf2 reads its real part only
        return xp.abs(xp.real(z)) if h else size(z)

    def factor(m):
        n = m.shape[-1]
        m = xp.asarray(m, copy=True)
        piv = [0] * n
        k = 0
        while k < n:
            step = 1
            absakk = float(dsize(m[k, k]))
            imax, colmax = k, 0.0
            if k < n - 1:
                col = size(m[k + 1:, k])
                imax = k + 1 + int(xp.argmax(col))
                colmax = float(col[imax - k - 1])
            if max(absakk, colmax) == 0 or absakk != absakk:
                kp = k
            elif absakk >= _BUNCH_KAUFMAN * colmax:
                kp = k
            else:
                rowmax = float(xp.max(size(m[imax, k:imax])))
                if imax < n - 1:
                    rowmax = max(rowmax, float(xp.max(size(m[imax + 1:, imax]))))
                if absakk >= _BUNCH_KAUFMAN * colmax * (colmax / rowmax):
                    kp = k
                elif float(dsize(m[imax, imax])) >= _BUNCH_KAUFMAN * rowmax:
                    kp = imax
                else:
                    kp, step = imax, 2
            kk = k + step - 1
            if kp != kk:
                if kp < n - 1:
                    m[kp + 1:, kk], m[kp + 1:, kp] = _copy(xp, m[kp + 1:, kp]), \
                        _copy(xp, m[kp + 1:, kk])
                inner = _copy(xp, m[kk + 1:kp, kk])
                m[kk + 1:kp, kk] = cj(m[kp, kk + 1:kp])
                m[kp, kk + 1:kp] = cj(inner)
                m[kp, kk] = cj(m[kp, kk])
                m[kk, kk], m[kp, kp] = re(_copy(xp, m[kp, kp])), re(_copy(xp, m[kk, kk]))
                if step == 2:
                    m[k, k] = re(m[k, k])
                    m[k + 1, k], m[kp, k] = _copy(xp, m[kp, k]), _copy(xp, m[k + 1, k])
            else:
                m[k, k] = re(m[k, k])
                if step == 2:
                    m[k + 1, k + 1] = re(m[k + 1, k + 1])
            if step == 1:
                if k < n - 1:
                    x = m[k + 1:, k]
                    d = 1 / re(m[k, k])
                    m[k + 1:, k + 1:] = m[k + 1:, k + 1:] - d * x[:, None] * cj(x)[None, :]
                    m[k + 1:, k] = x * d
            elif k < n - 2:
                c1, c2 = m[k + 2:, k], m[k + 2:, k + 1]
                if h:       # hetf2: through |d21|, D's diagonal real
                    size21 = xp.abs(m[k + 1, k])
                    d11 = xp.real(m[k + 1, k + 1]) / size21
                    d22 = xp.real(m[k, k]) / size21
                    d21 = m[k + 1, k] / size21
                    d = (1 / (d11 * d22 - 1)) / size21
                    wk = d * (d11 * c1 - d21 * c2)
                    wk1 = d * (d22 * c2 - xp.conj(d21) * c1)
                else:
                    d21 = m[k + 1, k]
                    d11, d22 = m[k + 1, k + 1] / d21, m[k, k] / d21
                    d = (1 / (d11 * d22 - 1)) / d21
                    wk = d * (d11 * c1 - c2)
                    wk1 = d * (d22 * c2 - c1)
                m[k + 2:, k + 2:] = m[k + 2:, k + 2:] - c1[:, None] * cj(wk)[None, :] - \
                    c2[:, None] * cj(wk1)[None, :]
                m[k + 2:, k], m[k + 2:, k + 1] = wk, wk1
            if h and k + step < n:          # her/her2 leave the trailing diagonal real
                rest = m[k + step:, k + step:]
                eye = xp.eye(n - k - step, dtype=xp.bool)
                m[k + step:, k + step:] = xp.where(eye, re(rest), rest)
            if step == 1:
                piv[k] = kp + 1
            else:
                piv[k] = piv[k + 1] = -(kp + 1)
            k += step
        return xp.tril(m), xp.asarray(piv, dtype=xp.int32)

    return _ldl_packed(xp, *_per_matrix(xp, a, factor))


def _ldl_packed(xp, ld, pivots):
    """sytrf's factors packed as ldl_factor returns them, (*, n + 1, n + 1): LD (lower
    triangle) in [:n, :n], the pivots in row n and sytrf's info in [n, n] (1 + the index
    of D's first zero 1x1 block, nan counted as zero, as torch's; 0 if none)."""
    *batch, n = pivots.shape
    out = xp.zeros((*batch, n + 1, n + 1), dtype=ld.dtype)
    out[..., :n, :n] = ld
    out[..., n, :n] = xp.astype(pivots, ld.dtype)
    if n:
        diagonal = getattr(xp.linalg, "diagonal", None)        # CuPy: only xp.diagonal
        d = diagonal(ld) if diagonal is not None else xp.diagonal(ld, axis1=-2, axis2=-1)
        zero = (pivots > 0) & ((d == 0) | xp.isnan(d))
        first = xp.argmax(xp.astype(zero, xp.int32), axis=-1)
        out[..., n, n] = xp.astype(xp.where(xp.any(zero, axis=-1), first + 1, 0), ld.dtype)
    return out


def _ldl_solve(xp, ld, pivots, b, hermitian):
    """LAPACK sytrs (hetrs for complex hermitian): X with A X = B from _ldl's (LD,
    pivots), per matrix (batch dims already broadcast)."""
    h = bool(hermitian) and xp.isdtype(ld.dtype, "complex floating")

    def cj(z):
        return xp.conj(z) if h else z

    def solve(m, piv, x):
        n = m.shape[-1]
        x = xp.asarray(x, copy=True)
        p = [int(v) for v in piv]

        def swap(i, j):
            if i != j:
                x[i, :], x[j, :] = _copy(xp, x[j, :]), _copy(xp, x[i, :])
        k = 0
        while k < n:                    # L D Y = B
            if p[k] > 0:
                swap(k, p[k] - 1)
                x[k + 1:, :] = x[k + 1:, :] - m[k + 1:, k][:, None] * x[k, :][None, :]
                x[k, :] = x[k, :] / m[k, k]
                k += 1
                continue
            swap(k + 1, -p[k] - 1)
            if k < n - 2:
                x[k + 2:, :] = x[k + 2:, :] - m[k + 2:, k][:, None] * x[k, :][None, :] - \
                    m[k + 2:, k + 1][:, None] * x[k + 1, :][None, :]
            d21 = m[k + 1, k]
            d11, d22 = m[k, k] / cj(d21), m[k + 1, k + 1] / d21
            denom = d11 * d22 - 1
            b1, b2 = x[k, :] / cj(d21), x[k + 1, :] / d21
            x[k, :], x[k + 1, :] = (d22 * b1 - b2) / denom, (d11 * b2 - b1) / denom
            k += 2
        k = n - 1
        while k >= 0:                   # L^T X = Y
            tail = x[k + 1:, :]
            x[k, :] = x[k, :] - xp.sum(cj(m[k + 1:, k])[:, None] * tail, axis=0)
            if p[k] > 0:
                swap(k, p[k] - 1)
                k -= 1
                continue
            x[k - 1, :] = x[k - 1, :] - xp.sum(cj(m[k + 1:, k - 1])[:, None] * tail, axis=0)
            swap(k, -p[k] - 1)
            k -= 2
        return (x,)

    batch = ld.shape[:-2]
    count = math.prod(batch)
    flat = xp.reshape(ld, (count, *ld.shape[-2:]))
    pf = xp.reshape(pivots, (count, pivots.shape[-1]))
    bf = xp.reshape(b, (count, *b.shape[-2:]))
    outs = [solve(flat[i, ...], pf[i, ...], bf[i, ...])[0] for i in range(count)]
    if not outs:
        return xp.zeros(b.shape, dtype=b.dtype)
    return xp.reshape(xp.stack(outs), (*batch, *b.shape[-2:]))


def _geqrf(xp, a):
    """LAPACK geqrf's Householder QR, batched: (R above the diagonal and the reflectors'
    vectors below it, packed as LAPACK's; tau).  Column j's reflector is dlarfg's:
    beta = -sign(re alpha) ||(alpha, x)||, tau = (beta - alpha) / beta, v = x / (alpha -
    beta), and tau = 0 (no reflection) where x is 0 and alpha real; H^H is applied to the
    columns to the right (the unblocked geqr2: blocked LAPACK rounds otherwise)."""
    *batch, m, n = a.shape
    k = min(m, n)
    h = xp.asarray(a, copy=True)
    tau = xp.zeros((*batch, k), dtype=a.dtype)
    complex_ = xp.isdtype(a.dtype, "complex floating")
    for j in range(k):
        alpha = h[..., j, j]
        x = h[..., j + 1:, j]
        if complex_:
            xnorm2 = xp.sum(xp.real(x * xp.conj(x)), axis=-1)
            re, im = xp.real(alpha), xp.imag(alpha)
        else:
            xnorm2 = xp.sum(x * x, axis=-1)
            re, im = alpha, xp.zeros_like(alpha)
        skip = (xnorm2 == 0) & (im == 0)
        norm = xp.sqrt(re * re + im * im + xnorm2)
        beta = xp.astype(xp.where(re >= 0, -norm, norm), a.dtype)
        one = xp.ones_like(alpha)
        t = xp.where(skip, xp.zeros_like(alpha), (beta - alpha) / xp.where(skip, one, beta))
        v = x * (one / xp.where(skip, one, alpha - beta))[..., None]
        h[..., j + 1:, j] = v
        h[..., j, j] = xp.where(skip, alpha, beta)
        tau[..., j] = t
        if j + 1 < n:
            w = xp.concat([one[..., None], v], axis=-1)
            rest = h[..., j:, j + 1:]
            wh = xp.conj(w) if complex_ else w
            proj = xp.sum(wh[..., :, None] * rest, axis=-2)
            tc = xp.conj(t) if complex_ else t
            h[..., j:, j + 1:] = rest - tc[..., None, None] * w[..., :, None] * \
                proj[..., None, :]
    return h, tau


# The columns LU factors one at a time before one product updates the rest (blocked getrf):
# each column costs a few whole-batch array calls on its panel only, the trailing update is
# one matmul per panel
_LU_PANEL = 32


def _lu(xp, a):
    """LAPACK getrf's LU with partial pivoting, batched, packed with its pivots and info:
    (*, m + 1, n + 1), L and U in [:m, :n] (L's unit diagonal left out), the 1-based
    pivots in the first min(m, n) entries of row m and getrf's info (1 + the index of U's
    first zero diagonal entry, 0 if none) in its last (exact in a.dtype: m is far below
    2^24), so one elimination serves lu_factor, its pivots and info.  Column j's pivot is
    the first entry of largest size at or below the diagonal, size |x| (|re| + |im| for
    complex, izamax's); where the input holds inf or nan, a nan is picked only where it
    comes first (idamax never finds anything larger than it).  A zero pivot leaves its
    column unscaled, as LAPACK does (its info then names it).  Blocked as getrf: a panel
    of _LU_PANEL columns is factored column by column (whole rows swapped, the panel's
    columns updated, each pivot row's part right of the panel solved with L11: trsm's
    dot products), then the rows below it right of it are updated by one matmul;
    rounding is a blocked LAPACK's, which differs from torch's (MKL) in the last bits, so
    a matrix of exact rank deficiency can end with a tiny nonzero where torch's has a zero
    (or back)."""
    *batch, m, n = a.shape
    k = min(m, n)
    count = math.prod(batch)
    out = xp.zeros((count, m + 1, n + 1), dtype=a.dtype)
    lu = out[:, :m, :n]
    lu[...] = xp.reshape(a, (count, m, n))
    complex_ = xp.isdtype(a.dtype, "complex floating")
    nonfinite = count * k > 0 and not bool(xp.all(xp.isfinite(lu)))
    pivots = xp.zeros((count, k), dtype=xp.int64)
    # NumPy and CuPy swap a batch's rows by integer-array indexing; the standard has no
    # such setitem: there a gather of every row does it (3x slower on NumPy)
    fancy = xp.__name__.split(".")[0] in ("numpy", "cupy")
    each, rows = xp.arange(count), xp.reshape(xp.arange(m), (1, m))
    for j0 in range(0, k, _LU_PANEL):
        end = min(j0 + _LU_PANEL, k)
        for j in range(j0, end):
            col = lu[:, j:, j]
            size = xp.abs(xp.real(col)) + xp.abs(xp.imag(col)) if complex_ else xp.abs(col)
            if nonfinite:
                nan = xp.isnan(size)
                p = xp.where(nan[:, 0], 0, xp.argmax(xp.where(nan, -1.0, size), axis=-1))
            else:
                p = xp.argmax(size, axis=-1)
            p = p + j
            pivots[:, j] = p
            if count == 1:
                q = int(p[0])
                if q != j:
                    row = xp.asarray(lu[0, q, :], copy=True)
                    lu[0, q, :] = lu[0, j, :]
                    lu[0, j, :] = row
            elif fancy:
                row = lu[each, p, :]                # a copy (integer indexing)
                lu[each, p, :] = lu[:, j, :]
                lu[:, j, :] = row
            else:
                at = xp.reshape(p, (count, 1))
                swap = xp.where(rows == j, at, xp.where(rows == at, j, rows))
                lu[...] = xp.take_along_axis(lu, xp.broadcast_to(swap[:, :, None], lu.shape),
                                             axis=1)
            # times the reciprocal, as getf2 scales (rounding as LAPACK's, not a division);
            # a zero pivot leaves the column as it is
            if count == 1:
                pivot = lu[0, j, j]
                if pivot != 0:
                    lu[0, j + 1:, j] *= 1 / pivot
            else:
                pivot = lu[:, j:j + 1, j]
                lu[:, j + 1:, j] *= 1 / xp.where(pivot != 0, pivot, xp.ones_like(pivot))
            if j + 1 < end:
                lu[:, j + 1:, j + 1:end] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:end]
            if end < n and j > j0:                  # U12's row j: trsm with L11
                lu[:, j:j + 1, end:] -= lu[:, j:j + 1, j0:j] @ lu[:, j0:j, end:]
        if end < n and end < m:
            lu[:, end:, end:] -= lu[:, end:, j0:end] @ lu[:, j0:end, end:]
    out[:, m, :k] = xp.astype(pivots + 1, a.dtype)
    out[:, m, n] = _lu_info(xp, lu)
    return xp.reshape(out, (*batch, m + 1, n + 1))


def _lu_info(xp, lu):
    """getrf's info per matrix of a (count, m, n) stack: 1 + the index of U's first zero
    diagonal entry, 0 if none."""
    k = min(lu.shape[-2:])
    if k == 0:
        return xp.zeros(lu.shape[0], dtype=lu.dtype)
    diagonal = getattr(xp.linalg, "diagonal", None)        # CuPy: only xp.diagonal
    zero = (diagonal(lu) if diagonal is not None else
            xp.diagonal(lu, axis1=-2, axis2=-1)) == 0
    first = xp.argmax(xp.astype(zero, xp.int32), axis=-1)
    return xp.astype(xp.where(xp.any(zero, axis=-1), first + 1, 0), lu.dtype)


def _lu_permutation(xp, pivots, m):
    """The row order LAPACK's pivots (1-based, applied in turn) give: A[order] = L U."""
    from ember.errors import EmberValueError
    k = pivots.shape[-1]
    if k and not bool(xp.all((pivots >= 1) & (pivots <= m))):
        raise EmberValueError(f"lu_unpack: pivots must be between 1 and LU.size(-2) = {m} "
                              "inclusive, as linalg.lu_factor returns them; pass its "
                              "pivots unchanged")
    batch = pivots.shape[:-1]
    count = math.prod(batch)
    swaps = xp.reshape(xp.astype(pivots, xp.int64) - 1, (count, k))
    if count <= 64 and hasattr(swaps, "tolist"):
        # a few matrices: the swaps in turn on Python lists (one array call per swap
        # would cost more than the swap)
        orders = []
        for row in swaps.tolist():
            order = list(range(m))
            for i, j in enumerate(row):
                order[i], order[j] = order[j], order[i]
            orders.append(order)
        return xp.reshape(xp.asarray(orders, dtype=xp.int64), (*batch, m))
    rows = xp.arange(m, dtype=xp.int64)
    order = xp.broadcast_to(rows, (count, m))
    for i in range(k):              # many matrices: swap i of all of them at once
        j = swaps[:, i:i + 1]
        here, there = order[:, i:i + 1], xp.take_along_axis(order, j, axis=-1)
        order = xp.where(rows == i, there, xp.where(rows == j, here, order))
    return xp.reshape(order, (*batch, m))


def _lu_solve(xp, lu, pivots, b, adjoint):
    """LAPACK getrs: X with A X = B (A^H X = B with adjoint) for A = P L U given by
    lu_factor's packed LU and pivots (batch dims alike), by two triangular solves (the
    standard has no trsm: solve's LU of a triangular matrix does no pivoting and rounds as
    one).  A zero on U's diagonal gives inf and nan, as getrs (solve would raise): such a
    U is solved by substitution, one row at a time."""
    n = lu.shape[-1]
    order = _lu_permutation(xp, pivots, n)
    lower = xp.tril(lu, k=-1) + xp.eye(n, dtype=lu.dtype)
    upper = xp.triu(lu)
    rows = (*order.shape, 1)
    diagonal = getattr(xp.linalg, "diagonal", None)        # CuPy: only xp.diagonal
    d = diagonal(upper) if diagonal is not None else xp.diagonal(upper, axis1=-2, axis2=-1)
    singular = bool(xp.any(d == 0))
    if not adjoint:                 # L U X = P^T B
        pb = xp.take_along_axis(b, xp.broadcast_to(xp.reshape(order, rows), b.shape), axis=-2)
        y = xp.linalg.solve(lower, pb)
        return _substitute(xp, upper, y, False) if singular else xp.linalg.solve(upper, y)
    axes = (*range(lu.ndim - 2), lu.ndim - 1, lu.ndim - 2)
    complex_ = xp.isdtype(lu.dtype, "complex floating")

    def adj(t):
        t = xp.permute_dims(t, axes)
        return xp.conj(t) if complex_ else t
    y = _substitute(xp, adj(upper), b, True) if singular else xp.linalg.solve(adj(upper), b)
    y = xp.linalg.solve(adj(lower), y)
    back = xp.reshape(xp.argsort(order, axis=-1), rows)      # X = P Y: row order[i] gets i
    return xp.take_along_axis(y, xp.broadcast_to(back, b.shape), axis=-2)


def _substitute(xp, t, b, lower):
    """T^-1 B for T triangular (lower or upper) by substitution, row by row: a zero on
    T's diagonal gives inf and nan where LAPACK's trsm does, instead of an error."""
    n = t.shape[-1]
    x = xp.asarray(b, copy=True)
    for i in range(n) if lower else range(n - 1, -1, -1):
        done = slice(0, i) if lower else slice(i + 1, n)
        rest = x[..., i:i + 1, :] - t[..., i:i + 1, done] @ x[..., done, :]
        x[..., i:i + 1, :] = rest / t[..., i:i + 1, i:i + 1]
    return x


def _triangle(xp, a, uplo):
    """The symmetric matrix the UPLO triangle of `a` describes (the standard reads both);
    made without subtracting, so an infinity there stays one instead of inf - inf."""
    axes = tuple(range(a.ndim - 2)) + (a.ndim - 1, a.ndim - 2)
    if uplo == "L":
        return xp.tril(a) + xp.permute_dims(xp.tril(a, k=-1), axes)
    return xp.triu(a) + xp.permute_dims(xp.triu(a, k=1), axes)


# Ops whose NumPy-like ufuncs (NumPy, CuPy) already compute bool and logical-of-numbers as
# PyTorch does: those backends take the ufunc itself, skipping kernels()'s wrappers for the
# standard (one Python call less on the hottest ops).
NUMPY_NATIVE = {"add": "add", "mul": "multiply", "maximum": "maximum", "minimum": "minimum",
                "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite",
                "logical_not": "logical_not", "logical_and": "logical_and",
                "logical_or": "logical_or", "logical_xor": "logical_xor",
                # the standard's atan2/bitwise_* names are newer than CuPy's ufuncs
                "atan2": "arctan2", "bitwise_not": "invert", "bitwise_left_shift": "left_shift",
                "bitwise_right_shift": "right_shift"}


def numpy_like(xp) -> dict:
    """kernels(xp) with NUMPY_NATIVE taken straight from xp (NumPy, CuPy)."""
    table = kernels(xp, native=True)
    table.update({name: getattr(xp, fn) for name, fn in NUMPY_NATIVE.items()})
    return table


def overlapping(a) -> bool:
    """Whether several elements of a strided array share memory (an expanded view): such a
    target refuses writes, as in PyTorch (docs/semantics.md, writes_into_expanded_views)."""
    strides = a.strides
    # an empty array has no elements to share (NumPy gives some of them zero strides)
    return 0 in strides and 0 not in a.shape and any(
        s == 0 and n > 1 for s, n in zip(strides, a.shape))


OVERLAP = ("the target is an expanded view: several of its elements share one memory "
           "location; write into a clone() (or into the tensor it was expanded from)")


def numpy_extras(np) -> dict:
    """The LIBRARY_SPECIFIC kernels for NumPy (CuPy's live in backends/cupy)."""
    erf_scalar = np.frompyfunc(math.erf, 1, 1)

    def erf(x):
        return np.asarray(erf_scalar(x), dtype=x.dtype)   # a 0-d x gives a Python float

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
        if overlapping(dst):
            raise ValueError(OVERLAP)
        dst[...] = src

    return {"erf": erf, "index_add": index_add, "scatter_add": scatter_add,
            "index_put": index_put, "assign": assign, **eig_kernels(np)}


def eig_kernels(np) -> dict:
    """linalg.eig's eigenvectors and eigenvalues through NumPy's LAPACK geev, always
    complex, as torch's (NumPy returns real arrays where every eigenvalue is real).  Both
    come from one geev call each, which is deterministic, so eig's values and vectors
    agree.  Other libraries run these on the host (CuPy, OpenCL: nothing else has geev)."""
    from ember.errors import EmberValueError

    def geev(a):
        wide = a.dtype in (np.float64, np.complex128)
        dtype = np.complex128 if wide else np.complex64
        if not np.isfinite(a).all():
            raise EmberValueError("linalg.eig: the input holds inf or nan, so its "
                                  "eigenvalues are not defined (PyTorch's LAPACK fails "
                                  "too); find them with ember.isfinite(A).all((-2, -1))")
        if a.shape[-1] == 0:
            return np.zeros(a.shape[:-1], dtype), np.zeros(a.shape, dtype)
        w, v = np.linalg.eig(a)
        return np.asarray(w, dtype), np.asarray(v, dtype)

    return {"eig": lambda a: geev(a)[1], "eigvals": lambda a: geev(a)[0]}
