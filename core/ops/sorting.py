"""Sorting: the argsort primitive and what is built on it (sort, topk, median, kthvalue,
unique).

Kernel: argsort(x, *, axis: int, descending: bool) -> int64 indices along axis that sort x,
stable (equal elements keep their order); nan sorts as the largest value (last ascending,
first descending), as in PyTorch.  Values come back through gather, so their gradient is
gather's (the chosen elements get it), as in PyTorch.
"""
from __future__ import annotations

from .. import dtypes as D
from ..dispatch import run
from ..errors import EmberIndexError, EmberTypeError, EmberValueError
from ..signatures import numpy_names
from ..tensor import Tensor
from . import _out
from ._op import declare, rule_first, rule_fixed, shape_first
from ._util import norm_dim
from .creation import arange, full, zeros
from .index import scatter_add
from .movement import cat

__all__ = ["argsort", "sort", "topk", "kthvalue", "median", "msort", "unique",
           "unique_consecutive"]


argsort_op = declare("argsort", "index", rule_fixed(D.int64),
                     sig="x, *, axis: int, descending: bool", shape=shape_first,
                     doc="the int64 indices that sort x along axis, stable (equal elements "
                         "keep their order); nan counts as the largest value")


class ValuesIndices(tuple):
    """(values, indices), like torch.return_types.sort / topk / median."""

    __slots__ = ()

    @property
    def values(self) -> Tensor:
        return self[0]

    @property
    def indices(self) -> Tensor:
        return self[1]

    def __repr__(self) -> str:
        return f"ember.return_types(values={self[0]!r}, indices={self[1]!r})"


def _need_tensor(name, x):
    if type(x) is not Tensor:
        raise EmberTypeError(f"{name}(): expected a Tensor, got {type(x).__name__}")


@numpy_names
def argsort(input: Tensor, dim: int = -1, descending: bool = False,
            stable: bool = False) -> Tensor:
    """Indices that sort input along dim (always stable: `stable` is accepted for PyTorch's
    signature).

    PyTorch
    -------
    ``torch.argsort``
    """
    _need_tensor("argsort", input)
    if input.ndim == 0:
        return input.new_zeros((), dtype=D.int64)
    axis = norm_dim(dim, input.ndim, "argsort")
    x = input.detach()
    if x._dtype is D.bfloat16:          # no backend sorts bfloat16 natively; order is kept
        x = x.to(D.float32)
    return run(argsort_op, x, axis=axis, descending=bool(descending))


@numpy_names
def sort(input: Tensor, dim: int = -1, descending: bool = False,
         stable: bool = False) -> ValuesIndices:
    """(values, indices) sorted along dim; ties keep their order.

    PyTorch
    -------
    ``torch.sort``
    """
    index = argsort(input, dim, descending)
    if input.ndim == 0:
        return ValuesIndices((input.clone(), index))
    return ValuesIndices((input.gather(dim, index), index))


def _take_first(index: Tensor, axis: int, k: int) -> Tensor:
    return index.narrow(axis, 0, k)


@numpy_names
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> ValuesIndices:
    """The k largest (or smallest) elements along dim and their indices, in order (ties:
    the lower index first).

    PyTorch
    -------
    ``torch.topk``
    """
    _need_tensor("topk", input)
    n = input._data.shape[norm_dim(dim, input.ndim, "topk")] if input.ndim else 1
    if not isinstance(k, int) or isinstance(k, bool):
        k = int(k)
    if not 0 <= k <= n:
        raise EmberIndexError(f"topk: k={k} is out of range for dimension {dim} of size {n}; "
                              f"expected 0 <= k <= {n}")
    if input.ndim == 0:
        return sort(input)
    axis = norm_dim(dim, input.ndim, "topk")
    x = input.detach()
    if x._dtype is D.bfloat16:          # no backend sorts bfloat16 natively; order is kept
        x = x.to(D.float32)
    index = run(topk_op, x, axis=axis, k=k, largest=bool(largest))
    return ValuesIndices((input.gather(axis, index), index))


