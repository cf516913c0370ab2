"""Statistical and utility functions of the array API standard (ember reductions).

Cumulative sums and products are a log-step scan (Hillis-Steele: ceil(log2 n) shifted
adds), so they run on every device; for floats their rounding differs from a sequential
sum by a few ulps.  The standard's default sum dtype for uint8 is uint64, which ember does
not have: uint8 sums in int64.
"""
from __future__ import annotations

import math

from .. import dtypes as D
from .. import functional as F
from .. import ops
from ..errors import EmberValueError
from ..ops._util import norm_dim
from ..tensor import Tensor
from ._dtypes import need
from ._util import concat, norm_axes, sum_dtype


def _reduced(name, x, axis) -> tuple:
    return tuple(range(x.ndim)) if axis is None else norm_axes(name, axis, x.ndim)


def _fresh(x: Tensor, y: Tensor) -> Tensor:
    """y, or a copy when it is x itself (a result must not alias the input)."""
    return y.clone() if y is x else y


def _accumulate(name, reduce, x, axis, dtype, keepdims):
    need(name, x, "numeric")
    d = sum_dtype(x, dtype)
    axes = _reduced(name, x, axis)
    y = x.to(d)
    if not axes:
        return _fresh(x, y)
    return reduce(y, axes, keepdims).to(d)


def sum(x: Tensor, /, *, axis=None, dtype=None, keepdims: bool = False) -> Tensor:
    """The sum over axes; integers sum in int64 unless dtype says otherwise.

    PyTorch
    -------
    ``torch.sum``
    """
    return _accumulate("sum", ops.sum, x, axis, dtype, keepdims)


def prod(x: Tensor, /, *, axis=None, dtype=None, keepdims: bool = False) -> Tensor:
    """The product over axes; integers multiply in int64 unless dtype says otherwise.

    PyTorch
    -------
    ``torch.prod``
    """
    return _accumulate("prod", ops.prod, x, axis, dtype, keepdims)


def _extreme(name, reduce, x, axis, keepdims):
    need(name, x, "real numeric")
    axes = _reduced(name, x, axis)
    return reduce(x, axes, keepdims) if axes else _fresh(x, x)


def max(x: Tensor, /, *, axis=None, keepdims: bool = False) -> Tensor:
    """The largest element over axes (nan if any is nan).

    PyTorch
    -------
    ``torch.max``
    """
    return _extreme("max", ops.amax, x, axis, keepdims)


def min(x: Tensor, /, *, axis=None, keepdims: bool = False) -> Tensor:
    """The smallest element over axes (nan if any is nan).

    PyTorch
    -------
    ``torch.min``
    """
    return _extreme("min", ops.amin, x, axis, keepdims)


def mean(x: Tensor, /, *, axis=None, keepdims: bool = False) -> Tensor:
    """The arithmetic mean over ``axis`` (all axes by default).

    PyTorch
    -------
    ``torch.mean``
    """
    need("mean", x, "floating-point")
    axes = _reduced("mean", x, axis)
    return F.mean(x, axes, keepdims) if axes else _fresh(x, x)


def var(x: Tensor, /, *, axis=None, correction=0.0, keepdims: bool = False) -> Tensor:
    """The variance over axes, dividing by N - correction.

    PyTorch
    -------
    ``torch.var``
    """
    need("var", x, "real floating-point")
    axes = _reduced("var", x, axis)
    if not axes:
        # one element per group: 0 (nan where it is nan or infinite: x - x), and nan where
        # N - correction <= 0 (the standard's special cases)
        d = x - x
        return d * d if correction < 1 else d + math.nan
    return F.var(x, axes, correction=correction, keepdim=keepdims)


def std(x: Tensor, /, *, axis=None, correction=0.0, keepdims: bool = False) -> Tensor:
    """The standard deviation over axes, dividing by N - correction.

    PyTorch
    -------
    ``torch.std``
    """
    return ops.sqrt(var(need("std", x, "real floating-point"), axis=axis,
                        correction=correction, keepdims=keepdims))


