"""Searching, sorting and set functions of the array API standard.

The stable argsort is the one piece ember has no primitive for yet: it runs in NumPy on a
host copy (see _host.py).  Everything around it runs on the device: sort gathers by the
argsort; searchsorted is a binary search of ceil(log2(n + 1)) gathers; the unique_*
functions find group starts, counts and inverse indices with comparisons, nonzero, a
cumulative sum and a scatter.  Nans sort last (first when descending) and, as the standard
asks, every nan is its own unique value.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import dtypes as D
from .. import ops
from ..errors import EmberValueError, ShapeError
from ..ops._util import norm_dim
from ..tensor import Tensor
from ._dtypes import need, promote
from ._host import to_device, to_host
from ._statistical import cumulative_sum


def argsort(x: Tensor, /, *, axis: int = -1, descending: bool = False,
            stable: bool = True) -> Tensor:
    """The indices that sort x along axis (always stable: equal elements keep their order,
    for descending too).

    PyTorch
    -------
    ``torch.argsort``
    """
    need("argsort", x, "real numeric")
    axis = norm_dim(axis, x.ndim, "argsort")
    host = to_host(x.detach(), "argsort")     # indices carry no gradient
    if descending:
        # argsort of the flipped array, flipped back: ties keep their original order
        order = np.flip(np.argsort(np.flip(host, axis), axis=axis, kind="stable"), axis)
        order = host.shape[axis] - 1 - order
    else:
        order = np.argsort(host, axis=axis, kind="stable")
    return to_device(order.astype(np.int64), x)


def sort(x: Tensor, /, *, axis: int = -1, descending: bool = False,
         stable: bool = True) -> Tensor:
    """x sorted along axis.

    PyTorch
    -------
    ``torch.sort``
    """
    order = argsort(x, axis=axis, descending=descending, stable=stable)
    return ops.gather(x, norm_dim(axis, x.ndim, "sort"), order)


def _before(v: Tensor, t: Tensor, side: str) -> Tensor:
    """Whether a sorted element v lies before the insertion point of t (nan sorts last)."""
    if v._dtype.category != D.FLOAT:
        return v < t if side == "left" else v <= t
    nan_v, nan_t = ops.isnan(v), ops.isnan(t)
    if side == "left":
        return (v < t).logical_or(nan_t.logical_and(nan_v.logical_not()))
    return ((t < v).logical_or(nan_v.logical_and(nan_t.logical_not()))).logical_not()


def searchsorted(x1: Tensor, x2: Tensor, /, *, side: str = "left", sorter=None) -> Tensor:
    """Where each x2 would be inserted into the sorted 1-D x1 to keep it sorted.

    PyTorch
    -------
    ``torch.searchsorted``
    """
    need("searchsorted", x1, "real numeric")
    if side not in ("left", "right"):
        raise EmberValueError(f"ember.array_api.searchsorted: side must be 'left' or 'right', "
                              f"got {side!r}")
    if x1.ndim != 1:
        raise ShapeError(f"ember.array_api.searchsorted: x1 must be 1-D, got shape "
                         f"{tuple(x1.shape)}")
    if sorter is not None:
        x1 = ops.take(x1, need("searchsorted", sorter, "integer"))
    x1, x2 = promote("searchsorted", x1, x2, "real numeric")
    n = x1._data.shape[0]
    shape, dev = tuple(x2._data.shape), x2._device
    lo = ops.zeros(shape, dtype=D.int64, device=dev)
    hi = ops.full(shape, n, dtype=D.int64, device=dev)
    for _ in range(n.bit_length()):          # the interval [lo, hi] halves every step
        mid = ops.floor_divide(lo + hi, 2)
        go = _before(ops.take(x1, ops.minimum(mid, n - 1)), x2, side).logical_and(lo < hi)
        lo, hi = ops.where(go, mid + 1, lo), ops.where(go, hi, mid)
    return lo


def isin(x1, x2, /, *, invert: bool = False) -> Tensor:
    """Whether each element of x1 is one of x2's (a binary search in sorted x2).

    PyTorch
    -------
    ``torch.isin``
    """
    x1, x2 = promote("isin", x1, x2, "integer")
    values = x2.reshape(-1)
    n = values._data.shape[0]
    if n == 0:
        found = ops.zeros(x1._data.shape, dtype=D.bool_, device=x1._device)
    else:
        values = sort(values)
        at = ops.minimum(searchsorted(values, x1), n - 1)
        found = ops.take(values, at) == x1
    return found.logical_not() if invert else found


def argmax(x: Tensor, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """The index of the first largest element (over the flattened array for axis=None).

    PyTorch
    -------
    ``torch.argmax``
    """
    return _arg("argmax", ops.argmax, x, axis, keepdims)


def argmin(x: Tensor, /, *, axis: int | None = None, keepdims: bool = False) -> Tensor:
    """The index of the first smallest element (over the flattened array for axis=None).

    PyTorch
    -------
    ``torch.argmin``
    """
    return _arg("argmin", ops.argmin, x, axis, keepdims)


def _arg(name, fn, x, axis, keepdims):
    need(name, x, "real numeric")
    out = fn(x, axis, keepdims)
    return out.reshape((1,) * x.ndim) if axis is None and keepdims else out


def nonzero(x: Tensor, /) -> tuple:
    """The indices of the nonzero elements, one int64 array per axis.

    PyTorch
    -------
    ``torch.nonzero``
    """
    need("nonzero", x)
    if x.ndim == 0:
        raise ShapeError("ember.array_api.nonzero: 0-d arrays are not allowed; reshape to 1-D "
                         "first")
    return ops.nonzero(x, as_tuple=True)


def where(condition: Tensor, x1, x2, /) -> Tensor:
    """x1 where condition holds, else x2 (broadcast; the standard's promotion).

    PyTorch
    -------
    ``torch.where``
    """
    need("where", condition, "bool")
    if type(x1) is not Tensor and type(x2) is not Tensor:     # two scalars (2024.12)
        return ops.where(condition, x1, x2)
    return ops.where(condition, *promote("where", x1, x2))


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def _unique(name: str, x: Tensor):
    """(values, first indices, inverse indices, counts) of flattened x, values sorted."""
    need(name, x)
    flat = x.reshape(-1)
    n = flat._data.shape[0]
    dev = x._device
    if n == 0:
        empty = ops.zeros(0, dtype=D.int64, device=dev)
        return flat, empty, empty.reshape(x._data.shape), empty
    if x._dtype.category == D.COMPLEX:
        # the standard orders no complex values, but unique_* takes them: NumPy's
        # lexicographic (real, then imaginary) order groups equal values all the same
        host = to_host(flat.detach(), name)
        order = to_device(np.argsort(host, kind="stable").astype(np.int64), x)
    else:
        order = argsort(flat) if x._dtype is not D.bool_ else argsort(flat.to(D.uint8))
    s = ops.take(flat, order)
    # a group starts where the sorted value changes (nan != nan: each nan is its own group)
    first = ops.ones(1, dtype=D.bool_, device=dev)
    new = ops.cat([first, s[1:] != s[:-1]]) if n > 1 else first
    starts = ops.nonzero(new).reshape(-1)
    ends = ops.cat([starts[1:], ops.full((1,), n, dtype=D.int64, device=dev)])
    group = cumulative_sum(new.to(D.int64)) - 1
    inverse = ops.scatter_add(ops.zeros(n, dtype=D.int64, device=dev), 0, order, group)
    return (ops.take(s, starts), ops.take(order, starts), inverse.reshape(x._data.shape),
            ends - starts)


def unique_values(x: Tensor, /) -> Tensor:
    """The distinct values of x, sorted.

    PyTorch
    -------
    ``torch.unique``
    """
    return _unique("unique_values", x)[0]


def unique_counts(x: Tensor, /) -> UniqueCountsResult:
    """The distinct values of ``x`` and how often each occurs.

    PyTorch
    -------
    ``torch.unique``
    """
    values, _, _, counts = _unique("unique_counts", x)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Tensor, /) -> UniqueInverseResult:
    """The distinct values of ``x`` and, for each element, the index of its value.

    PyTorch
    -------
    ``torch.unique``
    """
    values, _, inverse, _ = _unique("unique_inverse", x)
    return UniqueInverseResult(values, inverse)


def unique_all(x: Tensor, /) -> UniqueAllResult:
    """values, the index of each value's first occurrence, x's inverse indices, counts.

    PyTorch
    -------
    ``torch.unique``
    """
    return UniqueAllResult(*_unique("unique_all", x))
