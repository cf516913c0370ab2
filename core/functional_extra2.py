"""More of PyTorch's tensor functions as ember composites: splitting, differences, scans of
extremes, integer bit operations, index and mask writes.

Composites only: each gets its gradient and every backend from the ops it is made of.
"""
from __future__ import annotations

import builtins

import numpy as np

from . import dtypes as D
from . import ops
from .errors import EmberIndexError, EmberTypeError, EmberValueError, ShapeError
from .ops._util import broadcast_shapes, norm_dim
from .tensor import Tensor

__all__ = ["clone", "tensor_split", "diff", "heaviside", "tril_indices", "triu_indices",
           "round", "cummax", "cummin", "aminmax", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "index_put",
           "masked_scatter"]

_INTS = (D.uint8, D.int8, D.int16, D.int32, D.int64)


def _need(name, x):
    if type(x) is not Tensor:
        raise EmberTypeError(f"{name}(): expected a Tensor, got {type(x).__name__}")


class _Fields(tuple):
    """A two-field result like torch.return_types (indexable, unpackable, named)."""

    __slots__ = ()
    _names = ("values", "indices")

    def __getattr__(self, name):
        if name in self._names:
            return self[self._names.index(name)]
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={v!r}" for n, v in zip(self._names, self))
        return f"ember.return_types.{type(self).__name__}({fields})"


def _result_type(name, names=("values", "indices")):
    return type(name, (_Fields,), {"__slots__": (), "_names": names})


cummax_result = _result_type("cummax")
cummin_result = _result_type("cummin")
aminmax_result = _result_type("aminmax", ("min", "max"))


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy of input that keeps its place in the graph (memory_format is accepted: ember
    tensors have one layout)."""
    _need("clone", input)
    return input.clone()


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    """Views of input along dim: `n` sections (the first len % n one longer), or the pieces
    between the given indices (which may pass the end, giving empty pieces)."""
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
    """The n-th forward difference along dim, after joining prepend and append there."""
    _need("diff", input)
    if input.ndim == 0:
        raise ShapeError("diff: expected at least a 1-dimensional input, got a 0-d tensor")
    if n < 0:
        raise EmberValueError(f"diff: order must be non-negative, got {n}")
    axis = norm_dim(dim, input.ndim, "diff")
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


def heaviside(input: Tensor, values) -> Tensor:
    """0 where input < 0, values where input == 0, 1 where input > 0."""
    _need("heaviside", input)
    dtype = D.result_type(input, values)
    step = ops.where(input > 0, 1, 0).to(dtype)
    if type(values) is not Tensor:
        values = ops.tensor(values, dtype=dtype, device=input._device)
    return ops.where(input == 0, values.to(dtype), step)


def _triangle_indices(name, row, col, offset, dtype, device, lower: bool) -> Tensor:
    if row < 0 or col < 0:
        raise EmberValueError(f"{name}: row and col must be non-negative, got {row}, {col}")
    dtype = D.get_dtype(dtype) if dtype is not None else D.int64
    if dtype not in (D.int32, D.int64):
        raise EmberTypeError(f"{name}: expected dtype int32 or int64, got {dtype.name}")
    rows = ops.arange(row, dtype=D.int64, device=device).reshape(row, 1).expand(row, col)
    cols = ops.arange(col, dtype=D.int64, device=device).reshape(1, col).expand(row, col)
    keep = (cols - rows <= offset) if lower else (cols - rows >= offset)
    # boolean selection is row-major, the order PyTorch lists the coordinates in
    return ops.stack([rows[keep], cols[keep]]).to(dtype)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The (2, N) coordinates of the lower triangle of a row x col matrix."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, device, True)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The (2, N) coordinates of the upper triangle of a row x col matrix."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, device, False)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Nearest value with `decimals` decimal digits (halves to even), as PyTorch scales:
    x * 10**d rounded, then divided back (negative d rounds to tens, hundreds, ...)."""
    _need("round", input)
    if decimals == 0 or input._dtype.category != D.FLOAT:
        return ops.round(input)
    scale = 10.0 ** builtins.abs(int(decimals))
    if decimals > 0:
        return ops.round(input * scale) / scale
    return ops.round(input / scale) * scale


