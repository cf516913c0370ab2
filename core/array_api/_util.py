"""Helpers the array-API families share: axis tuples, the sum dtype, joining arrays.

concat is here, below both manipulation and statistics (diff joins prepend/append), so
the family modules import one way: _util <- _statistical <- _sorting <- _manipulation.
"""
from __future__ import annotations

from .. import dtypes as D
from .. import ops
from ..errors import EmberValueError, ShapeError
from ..ops._util import norm_dim
from ..tensor import Tensor
from ._dtypes import as_dtype, need, result_type


def norm_axes(name, axis, ndim) -> tuple:
    """Normalised axes of a tuple (or one int); repeats are an error, as the standard says."""
    raw = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(norm_dim(a, ndim, name) for a in raw)
    if len(set(axes)) != len(axes):
        raise EmberValueError(f"ember.array_api.{name}: axis {axis} repeats an axis")
    return axes


def sum_dtype(x: Tensor, dtype) -> D.DType:
    if dtype is not None:
        return as_dtype(dtype)
    return D.int64 if x._dtype.category == D.INT else x._dtype


def promoted(name, arrays):
    arrays = list(arrays)
    if not arrays:
        raise EmberValueError(f"ember.array_api.{name}: expected at least one array")
    d = result_type(*(need(name, a) for a in arrays))
    return [a.to(d) for a in arrays]


def concat(arrays, /, *, axis: int | None = 0) -> Tensor:
    """The arrays joined along an existing axis (None: flattened first).

    PyTorch
    -------
    ``torch.concat``
    """
    arrays = promoted("concat", arrays)
    if axis is None:
        arrays, axis = [a.reshape(-1) for a in arrays], 0
    if arrays[0].ndim == 0:
        raise ShapeError("ember.array_api.concat: 0-d arrays cannot be concatenated; use "
                         "stack")
    out = ops.cat(arrays, axis)
    return out.clone() if len(arrays) == 1 else out
