"""torch.* index functions: scatter, scatter_reduce, index_fill, index_put, masked_select,
masked_scatter, take_along_dim, searchsorted.
"""
from __future__ import annotations

from .. import dtypes as D
from .. import ops
from ..dispatch import run
from ..errors import (
    EmberIndexError,
    EmberTypeError,
    EmberValueError,
    ShapeError,
)
from ..ops import index as _index
from ..ops._out import write_out
from ..ops._util import broadcast_shapes as _broadcast
from ..ops._util import norm_dim
from ..ops.creation import check_fits
from ..ops.index import _bounds, _check_gather, _check_index_dtype, index_put_op
from ..signatures import numpy_names
from ..tensor import Tensor
from ._util import _need

__all__ = ["masked_fill", "scatter", "scatter_reduce", "index_fill", "masked_select",
           "take_along_dim", "searchsorted", "bucketize", "index_put", "masked_scatter",
           "index_copy", "put", "isin", "unravel_index", "nonzero_static",
           "index_reduce"]


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """x with value where mask is true; the result keeps x's dtype (a float value into an
    integer tensor is truncated, one that does not fit raises: ops.creation.check_fits).

    PyTorch
    -------
    ``torch.masked_fill``
    """
    if type(value) is Tensor:
        if value.ndim != 0:
            raise ShapeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                             f"got tensor with {value.ndim} dimension(s)")
        if value._dtype.category == D.COMPLEX and input._dtype.category != D.COMPLEX:
            value = value.item()          # its imaginary part checked below, as torch does
        else:
            value = value.to(input._dtype)
    if type(value) is complex and input._dtype.category != D.COMPLEX:
        # torch's checked conversion: a real dtype takes a complex value only without an
        # imaginary part (the cast would drop it silently)
        if value.imag != 0:
            raise EmberTypeError(f"masked_fill: value {value!r} cannot be converted to "
                                 f"{input._dtype.name} without overflow (as torch)")
        value = value.real
    if type(value) is not Tensor and input._dtype.category < D.FLOAT:
        check_fits(value, input._dtype, "masked_fill")
        value = bool(value) if input._dtype is D.bool_ else int(value)
    return ops.where(mask, value, input)


def _flat_positions(input: Tensor, index: Tensor, axis: int, name: str) -> Tensor:
    """The positions in input.reshape(-1) that index addresses along axis (torch.scatter)."""
    _check_gather(name, input, index, axis)       # gather's rules for the index's shape
    index = _bounds(name, index.to(D.int64), input._data.shape[axis])
    strides = [1] * input.ndim
    for d in range(input.ndim - 2, -1, -1):
        strides[d] = strides[d + 1] * input._data.shape[d + 1]
    lin = index * strides[axis]
    for d, n in enumerate(index._data.shape):
        if d != axis and n > 1:
            coord = ops.arange(n, device=input._device) * strides[d]
            lin = lin + coord.reshape((1,) * d + (n,) + (1,) * (input.ndim - d - 1))
    return lin


def _src_at_index(src: Tensor, index: Tensor, dtype, name: str) -> Tensor:
    """src's entries scatter writes (its leading index-shaped block, as PyTorch), flat, in
    `dtype`; a ShapeError where src is smaller than index in some dim."""
    if src.ndim != index.ndim or any(a < b for a, b in zip(src._data.shape,
                                                           index._data.shape)):
        raise ShapeError(f"{name}: src shape {tuple(src.shape)} must be at least the "
                         f"index shape {tuple(index.shape)} in every dim")
    if src._data.shape != index._data.shape:
        src = src[tuple(slice(0, n) for n in index._data.shape)]
    return src.to(dtype).reshape(-1)


@numpy_names
def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None,
            reduce: str | None = None) -> Tensor:
    """A copy of input with src (a tensor or a number) written at index along dim; of
    repeated targets the last write wins.  reduce='add'/'multiply' as PyTorch's.

    PyTorch
    -------
    ``torch.scatter``
    """
    _need("scatter", input)
    _check_index_dtype("scatter", index)
    if type(src) is Tensor and src._dtype is not input._dtype:
        raise EmberTypeError(f"scatter(): Expected self.dtype to be equal to src.dtype (got "
                             f"{input._dtype.name} and {src._dtype.name}); cast src with "
                             f".to(input.dtype)")
    if src is None:
        src = value
    if src is None:
        raise EmberTypeError("scatter(): expected src (a tensor) or value (a number)")
    axis = norm_dim(dim, input.ndim, "scatter") if input.ndim else 0
    if reduce is not None:
        return scatter_reduce(input, dim, index, src if type(src) is Tensor else
                              ops.full(index._data.shape, src, dtype=input._dtype,
                                       device=input._device),
                              {"add": "sum", "multiply": "prod"}.get(reduce, reduce))
    if input.ndim == 0:
        input, index = input.reshape(1), index.reshape(1)
        src = src.reshape(1) if type(src) is Tensor else src
        return scatter(input, 0, index, src).reshape(())
    lin = _flat_positions(input, index, axis, "scatter")
    if type(src) is Tensor:
        values = _src_at_index(src, index, input._dtype, "scatter")
    else:
        values = src.item() if type(src) is Tensor else src
    flat = input.reshape(-1)
    return run(index_put_op, flat, lin.reshape(-1), values).reshape(input._data.shape)