def _cumulative_extreme(name, input: Tensor, dim: int, larger: bool, result):
    _need(name, input)
    axis = norm_dim(dim, input.ndim, name) if input.ndim else 0
    x = input.detach().reshape(1) if input.ndim == 0 else input.detach()
    length = x._data.shape[axis]
    floating = x._dtype.category == D.FLOAT
    index_shape = [1] * x.ndim
    index_shape[axis] = length
    index = ops.arange(length, dtype=D.int64, device=x._device).reshape(index_shape)
    index = index.expand(*x.shape).contiguous()
    values = x
    step = 1
    # a log-step scan: after the pass with `step`, position i holds the extreme of the last
    # 2 * step elements up to i; a later element wins ties (PyTorch's >=), and nan wins
    while step < length:
        earlier, current = values.narrow(axis, 0, length - step), values.narrow(
            axis, step, length - step)
        beats = earlier > current if larger else earlier < current
        if floating:
            beats = beats.logical_or(earlier.isnan().logical_and(current.isnan().logical_not()))
        kept = [values.narrow(axis, 0, step)]
        values = ops.cat(kept + [ops.where(beats, earlier, current)], axis)
        index = ops.cat([index.narrow(axis, 0, step),
                         ops.where(beats, index.narrow(axis, 0, length - step),
                                   index.narrow(axis, step, length - step))], axis)
        step *= 2
    if input.ndim == 0:
        index = index.reshape(())
        return result((input.clone(), index))
    # gather from the input itself so the gradient reaches the selected elements
    return result((ops.gather(input, axis, index), index))


def cummax(input: Tensor, dim: int):
    """(values, indices): the running maximum along dim and where it was found."""
    return _cumulative_extreme("cummax", input, dim, True, cummax_result)


def cummin(input: Tensor, dim: int):
    """(values, indices): the running minimum along dim and where it was found."""
    return _cumulative_extreme("cummin", input, dim, False, cummin_result)


def aminmax(input: Tensor, *, dim=None, keepdim: bool = False):
    """(min, max) over dim (every element by default); ties share the gradient as amin and
    amax do."""
    _need("aminmax", input)
    if dim is None:
        return aminmax_result((ops.amin(input).reshape(()) if not keepdim else
                               ops.amin(input, tuple(range(input.ndim)), keepdim=True),
                               ops.amax(input).reshape(()) if not keepdim else
                               ops.amax(input, tuple(range(input.ndim)), keepdim=True)))
    return aminmax_result((ops.amin(input, dim, keepdim=keepdim),
                           ops.amax(input, dim, keepdim=keepdim)))


# the bit operations are the array API's (core/array_api/_bitwise.py: integer arithmetic,
# so every device has them), imported on first use to keep `import ember` light
def _integers(name, *operands):
    for x in operands:
        dtype = x._dtype if type(x) is Tensor else None
        if dtype is not None and dtype is not D.bool_ and dtype not in _INTS or (
                dtype is None and not isinstance(x, (int, np.integer))):
            got = dtype.name if dtype is not None else type(x).__name__
            raise EmberTypeError(f"{name}: expected integer or bool tensors (or Python ints), "
                                 f"got {got}")
    from .array_api import _bitwise
    return _bitwise


def bitwise_and(input, other) -> Tensor:
    return _integers("bitwise_and", input, other).bitwise_and(input, other)


def bitwise_or(input, other) -> Tensor:
    return _integers("bitwise_or", input, other).bitwise_or(input, other)


def bitwise_xor(input, other) -> Tensor:
    return _integers("bitwise_xor", input, other).bitwise_xor(input, other)


def bitwise_not(input: Tensor) -> Tensor:
    return _integers("bitwise_not", input).bitwise_invert(input)


def bitwise_left_shift(input, other) -> Tensor:
    """input * 2**other, wrapping like the machine shift."""
    return _integers("bitwise_left_shift", input, other).bitwise_left_shift(input, other)


def bitwise_right_shift(input, other) -> Tensor:
    """floor(input / 2**other): the arithmetic shift, which keeps the sign."""
    return _integers("bitwise_right_shift", input, other).bitwise_right_shift(input, other)


def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """A copy of input with input[indices] = values (or += values, duplicates adding up,
    with accumulate); indices is a tuple of integer or bool tensors."""
    from .ops import index as _index
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
    by consecutive elements of source."""
    _need("masked_scatter", input)
    _need("masked_scatter", source)
    if mask._dtype is not D.bool_:
        raise EmberTypeError(f"masked_scatter: expected a bool mask, got {mask._dtype.name}")
    shape = broadcast_shapes("masked_scatter", tuple(input.shape), tuple(mask.shape))
    if shape != tuple(input.shape):
        raise ShapeError(f"masked_scatter: mask of shape {tuple(mask.shape)} does not "
                         f"broadcast to the input's shape {tuple(input.shape)}")
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