def _topk_decompose(x: Tensor, *, axis: int, k: int, largest: bool) -> Tensor:
    return _take_first(argsort(x, axis, descending=largest), axis, k)


def _topk_shape(inputs, attrs) -> tuple:
    shape = list(inputs[0]._data.shape)
    shape[attrs["axis"]] = attrs["k"]
    return tuple(shape)


# a partial selection where the backend has one (NumPy: partition, O(n)), else the first k
# of the stable sort
topk_op = declare("topk", "composite", rule_fixed(D.int64),
                  sig="x, *, axis: int, k: int, largest: bool", shape=_topk_shape,
                  doc="the int64 indices of the k largest (or smallest) elements along axis, "
                      "in order; ties: the lower index first; nan counts as the largest",
                  decompose=_topk_decompose)


@numpy_names
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *,
             out=None) -> ValuesIndices:
    """The k-th smallest element (1-based) along dim and its index.

    PyTorch
    -------
    ``torch.kthvalue``
    """
    _need_tensor("kthvalue", input)
    if out is not None:
        return _out.write_out("kthvalue", kthvalue(input, k, dim, keepdim), out, (input,))
    axis = norm_dim(dim, input.ndim, "kthvalue") if input.ndim else 0
    n = input._data.shape[axis] if input.ndim else 1
    if not 1 <= k <= n:
        raise EmberIndexError(f"kthvalue: k={k} is out of range for dimension {dim} of size "
                              f"{n}; expected 1 <= k <= {n}")
    return _pick(input, axis, k - 1, keepdim)


def _pick(input, axis, position, keepdim):
    if input.ndim == 0:
        return ValuesIndices((input.clone(), input.new_zeros((), dtype=D.int64)))
    index = argsort(input, axis).narrow(axis, position, 1)
    values = input.gather(axis, index)
    if not keepdim:
        values, index = values.squeeze(axis), index.squeeze(axis)
    return ValuesIndices((values, index))


@numpy_names
def median(input: Tensor, dim=None, keepdim: bool = False):
    """The lower median (PyTorch's): of every element (dim None), or (values, indices)
    along dim.

    PyTorch
    -------
    ``torch.median``
    """
    _need_tensor("median", input)
    if input.numel() == 0:
        raise EmberValueError(f"median(): expected a non-empty tensor, got shape "
                              f"{tuple(input.shape)}")
    if dim is None:
        flat = input.reshape(-1)
        return _pick(flat, 0, (flat._data.shape[0] - 1) // 2, False)[0]
    axis = norm_dim(dim, input.ndim, "median") if input.ndim else 0
    n = input._data.shape[axis] if input.ndim else 1
    return _pick(input, axis, (n - 1) // 2, keepdim)


def msort(input: Tensor) -> Tensor:
    """input sorted along its first dim.

    PyTorch
    -------
    ``torch.msort``
    """
    return sort(input, 0)[0]


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim=None):
    """The distinct elements of input in ascending order; with return_inverse the index of
    each element in them, with return_counts how often each occurs.  Computed on the
    device from a sort; the number of distinct values is read back (as PyTorch's does).

    PyTorch
    -------
    ``torch.unique``
    """
    _need_tensor("unique", input)
    if dim is not None:
        return _unique_dim(input, dim, return_inverse, return_counts)
    flat = input.reshape(-1).detach()
    if not return_inverse and not return_counts and flat._dtype is not D.bfloat16:
        return run(unique_op, flat)
    return _unique_sorted(flat, input, return_inverse, return_counts)


def _unique_sorted(flat, input, return_inverse, return_counts):
    n = flat._data.shape[0]
    order = argsort(flat)
    values = flat.gather(0, order)
    # each run of equal sorted values starts where a value differs from the one before
    first = cat([full((min(n, 1),), True, device=input._device), values[1:] != values[:-1]])
    out = [values[first]]
    if return_inverse:
        group = first.cumsum(0) - 1
        # order is a permutation: each position receives exactly one group number
        inverse = scatter_add(zeros(n, dtype=D.int64, device=input._device), 0, order, group)
        out.append(inverse.reshape(input._data.shape))
    if return_counts:
        starts = first.nonzero().reshape(-1)
        ends = cat([starts[1:], full((min(n, 1),), n, device=input._device)])
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)


