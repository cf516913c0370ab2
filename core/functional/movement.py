"""torch.* movement built on slices, reshapes and concatenation: narrow, roll, tile, split,
stack, rotate, meshgrid, combinations.
"""
from __future__ import annotations

import builtins
import itertools

import numpy as np

from .. import dtypes as D
from .. import ops
from ..errors import (
    DeviceMismatchError,
    EmberIndexError,
    EmberTypeError,
    EmberValueError,
    ShapeError,
    UnsupportedError,
)
from ..ops import layout
from ..ops._util import as_shape, norm_dim, resolve_reshape, spread_or_keyword
from ..ops._util import broadcast_shapes as _broadcast
from ..signatures import numpy_names
from ..tensor import Size, Tensor, preserve_format
from ._util import _INTS, _need, _tensor

__all__ = ["narrow", "select", "unbind", "unflatten", "roll", "broadcast_to", "broadcast_shapes",
           "broadcast_tensors", "tile", "repeat_interleave", "rot90", "atleast_1d", "atleast_2d",
           "ravel", "t", "swapaxes", "swapdims", "hstack", "vstack", "row_stack",
           "column_stack", "dstack", "vander", "block_diag", "meshgrid", "cartesian_prod",
           "concat", "concatenate", "clone", "tensor_split", "diff", "combinations",
           "atleast_3d", "fliplr",
           "flipud", "hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_split",
           "unsafe_chunk", "slice_scatter", "select_scatter", "diagonal_scatter",
           "as_strided", "as_strided_copy", "as_strided_scatter", "expand_copy",
           "diagonal_copy", "alias_copy", "narrow_copy", "view_copy", "permute_copy",
           "split_with_sizes_copy", "unbind_copy", "unfold_copy", "squeeze_copy",
           "unsqueeze_copy", "transpose_copy", "t_copy", "constant_pad_nd",
           "gradient"]


@numpy_names
def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    """The `length` elements from `start` along dim (a view where the backend can).

    PyTorch
    -------
    ``torch.narrow``
    """
    _need("narrow", input)
    if input.ndim == 0:
        raise ShapeError("narrow() cannot be applied to a 0-dim tensor; reshape(1) it first")
    axis = norm_dim(dim, input.ndim, "narrow")
    n = input._data.shape[axis]
    if type(start) is Tensor and (start.ndim != 0 or start._dtype not in _INTS):
        raise EmberTypeError(f"narrow(): start must be a 0-dim integral Tensor, got "
                             f"{start._dtype.name} of shape {tuple(start.shape)}")
    start = int(start.item()) if type(start) is Tensor else int(start)
    if start < 0:
        start += n
    length = int(length)
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise EmberIndexError(f"narrow: start {start} and length {length} do not fit dimension "
                              f"{dim} of size {n}; expected 0 <= start and start + length <= "
                              f"{n}")
    index = tuple(slice(start, start + length, 1) if d == axis else slice(0, s, 1)
                  for d, s in enumerate(input._data.shape))
    return ops.movement.slice_(input, index)


@numpy_names
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at `index` along dim, with that dim removed.

    PyTorch
    -------
    ``torch.select``
    """
    axis = norm_dim(dim, input.ndim, "select")
    n = input._data.shape[axis]
    i = int(index)
    if not -n <= i < n:
        raise EmberIndexError(f"select: index {i} is out of range for dimension {dim} of "
                              f"size {n}")
    return narrow(input, axis, i % n, 1).squeeze(axis)


@numpy_names
def unbind(input: Tensor, dim: int = 0) -> tuple:
    """Every slice along dim, that dim removed.

    PyTorch
    -------
    ``torch.unbind``
    """
    if type(input) is Tensor and input.ndim == 0:
        raise EmberIndexError(f"unbind: dimension specified as {dim} but the tensor has no "
                              "dimensions")
    """Every slice along dim, that dim removed."""
    axis = norm_dim(dim, input.ndim, "unbind")
    return tuple(select(input, axis, i) for i in range(input._data.shape[axis]))


@numpy_names
def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """Dim `dim` split into `sizes` (one of them may be -1).

    PyTorch
    -------
    ``torch.unflatten``
    """
    axis = norm_dim(dim, input.ndim, "unflatten")
    shape = input._data.shape
    sizes = resolve_reshape("unflatten", (shape[axis],), as_shape(tuple(sizes), "unflatten"))
    return input.reshape(shape[:axis] + tuple(sizes) + shape[axis + 1:])


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Elements shifted along dims, wrapping around (dims None: over the flattened tensor).

    PyTorch
    -------
    ``torch.roll``
    """
    _need("roll", input)
    if input.ndim == 0 and dims is not None:
        raise EmberIndexError(f"roll: dimension specified as {dims} but the tensor has no "
                              "dimensions")
    if dims is None:
        if isinstance(shifts, (tuple, list)) and len(shifts) != 1:
            raise EmberValueError("roll: with dims=None, expected one shift")
        shift = shifts[0] if isinstance(shifts, (tuple, list)) else shifts
        return roll(input.reshape(-1), shift, 0).reshape(input._data.shape)
    shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(shifts) != len(dims):
        raise EmberValueError(f"roll: shifts {shifts} and dims {dims} must have the same "
                              "length")
    out = input
    for shift, dim in zip(shifts, dims):
        axis = norm_dim(dim, input.ndim, "roll")
        n = input._data.shape[axis]
        s = int(shift) % n if n else 0
        if s:
            out = ops.cat([narrow(out, axis, n - s, s), narrow(out, axis, 0, n - s)], axis)
    return out


