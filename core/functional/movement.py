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
    EmberIndexError,
    EmberTypeError,
    EmberValueError,
    ShapeError,
    UnsupportedError,
)
from ..ops import layout
from ..ops._util import as_shape, norm_dim, resolve_reshape
from ..ops._util import broadcast_shapes as _broadcast
from ..tensor import Size, Tensor, preserve_format
from ._util import _INTS, _need, _tensor

__all__ = ["narrow", "select", "unbind", "unflatten", "roll", "broadcast_to", "broadcast_shapes",
           "broadcast_tensors", "tile", "repeat_interleave", "rot90", "atleast_1d", "atleast_2d",
           "ravel", "t", "swapaxes", "swapdims", "hstack", "vstack", "column_stack", "dstack",
           "block_diag", "meshgrid", "cartesian_prod", "concat", "concatenate", "clone",
           "tensor_split", "diff", "combinations", "view_as_real"]


def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    """The `length` elements from `start` along dim (a view where the backend can).

    PyTorch
    -------
    ``torch.narrow``
    """
    _need("narrow", input)
    axis = norm_dim(dim, input.ndim, "narrow")
    n = input._data.shape[axis]
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


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """Every slice along dim, that dim removed.

    PyTorch
    -------
    ``torch.unbind``
    """
    axis = norm_dim(dim, input.ndim, "unbind")
    return tuple(select(input, axis, i) for i in range(input._data.shape[axis]))


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


def tile(input: Tensor, dims) -> Tensor:
    """``input`` repeated ``dims`` times along each dim.

    PyTorch
    -------
    ``torch.tile``
    """
    dims = as_shape((tuple(dims),), "tile")
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def _check_output_size(output_size, total: int) -> None:
    """torch takes output_size as the promised length (to skip a device sync): a wrong one
    is an error there, and here."""
    if output_size is not None and int(output_size) != total:
        raise ShapeError(f"repeat_interleave: Invalid output_size, expected {total} but got "
                         f"{output_size}")


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
    a, b = (norm_dim(d, input.ndim, "rot90") for d in dims)
    k %= 4
    if k == 1:
        return input.flip(b).transpose(a, b)
    if k == 2:
        return input.flip((a, b))
    if k == 3:
        return input.transpose(a, b).flip(b)
    return input


def atleast_1d(input: Tensor) -> Tensor:
    """``input`` with at least one dim (a 0-d tensor becomes shape ``(1,)``).

    PyTorch
    -------
    ``torch.atleast_1d``
    """
    return input.reshape(1) if input.ndim == 0 else input


def atleast_2d(input: Tensor) -> Tensor:
    """``input`` with at least two dims (new dims lead).

    PyTorch
    -------
    ``torch.atleast_2d``
    """
    return input.reshape(1, -1) if input.ndim < 2 else input


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
    return input.t()


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``input`` with dims ``axis0`` and ``axis1`` swapped (as :func:`transpose`).

    PyTorch
    -------
    ``torch.swapaxes``, ``torch.swapdims``
    """
    return ops.transpose(input, axis0, axis1)


swapdims = swapaxes


def hstack(tensors) -> Tensor:
    """The tensors joined column-wise (along dim 1; along dim 0 for 1-D tensors).

    PyTorch
    -------
    ``torch.hstack``
    """
    tensors = [atleast_1d(t) for t in tensors]
    return ops.cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """The tensors joined row-wise (1-D tensors become rows).

    PyTorch
    -------
    ``torch.vstack``
    """
    return ops.cat([atleast_2d(t) for t in tensors], 0)


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


def view_as_real(input: Tensor) -> Tensor:
    """PyTorch's view of a complex tensor as (..., 2) reals.  ember has no complex dtypes, so
    no ember tensor is complex: this raises what PyTorch raises for a real one.

    PyTorch
    -------
    ``torch.view_as_real``
    """
    _need("view_as_real", input)
    raise UnsupportedError(f"view_as_real is only supported for complex tensors, got "
                         f"{input._dtype.name} (as PyTorch); ember has no complex dtypes: keep "
                         "the real and imaginary parts as two real tensors (or ember.stack them "
                         "along a last dim of 2)")


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Views of input along dim: `n` sections (the first len % n one longer), or the pieces
    between the given indices (which may pass the end, giving empty pieces).

    PyTorch
    -------
    ``torch.tensor_split``
    """
    _need("tensor_split", input)
    axis = norm_dim(dim, input.ndim, "tensor_split")
    length = input._data.shape[axis]
    split = indices_or_sections
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
        return ops.empty((0,) if r == 0 else (0, r), dtype=x._dtype, device=x._device)
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
    count = (n - size) // step + 1
    index = (ops.arange(count, device=x._device).reshape(count, 1) * step
             + ops.arange(size, device=x._device).reshape(1, size))
    windows = ops.index_select(x, axis, index.reshape(-1))
    shape = x._data.shape
    windows = windows.reshape(shape[:axis] + (count, size) + shape[axis + 1:])
    return windows.movedim(axis + 1, -1)
