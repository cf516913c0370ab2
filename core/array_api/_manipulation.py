"""Manipulation and indexing functions of the array API standard (ember movement ops)."""
from __future__ import annotations

from .. import dtypes as D
from .. import ops
from ..errors import EmberIndexError, EmberValueError, ShapeError
from ..ops._util import broadcast_shapes as _broadcast_shapes
from ..ops._util import norm_dim
from ..tensor import Tensor
from ._dtypes import need
from ._sorting import searchsorted
from ._statistical import cumulative_sum
from ._util import norm_axes, promoted


def broadcast_shapes(*shapes) -> tuple:
    """The shape the given shapes broadcast to.

    PyTorch
    -------
    ``torch.broadcast_shapes``
    """
    return _broadcast_shapes("broadcast_shapes", *(tuple(s) for s in shapes))


def broadcast_to(x: Tensor, /, shape) -> Tensor:
    """x broadcast to shape (a view where the backend has views).

    PyTorch
    -------
    ``torch.broadcast_to``
    """
    need("broadcast_to", x)
    shape = tuple(shape)
    if _broadcast_shapes("broadcast_to", x._data.shape, shape) != shape:
        raise ShapeError(f"ember.array_api.broadcast_to: shape {tuple(x.shape)} cannot be "
                         f"broadcast to {shape}")
    return x if x._data.shape == shape else ops.expand(x, shape)