def _scan_axis(name, x, axis) -> int:
    if axis is None:
        if x.ndim != 1:
            raise EmberValueError(f"ember.array_api.{name}: axis is required for arrays of "
                                  f"{x.ndim} dims")
        return 0
    return norm_dim(axis, x.ndim, name)


def _scan(x: Tensor, axis: int, combine, identity) -> Tensor:
    """Inclusive scan along axis in ceil(log2 n) steps: y[i] = combine(y[i], y[i - k])."""
    n = x._data.shape[axis]
    k = 1
    while k < n:
        head = list(x._data.shape)
        head[axis] = k
        kept = ops.split(x, [n - k, k], axis)[0]
        shifted = ops.cat([ops.full(tuple(head), identity, dtype=x._dtype, device=x._device),
                           kept], axis)
        x = combine(x, shifted)
        k *= 2
    return x


def _cumulative(name, combine, identity, x, axis, dtype, include_initial):
    need(name, x, "numeric")
    axis = _scan_axis(name, x, axis)
    d = sum_dtype(x, dtype)
    out = _scan(x.to(d), axis, combine, identity)
    out = _fresh(x, out)
    if include_initial:
        head = list(x._data.shape)
        head[axis] = 1
        out = ops.cat([ops.full(tuple(head), identity, dtype=d, device=x._device), out], axis)
    return out


def cumulative_sum(x: Tensor, /, *, axis: int | None = None, dtype=None,
                   include_initial: bool = False) -> Tensor:
    """Running sums along axis (include_initial: starting with 0).

    PyTorch
    -------
    ``torch.cumsum``
    """
    return _cumulative("cumulative_sum", ops.add, 0, x, axis, dtype, include_initial)


def cumulative_prod(x: Tensor, /, *, axis: int | None = None, dtype=None,
                    include_initial: bool = False) -> Tensor:
    """Running products along axis (include_initial: starting with 1).

    PyTorch
    -------
    ``torch.cumprod``
    """
    return _cumulative("cumulative_prod", ops.mul, 1, x, axis, dtype, include_initial)


def all(x: Tensor, /, *, axis=None, keepdims: bool = False) -> Tensor:
    """Whether every element over axes is true (nonzero).

    PyTorch
    -------
    ``torch.all``
    """
    need("all", x)
    axes = _reduced("all", x, axis)
    return ops.all(x, axes, keepdims) if axes else x != 0


def any(x: Tensor, /, *, axis=None, keepdims: bool = False) -> Tensor:
    """Whether some element over axes is true (nonzero).

    PyTorch
    -------
    ``torch.any``
    """
    need("any", x)
    axes = _reduced("any", x, axis)
    return ops.any(x, axes, keepdims) if axes else x != 0


def count_nonzero(x: Tensor, /, *, axis=None, keepdims: bool = False) -> Tensor:
    """How many elements over axes are nonzero (int64).

    PyTorch
    -------
    ``torch.count_nonzero``
    """
    need("count_nonzero", x)
    axes = _reduced("count_nonzero", x, axis)
    nonzero = (x != 0).to(D.int64)
    return ops.sum(nonzero, axes, keepdims) if axes else nonzero


def diff(x: Tensor, /, *, axis: int = -1, n: int = 1, prepend=None, append=None) -> Tensor:
    """The n-th forward difference along axis (x[i + 1] - x[i], n times).

    PyTorch
    -------
    ``torch.diff``
    """
    need("diff", x)
    if x.ndim == 0:
        raise EmberValueError("ember.array_api.diff: expected an array with at least 1 dim")
    if n < 0:
        raise EmberValueError(f"ember.array_api.diff: n must be >= 0, got {n}")
    axis = norm_dim(axis, x.ndim, "diff")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = concat(parts, axis=axis)
    for _ in range(n):
        m = x._data.shape[axis]
        if m == 0:
            break
        lo, hi = ops.split(x, [m - 1, 1], axis)[0], ops.split(x, [1, m - 1], axis)[1]
        x = ops.ne(hi, lo) if x._dtype is D.bool_ else hi - lo
    return x