@numpy_names
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                   *, include_self: bool = True) -> Tensor:
    """torch.scatter_reduce: reduce='sum', 'mean', 'prod', 'amax' or 'amin'; indices in
    [0, size) as PyTorch's; an integer 'mean' keeps the dtype, rounding down.

    PyTorch
    -------
    ``torch.scatter_reduce``
    """
    _check_index_dtype("scatter_reduce", index)
    if input.ndim and index.ndim == input.ndim:
        # checked (and marked) once, under this function's name, for the scatters below
        index = _bounds("scatter_reduce", index.to(D.int64),
                        input._data.shape[norm_dim(dim, input.ndim, "scatter_reduce")])
    if reduce == "sum":
        base = input if include_self else scatter(input, dim, index, 0.0 if
                                                   input._dtype.category == D.FLOAT else 0)
        return ops.scatter_add(base, dim, index, src)
    if reduce == "mean":
        if input._dtype is D.bool_:
            raise EmberTypeError("scatter_reduce(): reduce='mean' is not defined for bool "
                                 "tensors (PyTorch refuses them too); convert with .float() "
                                 "or .long() first")
        ones = ops.ones(index._data.shape, dtype=input._dtype, device=input._device)
        base = input if include_self else scatter(input, dim, index, 0)
        count = ops.scatter_add(ops.ones_like(input) if include_self else
                                ops.zeros_like(input), dim, index, ones)
        total = ops.scatter_add(base, dim, index, src)
        count = ops.where(count == 0, 1, count)
        if input._dtype.category != D.FLOAT:
            # integers keep their dtype, the mean rounded down (PyTorch: div(.., 'floor'))
            return ops.floor_divide(total, count)
        return total / count
    if reduce in ("amax", "amin", "prod"):
        return scatter_extreme_or_prod(input, dim, index, src, reduce, include_self)
    raise EmberValueError(f"scatter_reduce(): reduce must be one of 'sum', 'prod', 'mean', "
                          f"'amax', 'amin', got {reduce!r}")