def broadcast_arrays(*arrays: Tensor) -> list:
    """The arrays broadcast to one shape, as a list.

    PyTorch
    -------
    ``torch.broadcast_tensors``
    """
    shape = broadcast_shapes(*(need("broadcast_arrays", a)._data.shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def stack(arrays, /, *, axis: int = 0) -> Tensor:
    """The arrays (one shape) joined along a new axis.

    PyTorch
    -------
    ``torch.stack``
    """
    return ops.stack(promoted("stack", arrays), axis)


def unstack(x: Tensor, /, *, axis: int = 0) -> tuple:
    """The slices of x along axis, as a tuple.

    PyTorch
    -------
    ``torch.unbind``
    """
    need("unstack", x)
    if x.ndim == 0:
        raise ShapeError("ember.array_api.unstack: expected an array with at least 1 dim")
    axis = norm_dim(axis, x.ndim, "unstack")
    return tuple(ops.squeeze(s, axis) for s in ops.split(x, 1, axis)) if \
        x._data.shape[axis] else ()


def expand_dims(x: Tensor, /, axis: int = 0) -> Tensor:
    """``x`` with a new axis of size 1 at ``axis``.

    PyTorch
    -------
    ``torch.unsqueeze``
    """
    need("expand_dims", x)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise EmberIndexError(f"ember.array_api.expand_dims: axis {axis} is out of range for "
                              f"an array of {x.ndim} dims (expected [{-x.ndim - 1}, {x.ndim}])")
    return ops.unsqueeze(x, axis)


def squeeze(x: Tensor, /, axis) -> Tensor:
    """x without the given axes, each of which must have size 1.

    PyTorch
    -------
    ``torch.squeeze``
    """
    need("squeeze", x)
    axes = norm_axes("squeeze", axis, x.ndim)
    for a in axes:
        if x._data.shape[a] != 1:
            raise ShapeError(f"ember.array_api.squeeze: axis {a} has size "
                             f"{x._data.shape[a]}, expected 1")
    return ops.reshape(x, tuple(n for i, n in enumerate(x._data.shape) if i not in axes))


def flip(x: Tensor, /, *, axis=None) -> Tensor:
    """``x`` reversed along ``axis`` (all axes when None).

    PyTorch
    -------
    ``torch.flip``
    """
    need("flip", x)
    axes = tuple(range(x.ndim)) if axis is None else norm_axes("flip", axis, x.ndim)
    return ops.flip(x, axes) if axes else x


def permute_dims(x: Tensor, /, axes) -> Tensor:
    """``x`` with its axes reordered as ``axes``.

    PyTorch
    -------
    ``torch.permute``
    """
    return ops.permute(need("permute_dims", x), tuple(axes))


def moveaxis(x: Tensor, source, destination, /) -> Tensor:
    """``x`` with axes ``source`` moved to positions ``destination``.

    PyTorch
    -------
    ``torch.moveaxis``
    """
    need("moveaxis", x)
    src, dst = norm_axes("moveaxis", source, x.ndim), norm_axes("moveaxis", destination, x.ndim)
    if len(src) != len(dst):
        raise EmberValueError(f"ember.array_api.moveaxis: source {source} and destination "
                              f"{destination} must have the same number of axes")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return ops.permute(x, tuple(order))


def reshape(x: Tensor, /, shape, *, copy: bool | None = None) -> Tensor:
    """x with a new shape (one -1 is inferred); copy=True always copies.

    PyTorch
    -------
    ``torch.reshape``
    """
    out = ops.reshape(need("reshape", x), tuple(shape))
    return out.clone() if copy else out


def roll(x: Tensor, /, shift, *, axis=None) -> Tensor:
    """x with elements shifted along axes (None: over the flattened array), wrapping.

    PyTorch
    -------
    ``torch.roll``
    """
    need("roll", x)
    if axis is None:
        return roll(x.reshape(-1), shift, axis=0).reshape(x._data.shape)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    shifts = (shift,) * len(axes) if isinstance(shift, int) else tuple(shift)
    if len(shifts) != len(axes):
        raise EmberValueError(f"ember.array_api.roll: {len(shifts)} shifts for {len(axes)} "
                              "axes; expected one shift per axis")
    out = x
    for a, s in zip(axes, shifts):
        a = norm_dim(a, x.ndim, "roll")
        n = x._data.shape[a]
        if n == 0 or s % n == 0:
            continue
        k = s % n
        head, tail = ops.split(out, [n - k, k], a)
        out = ops.cat([tail, head], a)
    return out


def repeat(x: Tensor, repeats, /, *, axis: int | None = None) -> Tensor:
    """Each element repeated (an int, or one count per element along axis).

    PyTorch
    -------
    ``torch.repeat_interleave``
    """
    need("repeat", x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = norm_dim(axis, x.ndim, "repeat")
    n = x._data.shape[axis]
    dev = x._device
    if isinstance(repeats, int):
        if repeats < 0:
            raise EmberValueError(f"ember.array_api.repeat: repeats must be >= 0, got "
                                  f"{repeats}")
        index = ops.floor_divide(ops.arange(n * repeats, device=dev), repeats) if repeats \
            else ops.zeros(0, dtype=D.int64, device=dev)
        return ops.index_select(x, axis, index)
    need("repeat", repeats, "integer")
    counts = repeats.to(D.int64).reshape(-1)
    if counts._data.shape[0] == 1:
        counts = counts.expand(n)
    if counts._data.shape[0] != n:
        raise ShapeError(f"ember.array_api.repeat: {counts._data.shape[0]} repeats for an axis "
                         f"of size {n}; expected 1 or {n}")
    ends = cumulative_sum(counts)
    total = int(ends[-1].item()) if n else 0
    # output position p reads the element whose run of copies contains p
    index = searchsorted(ends, ops.arange(total, device=dev), side="right")
    return ops.index_select(x, axis, index)


def tile(x: Tensor, repetitions, /) -> Tensor:
    """x repeated along each axis (repetitions may have more entries than x has dims).

    PyTorch
    -------
    ``torch.tile``
    """
    need("tile", x)
    reps = tuple(repetitions)
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + tuple(x._data.shape)
    # (r0, d0, r1, d1, ...) by broadcasting an interleaved (1, d0, 1, d1, ...) view
    lifted = x.reshape(tuple(v for d in shape for v in (1, d)))
    wide = ops.expand(lifted, tuple(v for r, d in zip(reps, shape) for v in (r, d)))
    return ops.contiguous(wide).reshape(tuple(r * d for r, d in zip(reps, shape)))


def take(x: Tensor, indices: Tensor, /, *, axis: int | None = None) -> Tensor:
    """x's entries at integer indices along axis (may be omitted for 1-D x).

    PyTorch
    -------
    ``torch.take``
    """
    need("take", x)
    need("take", indices, "integer")
    if axis is None:
        if x.ndim != 1:
            raise EmberValueError("ember.array_api.take: axis is required for arrays of "
                                  f"{x.ndim} dims")
        axis = 0
    axis = norm_dim(axis, x.ndim, "take")
    # negative indices count from the end, as in indexing (numpy and array_api_strict do;
    # the 2024.12 revision says so): index_select is PyTorch's and refuses them
    return ops.index_select(x, axis, ops.where(indices < 0, indices + x.shape[axis], indices))


def take_along_axis(x: Tensor, indices: Tensor, /, *, axis: int = -1) -> Tensor:
    """x's entries at indices along axis, matched element by element (numpy's rule).

    PyTorch
    -------
    ``torch.take_along_dim``
    """
    need("take_along_axis", x)
    need("take_along_axis", indices, "integer")
    if indices.ndim != x.ndim:
        raise ShapeError(f"ember.array_api.take_along_axis: indices have {indices.ndim} dims "
                         f"and x has {x.ndim}; expected the same number")
    axis = norm_dim(axis, x.ndim, "take_along_axis")
    # broadcast every axis but `axis`, where x keeps its length and indices theirs
    outer = _broadcast_shapes("take_along_axis", *(
        a._data.shape[:axis] + (1,) + a._data.shape[axis + 1:] for a in (x, indices)))
    xs = outer[:axis] + (x._data.shape[axis],) + outer[axis + 1:]
    js = outer[:axis] + (indices._data.shape[axis],) + outer[axis + 1:]
    return ops.gather(ops.expand(x, xs), axis, ops.expand(indices, js))