unique_op = declare("unique", "composite", rule_first, sig="x",
                    doc="the distinct elements of a 1-d x, ascending (of equal elements the "
                        "first; each nan distinct)",
                    decompose=lambda x: _unique_sorted(x, x, False, False))


def _unique_dim(input: Tensor, dim, return_inverse: bool, return_counts: bool):
    """The distinct slices of input along dim, in lexicographic order (torch.unique(dim=)):
    the slices are sorted by a stable sort per column, last column first (a radix sort
    over the columns), then each run of equal slices gives one."""
    from .index import index_select
    from .movement import movedim
    axis = norm_dim(dim, input.ndim, "unique")
    moved = movedim(input.detach(), axis, 0)
    rest = moved._data.shape[1:]
    n = moved._data.shape[0]
    k = 1
    for size in rest:
        k *= size
    rows = moved.reshape(n, k)
    order = arange(n, dtype=D.int64, device=input._device)
    for col in range(k - 1, -1, -1):
        keys = index_select(rows.narrow(1, col, 1).reshape(n), 0, order)
        order = index_select(order, 0, argsort(keys, 0))
    ranked = index_select(rows, 0, order)
    if n and k:
        differs = (ranked[1:] != ranked[:-1]).any(1)
    else:
        differs = zeros(max(n - 1, 0), dtype=D.bool_, device=input._device)
    first = cat([full((min(n, 1),), True, device=input._device), differs])
    values = ranked[first].reshape(-1, *rest)
    out = [movedim(values, 0, axis)]
    if return_inverse:
        group = first.cumsum(0) - 1
        inverse = scatter_add(zeros(n, dtype=D.int64, device=input._device), 0, order, group)
        out.append(inverse)
    if return_counts:
        starts = first.nonzero().reshape(-1)
        ends = cat([starts[1:], full((min(n, 1),), n, device=input._device)])
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)


def unique_consecutive(input: Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim=None):
    """Each run of equal consecutive elements (slices along ``dim`` when given) kept
    once, in order; with return_inverse the run each element belongs to, with return_counts
    each run's length.  The number of runs is read back (as PyTorch's does).

    PyTorch
    -------
    ``torch.unique_consecutive``
    """
    from .index import index_select
    from .movement import movedim
    _need_tensor("unique_consecutive", input)
    if dim is None:
        moved, axis, shape = input.reshape(-1).detach(), 0, input._data.shape
    else:
        axis = norm_dim(dim, input.ndim, "unique_consecutive")
        moved, shape = movedim(input.detach(), axis, 0), (input._data.shape[axis],)
    n = moved._data.shape[0]
    rest = moved._data.shape[1:]
    rows = moved.reshape(n, -1) if n else moved.reshape(0, max(1, moved.numel()))
    if n > 1:
        differs = (rows[1:] != rows[:-1]).any(1) if rows._data.shape[1] else \
            zeros(n - 1, dtype=D.bool_, device=input._device)
    else:
        differs = zeros(0, dtype=D.bool_, device=input._device)
    first = cat([full((min(n, 1),), True, device=input._device), differs])
    starts = first.nonzero().reshape(-1)
    values = index_select(moved, 0, starts).reshape(-1, *rest)
    out = [values if dim is None else movedim(values, 0, axis)]
    if return_inverse:
        out.append((first.cumsum(0) - 1).reshape(shape))
    if return_counts:
        ends = cat([starts[1:], full((min(n, 1),), n, device=input._device)])
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)