def broadcast_to(input: Tensor, size) -> Tensor:
    """A view of ``input`` broadcast to ``size``.

    PyTorch
    -------
    ``torch.broadcast_to``
    """
    return ops.expand(input, *as_shape((size,) if isinstance(size, int) else (tuple(size),),
                                       "broadcast_to"))


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of these shapes broadcast to.

    PyTorch
    -------
    ``torch.broadcast_shapes``
    """
    return Size(_broadcast("broadcast_shapes", *[(s,) if isinstance(s, int) else tuple(s)
                                                   for s in shapes]))


def broadcast_tensors(*tensors) -> tuple:
    """The tensors broadcast to their common shape, as a tuple of views.

    PyTorch
    -------
    ``torch.broadcast_tensors``
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = _broadcast("broadcast_tensors", *[t._data.shape for t in tensors])
    return tuple(ops.expand(t, shape) for t in tensors)


def _tile_shape(input, sizes, name):
    sizes = as_shape(sizes, name)
    if len(sizes) < input.ndim:
        raise ShapeError(f"{name}: the number of repeats {len(sizes)} can not be smaller "
                         f"than the number of dims {input.ndim}")
    return sizes


def repeat(input: Tensor, *sizes) -> Tensor:
    """Tensor.repeat: the whole tensor tiled sizes[i] times along each dim."""
    sizes = _tile_shape(input, sizes, "repeat")
    shape = (1,) * (len(sizes) - input.ndim) + input._data.shape
    # (1, n0, 1, n1, ...) expanded to (r0, n0, r1, n1, ...): the repeat index is outer
    inter = tuple(v for n in shape for v in (1, n))
    expanded = tuple(v for r, n in zip(sizes, shape) for v in (r, n))
    out = input.reshape(inter).expand(expanded)
    # materialised: repeat returns new memory, as torch's (a reshape of the expanded view
    # can stay a stride-0 view, which in-place ops then refuse)
    return ops.contiguous(out).reshape(tuple(r * n for r, n in zip(sizes, shape)))


def tile(input: Tensor, *reps, dims=None) -> Tensor:
    """``input`` repeated ``dims`` times along each dim (a sequence, or ints as
    ``Tensor.tile(2, 1)`` takes them).

    PyTorch
    -------
    ``torch.tile``
    """
    dims = spread_or_keyword(reps, dims, "tile", "dims")
    if len(dims) == 1 and not isinstance(dims[0], int):
        dims = dims[0]
    dims = as_shape((tuple(dims),), "tile")
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def _check_output_size(output_size, total: int) -> None:
    """torch takes output_size as the promised length (to skip a device sync): a wrong one
    is an error there, and here."""
    if output_size is not None and int(output_size) != total:
        raise ShapeError(f"repeat_interleave: Invalid output_size, expected {total} but got "
                         f"{output_size}")