@numpy_names
def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy of input with `value` at the given indices along dim.

    PyTorch
    -------
    ``torch.index_fill``
    """
    _check_index_dtype("index_fill", index)
    axis = norm_dim(dim, input.ndim, "index_fill") if input.ndim else 0
    n = input._data.shape[axis] if input.ndim else 1
    index = _bounds("index_fill", index.reshape(-1).to(D.int64), n)
    mask = run(index_put_op, ops.zeros(n, dtype=D.bool_, device=input._device), index, True)
    if input.ndim:
        mask = mask.reshape((n,) + (1,) * (input.ndim - axis - 1))
    else:
        mask = mask.reshape(())             # a 0-d input keeps its shape, as torch's
    if type(value) is Tensor:
        value = value.to(input._dtype)
    return ops.where(mask, value, input)


@numpy_names
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of input with the slices of source along dim at the given indices (a repeated
    index stores one of its slices, as PyTorch leaves unspecified which).

    PyTorch
    -------
    ``torch.index_copy``
    """
    _need("index_copy", input)
    _need("index_copy", source)
    _check_index_dtype("index_copy", index)
    if index.ndim > 1:
        raise ShapeError(f"index_copy(): index should have dimension 1 or 0, got "
                         f"{index.ndim}-D")
    axis = norm_dim(dim, input.ndim, "index_copy") if input.ndim else 0
    index = index.reshape(-1)
    want = list(input._data.shape) or [1]
    want[axis] = index._data.shape[0]
    got = list(source._data.shape) or [1]
    if got != want:
        raise ShapeError(f"index_copy(): source of shape {list(source.shape)} does not fit: "
                         f"expected {want} (input's shape with dim {dim} the length of index)")
    if not input.ndim:
        return index_put(input.reshape(1), (index,), source.reshape(1)).reshape(())
    return index_put(input, (slice(None),) * axis + (index,), source)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of input with source's values at the positions index names in input seen as
    1-D (added up with accumulate).

    PyTorch
    -------
    ``torch.put``
    """
    _need("put", input)
    _check_index_dtype("put", index)
    flat = index_put(input.reshape(-1), (index.reshape(-1),),
                     source.reshape(-1) if type(source) is Tensor else source, accumulate)
    return flat.reshape(*input.shape)


def masked_select(input: Tensor, mask: Tensor, *, out=None) -> Tensor:
    """The elements of input where mask holds, as 1-D (both broadcast).

    PyTorch
    -------
    ``torch.masked_select``
    """
    shape = _broadcast("masked_select", input._data.shape, mask._data.shape)
    result = ops.expand(input, shape)[ops.expand(mask, shape)]
    return result if out is None else write_out("masked_select", result, out, (input, mask))


@numpy_names
def take_along_dim(input: Tensor, indices: Tensor, dim=None) -> Tensor:
    """input's values at indices along dim (indices broadcast against input), as
    torch.take_along_dim: with a dim, indices in [-size, size), negatives counted from the
    end (PyTorch wraps any index modulo the size there, silently; ember raises past it);
    without one, the gather of the flattened input, indices in [0, numel).

    PyTorch
    -------
    ``torch.take_along_dim``
    """
    _check_index_dtype("take_along_dim", indices)
    if dim is None:
        return ops.gather(input.reshape(-1), 0, indices.reshape(-1))
    axis = norm_dim(dim, input.ndim, "take_along_dim")
    if indices.ndim != input.ndim:
        raise ShapeError(f"take_along_dim: input and indices need the same number of dims, "
                         f"got {input.ndim} and {indices.ndim}; unsqueeze the smaller one")
    # every dim but `dim` broadcasts (torch's rule): each side's size there is kept
    at_dim = list(input._data.shape)
    at_dim[axis] = indices._data.shape[axis]
    shape_ix = _broadcast("take_along_dim", tuple(at_dim), indices._data.shape)
    at_dim = list(indices._data.shape)
    at_dim[axis] = input._data.shape[axis]
    shape_in = _broadcast("take_along_dim", tuple(at_dim), input._data.shape)
    indices = _bounds("take_along_dim", indices.to(D.int64), input._data.shape[axis])
    return ops.gather(ops.expand(input, tuple(shape_in)), axis,
                      ops.expand(indices, tuple(shape_ix)))


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False,
                 right: bool = False, side=None, sorter=None) -> Tensor:
    """Where each value would be inserted into the sorted last dim to keep it sorted.

    PyTorch
    -------
    ``torch.searchsorted``
    """
    if side is not None:
        right = side == "right"
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    values = input if type(input) is Tensor else ops.full((), input,
                                                           dtype=sorted_sequence._dtype,
                                                           device=sorted_sequence._device)
    seq = sorted_sequence
    if seq.ndim == 1:
        cmp = seq <= values.unsqueeze(-1) if right else seq < values.unsqueeze(-1)
    else:
        cmp = (seq.unsqueeze(-2) <= values.unsqueeze(-1) if right
               else seq.unsqueeze(-2) < values.unsqueeze(-1))
    out = cmp.sum(-1)
    return out.to(D.int32) if out_int32 else out


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The index of the bucket each value of ``input`` falls in, given sorted
    ``boundaries``; ``right`` chooses which side a value equal to a boundary goes.

    PyTorch
    -------
    ``torch.bucketize``
    """
    if type(boundaries) is Tensor and boundaries.ndim != 1:
        raise ShapeError(f"bucketize: boundaries tensor must be 1 dimension, but got dim("
                         f"{boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """A copy of input with input[indices] = values (or += values, duplicates adding up,
    with accumulate); indices is a tuple of integer or bool tensors.

    PyTorch
    -------
    ``torch.index_put``
    """
    _need("index_put", input)
    if not isinstance(indices, (tuple, list)):
        raise EmberTypeError(f"index_put: expected indices as a tuple of tensors, got "
                             f"{type(indices).__name__}")
    key = tuple(indices)
    if type(values) is not Tensor:
        values = ops.tensor(values, dtype=input._dtype, device=input._device)
    values = values.to(input._dtype)
    if not accumulate:
        out = input.clone()
        out[key] = values
        return out
    lin = _index._linear_index(input, _index._expand_key(input, key))
    try:
        values = values.expand(*lin.shape)
    except Exception:
        raise ShapeError(f"index_put: values of shape {tuple(values.shape)} do not broadcast "
                         f"to the indexed shape {tuple(lin.shape)}") from None
    flat = ops.index_add(input.reshape(-1), 0, lin.reshape(-1), values.reshape(-1))
    return flat.reshape(*input.shape)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """input with its masked positions (mask broadcast to input) filled, in row-major order,
    by consecutive elements of source.

    PyTorch
    -------
    ``torch.masked_scatter``
    """
    _need("masked_scatter", input)
    _need("masked_scatter", source)
    if mask._dtype is not D.bool_:
        raise EmberTypeError(f"masked_scatter: expected a bool mask, got {mask._dtype.name}")
    # torch's out-of-place form broadcasts input and mask together (the in-place
    # masked_scatter_ writes back into input's shape, which refuses a larger result)
    shape = _broadcast("masked_scatter", tuple(input.shape), tuple(mask.shape))
    if shape != tuple(input.shape):
        input = input.expand(*shape)
    flat_mask = mask.expand(*shape).reshape(-1)
    position = ops.cumsum(flat_mask.to(D.int64), 0) - 1
    count = int(position[-1].item()) + 1 if position.numel() else 0
    if count > source.numel():
        raise EmberIndexError(f"masked_scatter: the mask selects {count} elements but "
                              f"source has only {source.numel()}")
    if source.numel() == 0:
        return input.clone()
    taken = ops.take(source.to(input._dtype).reshape(-1), position.clamp(0, None))
    return ops.where(flat_mask, taken, input.reshape(-1)).reshape(*shape)


def scatter_extreme_or_prod(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                            include_self: bool = True) -> Tensor:
    """scatter_reduce for 'prod', 'amax', 'amin': the sources of each target are combined
    by a segmented scan (sorted by target, log2(n) doubling steps, exact for integers),
    and each segment's last value, its full reduction, is written."""
    _check_index_dtype("scatter_reduce", index)
    if type(src) is not Tensor:
        raise EmberTypeError(f"scatter_reduce(): expected src to be a Tensor, got "
                             f"{type(src).__name__}")
    if input.ndim == 0:
        return scatter_extreme_or_prod(input.reshape(1), 0, index.reshape(1),
                                       src.reshape(1), reduce, include_self).reshape(())
    axis = norm_dim(dim, input.ndim, "scatter_reduce")
    vals = _src_at_index(src, index, input._dtype, "scatter_reduce()")
    lin = _flat_positions(input, index, axis, "scatter_reduce").reshape(-1).to(D.int64)
    flat = input.reshape(-1)
    n = lin.shape[0]
    if n == 0:
        return input.clone()
    combine = {"prod": ops.mul, "amax": ops.maximum, "amin": ops.minimum}[reduce]
    order = ops.argsort(lin * n + ops.arange(n, device=input._device))
    targets, v = lin[order], vals[order]
    step = 1
    while step < n:
        same = ops.cat([ops.zeros(step, dtype=D.bool_, device=input._device),
                        targets[step:] == targets[:-step]])
        v = ops.where(same, combine(v, ops.cat([v[:step], v[:-step]])), v)
        step *= 2
    # each segment's last entry holds its full reduction: write only those (unique targets)
    last = ops.cat([targets[1:] != targets[:-1],
                    ops.ones(1, dtype=D.bool_, device=input._device)])
    targets, v = targets[last], v[last]
    written = run(index_put_op, flat, targets, v)
    touched = run(index_put_op, ops.zeros(flat.shape[0], dtype=D.bool_, device=input._device),
                  targets, True)
    if include_self:
        written = combine(flat, written)
    return ops.where(touched, written, flat).reshape(input._data.shape)


# Tensor.fill_diagonal_'s out-of-place form (a Tensor method only)
def fill_diagonal(x: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """x with fill_value on its main diagonal (every dim of one size, or a matrix; `wrap`
    continues the diagonal of a tall matrix every n + 1 rows, as PyTorch)."""
    if x.ndim < 2:
        raise ShapeError(f"fill_diagonal_: expected a tensor of at least 2 dims, got "
                         f"{tuple(x.shape)}")
    shape = x._data.shape
    if x.ndim > 2 and len(set(shape)) != 1:
        raise ShapeError(f"fill_diagonal_: all dimensions of input must be of equal length, "
                         f"got {tuple(shape)}")
    numel = x.numel()
    if x.ndim == 2:
        rows, cols = shape
        step = cols + 1
        end = numel if wrap and rows > cols else min(rows, cols) * cols
    else:
        step = sum(shape[0] ** k for k in range(x.ndim))
        end = numel
    index = ops.arange(0, end, step, device=x._device)
    return run(index_put_op, x.reshape(-1), index, fill_value).reshape(shape)


def isin(elements, test_elements, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """Whether each element of `elements` is in test_elements (either may be a number).

    PyTorch
    -------
    ``torch.isin``
    """
    del assume_unique                # a hint for torch's sort-based path: same answer
    if type(elements) is not Tensor and type(test_elements) is not Tensor:
        raise EmberTypeError("isin(): expected a Tensor for elements or test_elements, got "
                             "two numbers")
    like = elements if type(elements) is Tensor else test_elements
    e = elements if type(elements) is Tensor else ops.full((), elements, device=like._device)
    t = test_elements if type(test_elements) is Tensor else \
        ops.full((), test_elements, device=like._device)
    flat = t.reshape(-1)
    if flat.numel() == 0:
        found = ops.zeros(tuple(e.shape), dtype=D.bool_, device=e._device)
    else:
        found = ops.any(e.unsqueeze(-1) == flat, -1)
    return ~found if invert else found


def unravel_index(indices: Tensor, shape) -> tuple:
    """The coordinates in a tensor of `shape` of each flat index (one tensor per dim).

    PyTorch
    -------
    ``torch.unravel_index``
    """
    if type(indices) is not Tensor:
        indices = ops.tensor(indices)
    if indices._dtype.category != D.INT:
        raise EmberTypeError(f"unravel_index: expected 'indices' to be an integer tensor, "
                             f"got {indices._dtype.name}")
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise EmberValueError(f"unravel_index: 'shape' cannot have negative values, got "
                              f"{shape}")
    total = 1
    for s in shape:
        total *= s
    if indices.numel() and bool(((indices < -total).logical_or(indices >= total)).any()):
        raise EmberValueError(f"unravel_index: 'indices' must be in range [{-total}, "
                              f"{total - 1}] for shape {shape}")
    flat = ops.where(indices < 0, indices + total, indices).to(D.int64)
    out = []
    for s in reversed(shape):
        out.append(ops.remainder(flat, s) if s else flat * 0)
        flat = ops.floor_divide(flat, s) if s else flat
    return tuple(reversed(out))


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """nonzero(input) with exactly size rows: the first size indices, or all of them
    followed by rows of fill_value.

    PyTorch
    -------
    ``torch.nonzero_static``
    """
    _need("nonzero_static", input)
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise EmberValueError(f"nonzero_static: size must be a non-negative int, got "
                              f"{size!r}")
    found = ops.nonzero(input)
    count = found.shape[0]
    if count >= size:
        return found[:size]
    rest = ops.full((size - count, input.ndim), fill_value, dtype=D.int64,
                    device=input.device)
    return ops.cat([found, rest])


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


@numpy_names
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """input with source's slice i along dim reduced ('prod', 'mean', 'amax', 'amin') into
    input's slice index[i]; without include_self the reduced slices forget input's values.
    scatter_reduce with index spread over source's shape.

    PyTorch
    -------
    ``torch.index_reduce``, ``Tensor.index_reduce``
    """
    _need("index_reduce", input)
    _need("index_reduce", source)
    _check_index_dtype("index_reduce", index)
    if reduce not in _INDEX_REDUCTIONS:
        raise EmberValueError(f"index_reduce(): reduce must be one of "
                              f"{', '.join(map(repr, _INDEX_REDUCTIONS))}, got {reduce!r}")
    if index.ndim > 1:
        raise ShapeError(f"index_reduce(): index should have dimension 1 or 0, got "
                         f"{index.ndim}-D")
    if source._dtype is not input._dtype:
        raise EmberTypeError(f"index_reduce(): self ({input._dtype.name}) and source "
                             f"({source._dtype.name}) must have the same dtype; cast source")
    if not input.ndim:
        return index_reduce(input.reshape(1), 0, index, source.reshape(1), reduce,
                            include_self=include_self).reshape(())
    axis = norm_dim(dim, input.ndim, "index_reduce")
    index = index.reshape(-1)
    want = list(input._data.shape)
    want[axis] = index._data.shape[0]
    if list(source._data.shape if source.ndim else (1,)) != want:
        raise ShapeError(f"index_reduce(): source of shape {list(source.shape)} does not fit:"
                         f" expected {want} (input's shape with dim {dim} the length of "
                         f"index)")
    spread = [1] * input.ndim
    spread[axis] = -1
    full = index.reshape(spread).expand(tuple(want))
    return scatter_reduce(input, axis, full, source.reshape(want), reduce,
                          include_self=include_self)
