"""torch.histogram and torch.histogramdd (reduce's histogram sub-family; histc and bincount
are in reduce.py): bin edges, each element's bin by searchsorted, counts or weights added
with scatter_add, on every device."""
from __future__ import annotations

import math
from typing import NamedTuple

from .. import dtypes as D
from .. import ops
from ..errors import DeviceMismatchError, EmberTypeError, EmberValueError, ShapeError
from ..tensor import Tensor
from ._util import _need
from .index import searchsorted

__all__ = ["histogram", "histogramdd"]


class histogram_result(NamedTuple):  # noqa: N801  (torch.return_types.histogram)
    hist: Tensor
    bin_edges: Tensor


class histogramdd_result(NamedTuple):  # noqa: N801  (torch.return_types.histogramdd)
    hist: Tensor
    bin_edges: tuple


def _edges(name, x: Tensor, bins, lo_hi, dim: int) -> Tensor:
    """The bin edges of one dim: the given tensor, or bins + 1 equal steps over the range
    (the data's when none is given; an empty or constant one is widened as torch does)."""
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.shape[0] < 1:
            raise ShapeError(f"{name}: bin edges must be a non-empty 1-D tensor, got shape "
                             f"{tuple(bins.shape)}")
        if bins._device != x._device:
            raise DeviceMismatchError(f"{name}: the bin edges are on {bins._device}, the "
                                      f"input on {x._device}; move them with .to(...)")
        if bins._dtype is not x._dtype:
            raise EmberTypeError(f"{name}: the bin edges ({bins._dtype.name}) must have the "
                                 f"input's dtype ({x._dtype.name})")
        return bins
    if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
        raise EmberValueError(f"{name}: bins must be a positive int or a 1-D tensor of edges, "
                              f"got {bins!r}")
    if lo_hi is not None:
        lo, hi = float(lo_hi[0]), float(lo_hi[1])
        if lo > hi:
            raise EmberValueError(f"{name}: expected the range's max >= min in dim {dim}, got "
                                  f"({lo}, {hi})")
    elif x.shape[0] == 0:
        lo, hi = 0.0, 1.0
    else:
        column = x[:, dim].detach()
        lo, hi = float(column.amin().item()), float(column.amax().item())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise EmberValueError(f"{name}: range of [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return ops.linspace(lo, hi, bins + 1, dtype=x._dtype, device=x._device)


def _histogramdd(name, input: Tensor, bins, range, weight, density: bool):
    _need(name, input)
    if input._dtype.category != D.FLOAT:
        raise EmberTypeError(f"{name}: expected a floating-point input, got "
                             f"{input._dtype.name}; cast it with .float()")
    if input.ndim < 1:
        raise ShapeError(f"{name}: expected an input with at least 1 dim (..., D), got a 0-d "
                         f"tensor")
    dims = input.shape[-1]
    x = input.detach().reshape(-1, dims)
    count = x.shape[0]
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * dims
    if len(per_dim) != dims:
        raise ShapeError(f"{name}: expected {dims} bin specifications (one per dim of the "
                         f"last input dim), got {len(per_dim)}")
    if range is not None:
        range = [float(v) for v in range]
        if len(range) != 2 * dims:
            raise ShapeError(f"{name}: expected range to have {2 * dims} values (min, max per "
                             f"dim), got {len(range)}")
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise ShapeError(f"{name}: expected weight of shape {tuple(input.shape[:-1])} "
                             f"(the input's without its last dim), got {tuple(weight.shape)}")
        if weight._dtype is not input._dtype:
            raise EmberTypeError(f"{name}: weight ({weight._dtype.name}) must have the "
                                 f"input's dtype ({input._dtype.name})")
    edges = [_edges(name, x, b, None if range is None else range[2 * d:2 * d + 2], d)
             for d, b in enumerate(per_dim)]
    sizes = [e.shape[0] - 1 for e in edges]
    flat = ops.zeros(count, dtype=D.int64, device=x._device)
    keep = ops.ones(count, dtype=D.bool_, device=x._device)
    for d, e in enumerate(edges):
        column = x[:, d]
        # bin i holds [e_i, e_i+1); the last also holds its right edge
        pos = searchsorted(e, column, right=True) - 1
        pos = ops.where(pos == sizes[d], sizes[d] - 1, pos)
        keep = keep & (column >= e[0]) & (column <= e[-1])
        flat = flat * sizes[d] + pos.clamp(min=0)
    values = ops.ones(count, dtype=x._dtype, device=x._device) if weight is None else \
        weight.detach().reshape(-1)
    total = 1
    for s in sizes:
        total *= s
    hist = ops.scatter_add(ops.zeros(total, dtype=x._dtype, device=x._device), 0,
                           ops.where(keep, flat, 0), ops.where(keep, values, 0.0))
    hist = hist.reshape(sizes)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            shape = [1] * dims
            shape[d] = -1
            hist = hist / (e[1:] - e[:-1]).reshape(shape)
    return hist, tuple(edges)


def histogram(input: Tensor, bins=100, *, range=None, weight=None,  # noqa: A002
              density: bool = False) -> histogram_result:
    """The histogram of input's values: bins equal bins over range (the data's min and max
    by default), or the bins between the given 1-D tensor of edges; each bin holds
    [left, right), the last one also its right edge, and values outside are left out.
    weight weighs each element; density divides by the total and the bin widths.
    Returns (hist, bin_edges).

    PyTorch
    -------
    ``torch.histogram``
    """
    _need("histogram", input)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise ShapeError(f"histogram: expected weight of the input's shape "
                         f"{tuple(input.shape)}, got {tuple(weight.shape)}")
    hist, edges = _histogramdd("histogram", input.reshape(-1, 1), [bins], range,
                               None if weight is None else weight.reshape(-1), density)
    return histogram_result(hist, edges[0])


def histogramdd(input: Tensor, bins=10, *, range=None, weight=None,  # noqa: A002
                density: bool = False) -> histogramdd_result:
    """The D-dimensional histogram of the points in input's last dim (..., D): bins is an
    int for every dim, one int per dim, or one 1-D tensor of edges per dim; range is the
    flat (min, max) of every dim.  Returns (hist, bin_edges), one edge tensor per dim.

    PyTorch
    -------
    ``torch.histogramdd``
    """
    hist, edges = _histogramdd("histogramdd", input, bins, range, weight, density)
    return histogramdd_result(hist, edges)