@numpy_names
def repeat_interleave(input: Tensor, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Each element repeated `repeats` times (an int, or one count per element of dim);
    repeat_interleave(counts) alone repeats each index i counts[i] times.

    PyTorch
    -------
    ``torch.repeat_interleave``
    """
    if repeats is None:                         # repeat_interleave(repeats_tensor)
        counts = input
        return repeat_interleave(ops.arange(counts.numel(), device=counts._device), counts, 0,
                                 output_size=output_size)
    if dim is None:
        input, dim = input.reshape(-1), 0
    axis = norm_dim(dim, input.ndim, "repeat_interleave")
    n = input._data.shape[axis]
    if type(repeats) is Tensor and repeats.numel() == 1 and repeats.ndim <= 1:
        repeats = int(repeats.item())
    if isinstance(repeats, int):
        if repeats < 0:
            raise EmberValueError(f"repeat_interleave: repeats must be >= 0, got {repeats}")
        shape = input._data.shape
        _check_output_size(output_size, n * repeats)
        out = input.unsqueeze(axis + 1).expand(shape[:axis + 1] + (repeats,) + shape[axis + 1:])
        return out.reshape(shape[:axis] + (n * repeats,) + shape[axis + 1:])
    counts = repeats.detach()._host() if type(repeats) is Tensor else np.asarray(repeats)
    if counts.ndim != 1 or counts.shape[0] != n:
        raise ShapeError(f"repeat_interleave: repeats must have the same size as input along "
                         f"dim {dim} ({n}), got shape {tuple(counts.shape)}")
    if (counts < 0).any():
        raise EmberValueError("repeat_interleave: repeats can not be negative")
    _check_output_size(output_size, int(counts.sum()))
    # the output's size depends on the counts: read on the host, as PyTorch syncs too
    index = ops.tensor(np.repeat(np.arange(n), counts.astype(np.int64)), dtype=D.int64,
                       device=input._device)
    return ops.index_select(input, axis, index)


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """``input`` rotated by 90 degrees ``k`` times in the plane of ``dims``.

    PyTorch
    -------
    ``torch.rot90``
    """
    if len(dims) != 2:
        raise ShapeError(f"rot90: expected total rotation dims == 2, but got dims = "
                         f"{len(dims)}")
    a, b = (norm_dim(d, input.ndim, "rot90") for d in dims)
    if a == b:
        raise ShapeError(f"rot90: expected rotation dims to be different, got {a} and {b}")
    k %= 4
    if k == 1:
        return input.flip(b).transpose(a, b)
    if k == 2:
        return input.flip((a, b))
    if k == 3:
        return input.transpose(a, b).flip(b)
    return input


def _atleast(name, fn, tensors):
    """torch's atleast_Nd: one tensor gives one tensor; several, or one sequence, a tuple."""
    if len(tensors) == 1 and type(tensors[0]) is Tensor:
        return fn(tensors[0])
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    for t in tensors:
        _need(name, t)
    return tuple(fn(t) for t in tensors)


def atleast_1d(*tensors):
    """``input`` with at least one dim (a 0-d tensor becomes shape ``(1,)``); several
    tensors (or one sequence) give a tuple.

    PyTorch
    -------
    ``torch.atleast_1d``
    """
    return _atleast("atleast_1d", lambda x: x.reshape(1) if x.ndim == 0 else x, tensors)


def atleast_2d(*tensors):
    """``input`` with at least two dims (new dims lead); several tensors give a tuple.

    PyTorch
    -------
    ``torch.atleast_2d``
    """
    return _atleast("atleast_2d", lambda x: x.reshape(1, -1) if x.ndim < 2 else x, tensors)


def _three_d(x):
    if x.ndim == 0:
        return x.reshape(1, 1, 1)
    if x.ndim == 1:
        return x.reshape(1, -1, 1)
    return x.unsqueeze(-1) if x.ndim == 2 else x


def atleast_3d(*tensors):
    """``input`` with at least three dims (as torch adds them); several tensors give
    a tuple.

    PyTorch
    -------
    ``torch.atleast_3d``
    """
    return _atleast("atleast_3d", _three_d, tensors)


def ravel(input: Tensor) -> Tensor:
    """``input`` flattened to one dim.

    PyTorch
    -------
    ``torch.ravel``
    """
    return input.reshape(-1)


def t(input: Tensor) -> Tensor:
    """The transpose of a matrix (0-d and 1-d tensors are returned as they are).

    PyTorch
    -------
    ``torch.t``
    """
    _need("t", input)
    return input.t()


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``input`` with dims ``axis0`` and ``axis1`` swapped (as :func:`transpose`).

    PyTorch
    -------
    ``torch.swapaxes``
    """
    return ops.transpose(input, axis0, axis1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``input`` with dims ``dim0`` and ``dim1`` swapped (swapaxes under torch's other
    parameter names).

    PyTorch
    -------
    ``torch.swapdims``
    """
    return ops.transpose(input, dim0, dim1)


def hstack(tensors) -> Tensor:
    """The tensors joined column-wise (along dim 1; along dim 0 for 1-D tensors).

    PyTorch
    -------
    ``torch.hstack``
    """
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise EmberValueError("hstack(): expected a non-empty list or tuple of tensors")
    tensors = [atleast_1d(t) for t in tensors]
    return ops.cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """The tensors joined row-wise (1-D tensors become rows).

    PyTorch
    -------
    ``torch.vstack``
    """
    return ops.cat([atleast_2d(t) for t in tensors], 0)


row_stack = vstack


def vander(x: Tensor, N=None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a 1-D tensor: columns x**(N-1), ..., x**0 (x**0 first
    with ``increasing``), built by running products as torch's (so its gradient).

    PyTorch
    -------
    ``torch.vander``
    """
    if type(x) is not Tensor or x.ndim != 1:
        raise ShapeError(f"vander: x must be a one-dimensional tensor, got "
                         f"{x.ndim if type(x) is Tensor else type(x).__name__} dims")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise EmberValueError(f"vander: N must be non-negative, got {n}")
    dtype = D.promote_types(x._dtype, D.int64)
    ones = ops.ones(x.shape[0], min(n, 1), dtype=dtype, device=x.device)
    if n > 1:
        powers = ops.cumprod(x.to(dtype).unsqueeze(-1).expand(x.shape[0], n - 1), 1)
        out = ops.cat([ones, powers], 1)
    else:
        out = ones
    return out if increasing else out.flip(1)


def column_stack(tensors) -> Tensor:
    """1-D and 2-D tensors joined as the columns of one matrix.

    PyTorch
    -------
    ``torch.column_stack``
    """
    return ops.cat([t.reshape(-1, 1) if t.ndim < 2 else t for t in tensors], 1)


def dstack(tensors) -> Tensor:
    """The tensors joined along the third dim (made 3-D first).

    PyTorch
    -------
    ``torch.dstack``
    """
    out = []
    for t in tensors:
        t = atleast_2d(t)
        out.append(t.unsqueeze(-1) if t.ndim == 2 else t)
    return ops.cat(out, 2)


def block_diag(*tensors) -> Tensor:
    """A block-diagonal matrix with the given tensors on its diagonal.

    PyTorch
    -------
    ``torch.block_diag``
    """
    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    cols = builtins.sum(m._data.shape[1] for m in mats)
    rows, start = [], 0
    for m in mats:
        w = m._data.shape[1]
        rows.append(ops.pad(m, (start, cols - start - w)))
        start += w
    return ops.cat(rows, 0)


def meshgrid(*tensors, indexing: str = "ij") -> tuple:
    """Coordinate grids from 1-D tensors; ``indexing`` is ``'ij'`` (matrix) or ``'xy'``
    (Cartesian).

    PyTorch
    -------
    ``torch.meshgrid``
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise EmberValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    tensors = [atleast_1d(t) for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = tuple(t.numel() for t in tensors)
    grids = [t.reshape((1,) * i + (-1,) + (1,) * (len(shape) - i - 1)).expand(shape)
             for i, t in enumerate(tensors)]
    if swap:            # torch's: the grids of the swapped inputs, the first two swapped back
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors) -> Tensor:
    """The Cartesian product of 1-D tensors, one row per combination.

    PyTorch
    -------
    ``torch.cartesian_prod``
    """
    grids = meshgrid(*tensors, indexing="ij")
    out = ops.stack([g.reshape(-1) for g in grids], 1)
    return out.reshape(-1) if len(tensors) == 1 else out


def concat(tensors, dim: int = 0) -> Tensor:
    """The tensors joined along ``dim`` (another name of :func:`cat`).

    PyTorch
    -------
    ``torch.concat``, ``torch.concatenate``
    """
    return ops.cat(tensors, dim)


concatenate = concat


def clone(input: Tensor, *, memory_format=preserve_format) -> Tensor:
    """A copy of input that keeps its place in the graph, laid out as memory_format says
    (preserve_format: input's layout where it is dense, as in PyTorch; ops/layout.py).

    PyTorch
    -------
    ``torch.clone``
    """
    _need("clone", input)
    return layout.clone(input, memory_format)


def _overload(name: str, positional, sections, indices, tensor=None):
    """The one split argument given: positionally, or by the name of torch's overload that
    takes it (sections= an int or 0-d tensor, indices= a sequence,
    tensor_indices_or_sections= a Tensor)."""
    given = [(k, v) for k, v in (("indices_or_sections", positional), ("sections", sections),
                                 ("indices", indices), ("tensor_indices_or_sections", tensor))
             if v is not None]
    if len(given) != 1:
        raise EmberTypeError(f"{name}(): expected one of sections=, indices= (or the "
                             f"positional argument), got {[k for k, _ in given] or 'none'}")
    key, value = given[0]
    if (key == "sections" and not (isinstance(value, int) or (
            type(value) is Tensor and value.ndim == 0))) or (
            key == "indices" and (isinstance(value, (int, Tensor)))) or (
            key == "tensor_indices_or_sections" and type(value) is not Tensor):
        raise EmberTypeError(f"{name}(): {key}= got {type(value).__name__}")
    return value


@numpy_names
def tensor_split(input: Tensor, indices_or_sections=None, dim: int = 0, *, sections=None,
                 indices=None, tensor_indices_or_sections=None) -> tuple:
    """Views of input along dim: `n` sections (the first len % n one longer), or the pieces
    between the given indices (which may pass the end, giving empty pieces).

    PyTorch
    -------
    ``torch.tensor_split``
    """
    _need("tensor_split", input)
    axis = norm_dim(dim, input.ndim, "tensor_split")
    length = input._data.shape[axis]
    split = _overload("tensor_split", indices_or_sections, sections, indices,
                      tensor_indices_or_sections)
    if type(split) is Tensor:
        if split.ndim > 1 or split._dtype not in _INTS:
            raise EmberTypeError(f"tensor_split: expected indices_or_sections as a 0-d or 1-d "
                                 f"integer tensor, got {split._dtype.name} of shape "
                                 f"{tuple(split.shape)}")
        split = split.item() if split.ndim == 0 else split.tolist()
    if isinstance(split, (int, np.integer)) and not isinstance(split, bool):
        sections = int(split)
        if sections <= 0:
            raise EmberValueError(f"tensor_split: number of sections must be > 0, got "
                                  f"{sections}")
        size, extra = divmod(length, sections)
        bounds = [k * size + builtins.min(k, extra) for k in range(1, sections)]
    elif isinstance(split, (list, tuple)):
        bounds = [int(b) for b in split]
    else:
        raise EmberTypeError(f"tensor_split: expected an int, a sequence of ints or an integer "
                             f"tensor, got {type(split).__name__}")
    pieces, start = [], 0
    # each piece is input[previous bound : bound], clipped: unordered bounds give empties
    for bound in bounds + [length]:
        bound = builtins.min(builtins.max(bound + length if bound < 0 else bound, 0), length)
        pieces.append(input.narrow(axis, start, builtins.max(bound - start, 0)))
        start = bound
    return tuple(pieces)


@numpy_names
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The n-th forward difference along dim, after joining prepend and append there.

    PyTorch
    -------
    ``torch.diff``
    """
    _need("diff", input)
    if input.ndim == 0:
        raise ShapeError("diff: expected at least a 1-dimensional input, got a 0-d tensor")
    if n < 0:
        raise EmberValueError(f"diff: order must be non-negative, got {n}")
    axis = norm_dim(dim, input.ndim, "diff")
    if n == 0:                  # torch: the input, prepend and append not joined
        return input.clone()
    parts = [p if type(p) is Tensor else ops.tensor(p, dtype=input._dtype,
                                                     device=input._device).expand(
        *input.shape[:axis], 1, *input.shape[axis + 1:])
             for p in (prepend, input, append) if p is not None]
    x = ops.cat(parts, axis) if len(parts) > 1 else input
    for _ in range(n):
        length = x._data.shape[axis]
        if length == 0:
            break
        later, earlier = x.narrow(axis, 1, length - 1), x.narrow(axis, 0, length - 1)
        x = later != earlier if x._dtype is D.bool_ else later - earlier
    return x


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The r-length combinations of a 1-D tensor's elements, one per row (as itertools).

    PyTorch
    -------
    ``torch.combinations``
    """
    x = _tensor("combinations", input)
    if x.ndim != 1:
        raise ShapeError(f"combinations(): expected a 1-D tensor, got shape {tuple(x.shape)}")
    if not isinstance(r, int) or r < 0:
        raise EmberValueError(f"combinations(): r must be a non-negative int, got {r!r}")
    n = x.shape[0]
    make = itertools.combinations_with_replacement if with_replacement \
        else itertools.combinations
    rows = list(make(range(n), r))
    if r == 0 or not rows:
        # torch: r == 0 gives a new empty tensor; no rows, an empty selection of x (in
        # the graph when x is, as torch's stack of nothing)
        if r == 0:
            return ops.empty((0,), dtype=x._dtype, device=x._device)
        return x[:0].reshape(0, r)
    idx = ops.tensor([i for row in rows for i in row], dtype=D.int64, device=x._device)
    return x[idx].reshape(len(rows), r)


def unfold_windows(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold: every window of `size` elements `step` apart along dimension, as a
    new last dim (the windows' count replaces the dim)."""
    axis = norm_dim(dimension, x.ndim, "unfold") if x.ndim else 0
    n = x._data.shape[axis] if x.ndim else 1
    if size < 0 or size > n or step <= 0:
        raise EmberValueError(f"unfold: size {size} and step {step} do not fit dimension "
                              f"{dimension} of size {n}; expected 0 <= size <= {n}, step > 0")
    if x.ndim == 0:                  # torch: the one element, as a 1-d window
        return x.reshape(1).expand(size)
    count = (n - size) // step + 1
    index = (ops.arange(count, device=x._device).reshape(count, 1) * step
             + ops.arange(size, device=x._device).reshape(1, size))
    windows = ops.index_select(x, axis, index.reshape(-1))
    shape = x._data.shape
    windows = windows.reshape(shape[:axis] + (count, size) + shape[axis + 1:])
    return windows.movedim(axis + 1, -1)


# --- flips and splits along named axes ----------------------------------------------------

def fliplr(input: Tensor) -> Tensor:
    """input reversed along dim 1 (at least 2 dims).

    PyTorch
    -------
    ``torch.fliplr``
    """
    _need("fliplr", input)
    if input.ndim < 2:
        raise ShapeError(f"fliplr: input must be >= 2-d, got shape {tuple(input.shape)}")
    return ops.flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    """input reversed along dim 0 (at least 1 dim).

    PyTorch
    -------
    ``torch.flipud``
    """
    _need("flipud", input)
    if input.ndim < 1:
        raise ShapeError("flipud: input must be >= 1-d, got a 0-d tensor")
    return ops.flip(input, (0,))


def _split_along(name, input, indices_or_sections, dim, min_ndim):
    _need(name, input)
    if input.ndim < min_ndim:
        raise ShapeError(f"torch.{name} requires a tensor with at least {min_ndim} "
                         f"dimension, but got a tensor with {input.ndim} dimensions")
    if isinstance(indices_or_sections, int) and not isinstance(indices_or_sections, bool):
        n = input._data.shape[dim]
        if indices_or_sections == 0 or n % indices_or_sections:
            raise EmberValueError(f"torch.{name} attempted to split along dimension {dim}, "
                                  f"but the size of the dimension {n} is not divisible by "
                                  f"the split_size {indices_or_sections}!")
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input: Tensor, indices_or_sections=None, *, sections=None, indices=None) -> tuple:
    """Split along dim 1 (dim 0 of a 1-d tensor): sections must divide it evenly.

    PyTorch
    -------
    ``torch.hsplit``
    """
    _need("hsplit", input)
    return _split_along("hsplit", input,
                        _overload("hsplit", indices_or_sections, sections, indices),
                        1 if input.ndim > 1 else 0, 1)


def vsplit(input: Tensor, indices_or_sections=None, *, sections=None, indices=None) -> tuple:
    """``input`` split along dim 0 (rows) into sections or at indices (at least 2-D).

    PyTorch
    -------
    ``torch.vsplit``
    """
    return _split_along("vsplit", input,
                        _overload("vsplit", indices_or_sections, sections, indices), 0, 2)


def dsplit(input: Tensor, indices_or_sections=None, *, sections=None, indices=None) -> tuple:
    """``input`` split along dim 2 (depth) into sections or at indices (at least 3-D).

    PyTorch
    -------
    ``torch.dsplit``
    """
    return _split_along("dsplit", input,
                        _overload("dsplit", indices_or_sections, sections, indices), 2, 3)


@numpy_names
def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Pieces of the given sizes along dim (they must add up to its size).

    PyTorch
    -------
    ``torch.split_with_sizes``
    """
    _need("split_with_sizes", input)
    return tuple(ops.split(input, [int(s) for s in split_sizes], dim))


@numpy_names
def unsafe_split(input: Tensor, split_size, dim: int = 0) -> tuple:
    """split (torch's unsafe_ form skips a view check ember has no need of).

    PyTorch
    -------
    ``torch.unsafe_split``
    """
    return tuple(ops.split(input, split_size, dim))


@numpy_names
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """chunk() (ember's chunks are never aliased in an unsafe way: the same result).

    PyTorch
    -------
    ``torch.unsafe_chunk``
    """
    return tuple(ops.chunk(input, chunks, dim))


# --- scatters into a view: a copy of input with the view's elements replaced by src -------

def _scatter_into_view(name, input, src, view):
    """input with the elements `view` picks (a function of a tensor) replaced by src: the
    picked positions are the view of input's flat positions; the gradient reaches both
    (input's is zero where src was written)."""
    _need(name, input)
    _need(name, src)
    positions = view(ops.arange(input.numel(), device=input._device).reshape(input.shape))
    if tuple(positions.shape) != tuple(src.shape):
        raise ShapeError(f"{name}: expected src to have a size equal to the slice of self. "
                         f"src size = {list(src.shape)}, slice size = "
                         f"{list(positions.shape)}")
    flat = input.reshape(-1).scatter(0, positions.reshape(-1),
                                     src.to(input._dtype).reshape(-1))
    return flat.reshape(input.shape)


@numpy_names
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None,
                  step: int = 1) -> Tensor:
    """A copy of input with input[..., start:end:step, ...] (along dim) set to src.

    PyTorch
    -------
    ``torch.slice_scatter``
    """
    _need("slice_scatter", input)
    axis = norm_dim(dim, input.ndim, "slice_scatter")
    n = input._data.shape[axis]
    lo, hi, st = slice(start, end, step).indices(n)
    if step <= 0:
        raise EmberValueError(f"slice_scatter: slice step must be positive, got {step}")
    index = tuple(slice(lo, builtins.max(hi, lo), st) if d == axis else slice(0, s, 1)
                  for d, s in enumerate(input._data.shape))
    if src._data.shape != ops.movement.slice_(input, index)._data.shape:
        raise ShapeError(f"slice_scatter: expected src to have a size equal to the slice of "
                         f"self. src size = {list(src.shape)}, slice size = "
                         f"{list(ops.movement.slice_(input, index).shape)}")
    return ops.movement.slice_scatter(input, src.to(input._dtype), index)


@numpy_names
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of input with input.select(dim, index) set to src.

    PyTorch
    -------
    ``torch.select_scatter``
    """
    return _scatter_into_view("select_scatter", input, src,
                              lambda x: select(x, dim, index))


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of input with input.diagonal(offset, dim1, dim2) set to src.

    PyTorch
    -------
    ``torch.diagonal_scatter``
    """
    return _scatter_into_view("diagonal_scatter", input, src,
                              lambda x: x.diagonal(offset, dim1, dim2))


def _strided_positions(name, input, size, stride, storage_offset):
    _need(name, input)
    if not input.is_contiguous():
        raise UnsupportedError(f"{name}: ember reads the positions over the tensor's "
                               "elements in row-major order, which is its memory only for a "
                               "contiguous tensor; call .contiguous() first")
    size, stride = tuple(int(v) for v in size), tuple(int(v) for v in stride)
    if len(size) != len(stride):
        raise ShapeError(f"{name}: mismatch in length of strides and shape ({len(stride)} "
                         f"strides for {len(size)} sizes)")
    if builtins.any(v < 0 for v in size + stride):
        raise EmberValueError(f"{name}: sizes and strides must be non-negative, got size "
                              f"{size}, stride {stride}")
    offset = 0 if storage_offset is None else int(storage_offset)
    pos = ops.full(size, offset, dtype=D.int64, device=input._device)
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        pos = pos + ops.arange(n, device=input._device).reshape(shape) * st
    last = offset + builtins.sum((n - 1) * st for n, st in zip(size, stride)) if \
        builtins.all(n > 0 for n in size) else offset - 1
    if last >= input.numel() or offset < 0:
        raise EmberValueError(f"{name}: size {list(size)}, stride {list(stride)} and offset "
                              f"{offset} reach element {last}, out of bounds for a tensor of "
                              f"{input.numel()} elements")
    return pos


def as_strided(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    """The elements at offset + sum(i_k * stride_k) of a contiguous input's memory, in the
    given size (a copy in ember: its tensors share no storage by strides).

    PyTorch
    -------
    ``torch.as_strided``
    """
    pos = _strided_positions("as_strided", input, size, stride, storage_offset)
    return ops.take(input, pos)


def as_strided_copy(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    """as_strided()'s result in memory of its own.

    PyTorch
    -------
    ``torch.as_strided_copy``
    """
    return as_strided(input, size, stride, storage_offset)


def as_strided_scatter(input: Tensor, src: Tensor, size, stride,
                       storage_offset=None) -> Tensor:
    """A copy of input with as_strided(input, size, stride, storage_offset) set to src.

    PyTorch
    -------
    ``torch.as_strided_scatter``
    """
    pos = _strided_positions("as_strided_scatter", input, size, stride, storage_offset)
    _need("as_strided_scatter", src)
    if tuple(src.shape) != tuple(pos.shape):
        raise ShapeError(f"as_strided_scatter: expected src of shape {list(pos.shape)}, "
                         f"got {list(src.shape)}")
    flat = input.reshape(-1).scatter(0, pos.reshape(-1), src.to(input._dtype).reshape(-1))
    return flat.reshape(input.shape)


# --- torch's *_copy functions: the view op's result in memory of its own -----------------

def expand_copy(input: Tensor, size, *, implicit: bool = False) -> Tensor:
    """expand()'s result in memory of its own.

    PyTorch
    -------
    ``torch.expand_copy``
    """
    del implicit                  # torch's tracing flag: no effect on the result
    return ops.expand(input, *size if isinstance(size, (list, tuple)) else (size,)).clone()


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """diagonal()'s result in memory of its own.

    PyTorch
    -------
    ``torch.diagonal_copy``
    """
    return input.diagonal(offset, dim1, dim2).clone()


def alias_copy(input: Tensor) -> Tensor:
    """A copy of ``input`` (torch.alias's result in memory of its own).

    PyTorch
    -------
    ``torch.alias_copy``
    """
    return clone(input)


@numpy_names
def narrow_copy(input: Tensor, dim: int, start, length: int) -> Tensor:
    """narrow()'s result in memory of its own.

    PyTorch
    -------
    ``torch.narrow_copy``
    """
    return narrow(input, dim, start, length).clone()


def view_copy(input: Tensor, size) -> Tensor:
    """view()'s result in memory of its own.

    PyTorch
    -------
    ``torch.view_copy``
    """
    # torch's view_copy takes any layout (a reshape into new memory), unlike view
    return ops.reshape(input, size).clone()


def permute_copy(input: Tensor, dims) -> Tensor:
    """permute()'s result in memory of its own.

    PyTorch
    -------
    ``torch.permute_copy``
    """
    return ops.permute(input, dims).clone()


@numpy_names
def split_with_sizes_copy(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """split_with_sizes()'s pieces, each in memory of its own.

    PyTorch
    -------
    ``torch.split_with_sizes_copy``
    """
    return tuple(p.clone() for p in split_with_sizes(input, split_sizes, dim))


@numpy_names
def unbind_copy(input: Tensor, dim: int = 0) -> tuple:
    """unbind()'s pieces, each in memory of its own.

    PyTorch
    -------
    ``torch.unbind_copy``
    """
    return tuple(p.clone() for p in unbind(input, dim))


def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold()'s result in memory of its own.

    PyTorch
    -------
    ``torch.unfold_copy``
    """
    return unfold_windows(input, dimension, size, step).clone()


@numpy_names
def squeeze_copy(input: Tensor, dim=None) -> Tensor:
    """squeeze()'s result in memory of its own.

    PyTorch
    -------
    ``torch.squeeze_copy``
    """
    return ops.squeeze(input, dim).clone()


@numpy_names
def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:
    """unsqueeze()'s result in memory of its own.

    PyTorch
    -------
    ``torch.unsqueeze_copy``
    """
    return ops.unsqueeze(input, dim).clone()


def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """transpose()'s result in memory of its own.

    PyTorch
    -------
    ``torch.transpose_copy``
    """
    return ops.transpose(input, dim0, dim1).clone()


def t_copy(input: Tensor) -> Tensor:
    """t()'s result in memory of its own.

    PyTorch
    -------
    ``torch.t_copy``
    """
    return t(input).clone()


def constant_pad_nd(input: Tensor, pad, value: float = 0) -> Tensor:
    """input padded with value by the (left, right) pairs of pad, from the last dim
    backwards; a negative pad crops.

    PyTorch
    -------
    ``torch.constant_pad_nd``
    """
    _need("constant_pad_nd", input)
    return ops.pad(input, pad, "constant", value)


def _gradient_along(f: Tensor, axis: int, h, edge_order: int) -> Tensor:
    """numpy.gradient's estimate along one axis: central differences inside, one-sided ones
    of edge_order at the ends; h a number (uniform spacing) or the 1-D coordinates."""
    n = f._data.shape[axis]

    def at(start, stop):
        return f.narrow(axis, start, stop - start)
    if not isinstance(h, Tensor):
        inner = (at(2, n) - at(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first, last = (at(1, 2) - at(0, 1)) / h, (at(n - 1, n) - at(n - 2, n - 1)) / h
        else:
            first = (-1.5 * at(0, 1) + 2 * at(1, 2) - 0.5 * at(2, 3)) / h
            last = (0.5 * at(n - 3, n - 2) - 2 * at(n - 2, n - 1) + 1.5 * at(n - 1, n)) / h
        return ops.cat([first, inner, last], axis)
    shape = [1] * f.ndim
    shape[axis] = -1

    def along(v):
        return v.reshape(shape)
    dx = h[1:] - h[:-1]
    dx1, dx2 = dx[:-1], dx[1:]
    inner = (along(-dx2 / (dx1 * (dx1 + dx2))) * at(0, n - 2) +
             along((dx2 - dx1) / (dx1 * dx2)) * at(1, n - 1) +
             along(dx1 / (dx2 * (dx1 + dx2))) * at(2, n))
    if edge_order == 1:
        first = (at(1, 2) - at(0, 1)) / dx[0]
        last = (at(n - 1, n) - at(n - 2, n - 1)) / dx[-1]
    else:
        a, b = dx[0], dx[1]
        first = (-(2 * a + b) / (a * (a + b)) * at(0, 1) + (a + b) / (a * b) * at(1, 2)
                 - a / (b * (a + b)) * at(2, 3))
        a, b = dx[-2], dx[-1]
        last = (b / (a * (a + b)) * at(n - 3, n - 2) - (a + b) / (a * b) * at(n - 2, n - 1)
                + (2 * b + a) / (b * (a + b)) * at(n - 1, n))
    return ops.cat([first, inner, last], axis)


@numpy_names
def gradient(input: Tensor, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """The derivative of input estimated along each dim (all by default): central
    differences inside, one-sided differences of edge_order (1 or 2) at the ends.  spacing
    is one number for every dim, one number per dim, or one 1-D tensor of coordinates per
    dim.  One tensor per dim, as numpy.gradient.

    PyTorch
    -------
    ``torch.gradient``
    """
    _need("gradient", input)
    if edge_order not in (1, 2):
        raise EmberValueError(f"gradient: only edge_order=1 and edge_order=2 are supported, "
                              f"got {edge_order}")
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [norm_dim(d, input.ndim, "gradient") for d in
                (dim if isinstance(dim, (tuple, list)) else (dim,))]
        if len(set(dims)) != len(dims):
            raise EmberValueError(f"gradient: dim {dims} names a dim more than once; pass "
                                  f"each dim once")
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (tuple, list)):
        if len(spacing) != len(dims):
            raise EmberValueError(
                f"gradient: expected spacing to be unspecified, a scalar, or one value or "
                f"tensor per dim, but got {len(spacing)} spacings for {len(dims)} dims "
                f"{dims}")
        else:
            steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    out = []
    for axis, h in zip(dims, steps):
        if input._data.shape[axis] < edge_order + 1:
            raise EmberValueError(
                f"gradient: expected each dim to have at least edge_order + 1 = "
                f"{edge_order + 1} elements, got {input._data.shape[axis]} in dim {axis}")
        if isinstance(h, Tensor):
            if h._device != input._device:
                raise DeviceMismatchError(
                    f"gradient: expected the spacing tensors on the input's device "
                    f"{input._device}, got one on {h._device}; move it with .to(...)")
            if h.ndim != 1 or h.shape[0] != input._data.shape[axis]:
                raise ShapeError(f"gradient: the coordinates of dim {axis} must be 1-D of "
                                 f"length {input._data.shape[axis]}, got shape "
                                 f"{tuple(h.shape)}")
        out.append(_gradient_along(input, axis, h, edge_order))
    return tuple(out)
