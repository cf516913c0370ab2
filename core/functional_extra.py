"""PyTorch's tensor functions written with ember ops: matrix products, triangles and
diagonals, rolling, narrowing, repeating, comparisons within tolerance, scatter.

Composites only: each gets its gradient and every backend from the ops it is made of.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from . import dtypes as D
from . import ops
from .errors import EmberIndexError, EmberTypeError, EmberValueError, ShapeError
from .ops._util import as_shape, norm_dim, resolve_reshape
from .ops._util import broadcast_shapes as _broadcast
from .tensor import Size, Tensor

__all__ = ["mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv",
           "baddbmm", "addbmm", "tril", "triu", "diag", "diagonal", "diag_embed", "diagflat",
           "trace", "roll", "narrow", "select", "unbind", "unflatten", "broadcast_to",
           "broadcast_tensors", "broadcast_shapes", "repeat_interleave", "tile", "cross",
           "isclose", "allclose", "equal", "scatter", "scatter_reduce", "index_fill",
           "masked_select", "count_nonzero", "nan_to_num", "clamp_min", "clamp_max",
           "swapaxes", "swapdims", "numel", "is_floating_point", "atleast_1d", "atleast_2d",
           "rot90", "block_diag", "cartesian_prod", "meshgrid", "column_stack", "hstack",
           "vstack", "dstack", "t", "ravel", "lerp", "addcmul", "addcdiv", "concat",
           "concatenate", "take_along_dim", "logspace", "fmax", "fmin", "std_mean", "dist",
           "cdist", "tensordot", "kron", "bincount", "searchsorted", "bucketize", "dropout"]
# elementwise functions written with the primitives (methods and in-place forms too)
MATH = ("log2", "log10", "exp2", "sinh", "cosh", "trunc", "fix", "frac", "fmod", "logaddexp",
        "hypot", "erfc", "logit", "xlogy", "deg2rad", "rad2deg", "sgn", "positive", "float_power")
__all__ += MATH


def _need(name, x, ndim=None):
    if type(x) is not Tensor:
        raise EmberTypeError(f"{name}(): expected a Tensor, got {type(x).__name__}")
    if ndim is not None and x.ndim != ndim:
        raise ShapeError(f"{name}(): expected a {ndim}-D tensor, got shape {tuple(x.shape)}")


# --- products --------------------------------------------------------------------------

def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """input @ mat2 for two matrices."""
    _need("mm", input, 2)
    _need("mm", mat2, 2)
    return ops.matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched input @ mat2 for (b, n, m) and (b, m, p) tensors (no broadcasting)."""
    _need("bmm", input, 3)
    _need("bmm", mat2, 3)
    if input._data.shape[0] != mat2._data.shape[0]:
        raise ShapeError(f"bmm(): batch sizes differ: {tuple(input.shape)} and "
                         f"{tuple(mat2.shape)}; expected equal first dims")
    return ops.matmul(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix times vector."""
    _need("mv", input, 2)
    _need("mv", vec, 1)
    return ops.matmul(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    """The inner product of two 1-D tensors."""
    _need("dot", input, 1)
    _need("dot", other, 1)
    return ops.matmul(input, other)


vdot = dot          # real tensors only: no conjugate to take


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sums over the last dims: shape input.shape[:-1] + other.shape[:-1]."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    k = input._data.shape[-1]
    out = ops.matmul(input.reshape(-1, k), other.reshape(-1, k).mT)
    return out.reshape(input._data.shape[:-1] + other._data.shape[:-1])


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two 1-D tensors."""
    _need("outer", input, 1)
    _need("outer", vec2, 1)
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = outer


def _scaled(input, product, beta, alpha):
    if alpha != 1:
        product = product * alpha
    if beta == 0:                      # PyTorch ignores input then (nan and inf included)
        return product.expand(_broadcast("addmm", input._data.shape,
                                               product._data.shape))
    return (input * beta if beta != 1 else input) + product


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2)."""
    return _scaled(input, mm(mat1, mat2), beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    return _scaled(input, mv(mat, vec), beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return _scaled(input, bmm(batch1, batch2), beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * sum_b batch1[b] @ batch2[b]."""
    return _scaled(input, bmm(batch1, batch2).sum(0), beta, alpha)


# --- triangles and diagonals ---------------------------------------------------------------

def _offsets(x: Tensor) -> Tensor:
    """cols - rows for the last two dims of x, as an int64 (n, m) tensor on x's device."""
    n, m = x._data.shape[-2:]
    rows = ops.arange(n, device=x._device).reshape(n, 1)
    cols = ops.arange(m, device=x._device).reshape(1, m)
    return cols - rows


def _zero(x: Tensor):
    return False if x._dtype is D.bool_ else 0.0 if x._dtype.category == D.FLOAT else 0


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (elements with col - row <= diagonal)."""
    _need("tril", input)
    if input.ndim < 2:
        raise ShapeError(f"tril: expected a tensor of at least 2 dims, got {tuple(input.shape)}")
    return ops.where(_offsets(input) <= diagonal, input, _zero(input))


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (elements with col - row >= diagonal)."""
    _need("triu", input)
    if input.ndim < 2:
        raise ShapeError(f"triu: expected a tensor of at least 2 dims, got {tuple(input.shape)}")
    return ops.where(_offsets(input) >= diagonal, input, _zero(input))


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of dims dim1 and dim2 (moved last), shifted by offset."""
    _need("diagonal", input)
    if input.ndim < 2:
        raise ShapeError(f"diagonal: expected a tensor of at least 2 dims, got "
                         f"{tuple(input.shape)}")
    a, b = norm_dim(dim1, input.ndim, "diagonal"), norm_dim(dim2, input.ndim, "diagonal")
    if a == b:
        raise ShapeError(f"diagonal: dim1 and dim2 must differ, got {dim1} and {dim2}")
    rest = [d for d in range(input.ndim) if d not in (a, b)]
    x = input.permute(rest + [a, b])
    n, m = x._data.shape[-2:]
    length = builtins.max(0, builtins.min(n, m - offset) if offset >= 0 else
                          builtins.min(n + offset, m))
    start = offset if offset >= 0 else -offset * m
    flat = x.reshape(x._data.shape[:-2] + (n * m,))
    index = ops.arange(start, start + length * (m + 1), m + 1, device=input._device) \
        if length else ops.zeros(0, dtype=D.int64, device=input._device)
    return ops.index_select(flat, -1, index)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Tensors whose diagonals (of dims dim1, dim2) hold input's last dim."""
    _need("diag_embed", input)
    n = input._data.shape[-1] if input.ndim else 1
    size = n + builtins.abs(offset)
    x = input.reshape(1) if input.ndim == 0 else input
    if offset >= 0:        # row i holds x[i] at column i + offset
        line = ops.pad(x, (0, offset)).unsqueeze(-1)
    else:                  # column j holds x[j] at row j - offset
        line = ops.pad(x, (0, -offset)).unsqueeze(-2)
    eye = ops.arange(size, device=x._device)
    mask = (eye.reshape(1, size) - eye.reshape(size, 1)) == offset
    out = ops.where(mask, line, _zero(x))
    nd = out.ndim
    a, b = norm_dim(dim1, nd, "diag_embed"), norm_dim(dim2, nd, "diag_embed")
    if (a, b) == (nd - 2, nd - 1):
        return out
    if a == b:
        raise ShapeError(f"diag_embed: dim1 and dim2 must differ, got {dim1} and {dim2}")
    dims = list(range(nd - 2))
    for d, src in sorted([(a, nd - 2), (b, nd - 1)]):
        dims.insert(d, src)
    return out.permute(_inverse_order(dims))


def _inverse_order(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return inv


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D input on the diagonal of a square matrix, or a matrix's diagonal as 1-D."""
    _need("diag", input)
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return globals()["diagonal"](input, diagonal)
    raise ShapeError(f"diag(): expected a 1-D or 2-D tensor, got shape {tuple(input.shape)}")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    return diag_embed(input.reshape(-1), offset)


def trace(input: Tensor) -> Tensor:
    """The sum of a matrix's diagonal."""
    _need("trace", input, 2)
    return diagonal(input).sum()


# --- movement built on slices ----------------------------------------------------------

def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    """The `length` elements from `start` along dim (a view where the backend can)."""
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
    """The slice at `index` along dim, with that dim removed."""
    axis = norm_dim(dim, input.ndim, "select")
    n = input._data.shape[axis]
    i = int(index)
    if not -n <= i < n:
        raise EmberIndexError(f"select: index {i} is out of range for dimension {dim} of "
                              f"size {n}")
    return narrow(input, axis, i % n, 1).squeeze(axis)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """Every slice along dim, that dim removed."""
    axis = norm_dim(dim, input.ndim, "unbind")
    return tuple(select(input, axis, i) for i in range(input._data.shape[axis]))


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    """Dim `dim` split into `sizes` (one of them may be -1)."""
    axis = norm_dim(dim, input.ndim, "unflatten")
    shape = input._data.shape
    sizes = resolve_reshape("unflatten", (shape[axis],), as_shape(tuple(sizes), "unflatten"))
    return input.reshape(shape[:axis] + tuple(sizes) + shape[axis + 1:])


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Elements shifted along dims, wrapping around (dims None: over the flattened tensor)."""
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
    return ops.expand(input, *as_shape((size,) if isinstance(size, int) else (tuple(size),),
                                       "broadcast_to"))


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of these shapes broadcast to."""
    return Size(_broadcast("broadcast_shapes", *[(s,) if isinstance(s, int) else tuple(s)
                                                   for s in shapes]))


def broadcast_tensors(*tensors) -> tuple:
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
    dims = as_shape((tuple(dims),), "tile")
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def repeat_interleave(input: Tensor, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Each element repeated `repeats` times (an int, or one count per element of dim);
    repeat_interleave(counts) alone repeats each index i counts[i] times."""
    if repeats is None:                         # repeat_interleave(repeats_tensor)
        counts = input
        return repeat_interleave(ops.arange(counts.numel(), device=counts._device), counts, 0)
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
        out = input.unsqueeze(axis + 1).expand(shape[:axis + 1] + (repeats,) + shape[axis + 1:])
        return out.reshape(shape[:axis] + (n * repeats,) + shape[axis + 1:])
    counts = repeats.detach()._host() if type(repeats) is Tensor else np.asarray(repeats)
    if counts.ndim != 1 or counts.shape[0] != n:
        raise ShapeError(f"repeat_interleave: repeats must have the same size as input along "
                         f"dim {dim} ({n}), got shape {tuple(counts.shape)}")
    if (counts < 0).any():
        raise EmberValueError("repeat_interleave: repeats can not be negative")
    # the output's size depends on the counts: read on the host, as PyTorch syncs too
    index = ops.tensor(np.repeat(np.arange(n), counts.astype(np.int64)), dtype=D.int64,
                       device=input._device)
    return ops.index_select(input, axis, index)


def cross(input: Tensor, other: Tensor, dim=None) -> Tensor:
    """The 3-D cross product along dim (default: the first dim of size 3)."""
    shape = _broadcast("cross", input._data.shape, other._data.shape)
    if dim is None:
        dims = [d for d, n in enumerate(shape) if n == 3]
        if not dims:
            raise ShapeError(f"cross: no dimension of size 3 in shape {shape}")
        dim = dims[0]
    axis = norm_dim(dim, len(shape), "cross")
    if shape[axis] != 3:
        raise ShapeError(f"cross: dimension {dim} has size {shape[axis]}; expected 3")
    a, b = ops.expand(input, shape), ops.expand(other, shape)
    a0, a1, a2 = (select(a, axis, i) for i in range(3))
    b0, b1, b2 = (select(b, axis, i) for i in range(3))
    return ops.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis)


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
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
    return input.reshape(1) if input.ndim == 0 else input


def atleast_2d(input: Tensor) -> Tensor:
    return input.reshape(1, -1) if input.ndim < 2 else input


def ravel(input: Tensor) -> Tensor:
    return input.reshape(-1)


def t(input: Tensor) -> Tensor:
    return input.t()


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    return ops.transpose(input, axis0, axis1)


swapdims = swapaxes


def hstack(tensors) -> Tensor:
    tensors = [atleast_1d(t) for t in tensors]
    return ops.cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    return ops.cat([atleast_2d(t) for t in tensors], 0)


def column_stack(tensors) -> Tensor:
    return ops.cat([t.reshape(-1, 1) if t.ndim < 2 else t for t in tensors], 1)


def dstack(tensors) -> Tensor:
    out = []
    for t in tensors:
        t = atleast_2d(t)
        out.append(t.unsqueeze(-1) if t.ndim == 2 else t)
    return ops.cat(out, 2)


def block_diag(*tensors) -> Tensor:
    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    cols = builtins.sum(m._data.shape[1] for m in mats)
    rows, start = [], 0
    for m in mats:
        w = m._data.shape[1]
        rows.append(ops.pad(m, (start, cols - start - w)))
        start += w
    return ops.cat(rows, 0)


def meshgrid(*tensors, indexing: str = "ij") -> tuple:
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
    if swap:
        grids = [g.transpose(0, 1) for g in grids]
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors) -> Tensor:
    grids = meshgrid(*tensors, indexing="ij")
    out = ops.stack([g.reshape(-1) for g in grids], 1)
    return out.reshape(-1) if len(tensors) == 1 else out


# --- comparisons -------------------------------------------------------------------------

def isclose(input: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other| elementwise (equal infinities are close)."""
    if type(other) is not Tensor:
        other = ops.full((), other, dtype=input._dtype, device=input._device)
    if input._dtype.category != D.FLOAT and other._dtype.category != D.FLOAT:
        return input == other
    close = (input - other).abs() <= atol + rtol * other.abs()
    close = close.logical_or(input == other)
    if equal_nan:
        close = close.logical_or(input.isnan().logical_and(other.isnan()))
    return close


def allclose(input: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have one shape and equal elements."""
    if input._data.shape != other._data.shape:
        return False
    return bool((input == other).all().item())


# --- scatter and fills ------------------------------------------------------------------------

def _flat_positions(input: Tensor, index: Tensor, axis: int, name: str) -> Tensor:
    """The positions in input.reshape(-1) that index addresses along axis (torch.scatter)."""
    from .ops.index import _bounds, _check_gather
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


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None,
            reduce: str | None = None) -> Tensor:
    """A copy of input with src (a tensor or a number) written at index along dim; of
    repeated targets the last write wins.  reduce='add'/'multiply' as PyTorch's."""
    from .dispatch import run
    from .ops.index import _check_index_dtype, index_put_op
    _need("scatter", input)
    _check_index_dtype("scatter", index)
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


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                   *, include_self: bool = True) -> Tensor:
    """torch.scatter_reduce: reduce='sum', 'mean', 'prod', 'amax' or 'amin'."""
    if reduce == "sum":
        base = input if include_self else scatter(input, dim, index, 0.0 if
                                                   input._dtype.category == D.FLOAT else 0)
        return ops.scatter_add(base, dim, index, src)
    if reduce == "mean":
        ones = ops.ones(index._data.shape, dtype=input._dtype, device=input._device)
        base = input if include_self else scatter(input, dim, index, 0)
        count = ops.scatter_add(ops.ones_like(input) if include_self else
                                ops.zeros_like(input), dim, index, ones)
        total = ops.scatter_add(base, dim, index, src)
        return total / ops.where(count == 0, 1, count)
    if reduce in ("amax", "amin", "prod"):
        from .functional_math import scatter_extreme_or_prod
        return scatter_extreme_or_prod(input, dim, index, src, reduce, include_self)
    raise EmberValueError(f"scatter_reduce(): reduce must be one of 'sum', 'prod', 'mean', "
                          f"'amax', 'amin', got {reduce!r}")


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy of input with `value` at the given indices along dim."""
    from .dispatch import run
    from .ops.index import _bounds, _check_index_dtype, index_put_op
    _check_index_dtype("index_fill", index)
    axis = norm_dim(dim, input.ndim, "index_fill") if input.ndim else 0
    n = input._data.shape[axis] if input.ndim else 1
    index = _bounds("index_fill", index.reshape(-1).to(D.int64), n)
    mask = run(index_put_op, ops.zeros(n, dtype=D.bool_, device=input._device), index, True)
    if input.ndim:
        mask = mask.reshape((n,) + (1,) * (input.ndim - axis - 1))
    if type(value) is Tensor:
        value = value.to(input._dtype)
    return ops.where(mask, value, input)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of input where mask holds, as 1-D (both broadcast)."""
    shape = _broadcast("masked_select", input._data.shape, mask._data.shape)
    return ops.expand(input, shape)[ops.expand(mask, shape)]


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    return (input != 0).sum(dim)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    """nan, +inf and -inf replaced (the infinities by the dtype's extremes by default)."""
    if input._dtype.category != D.FLOAT:
        return input.clone()
    info = np.finfo(input._dtype.np) if input._dtype is not D.bfloat16 else None
    big = float(info.max) if info is not None else 3.3895313892515355e38
    out = ops.where(input.isnan(), nan, input)
    out = ops.where(out == float("inf"), big if posinf is None else posinf, out)
    return ops.where(out == float("-inf"), -big if neginf is None else neginf, out)


def clamp_min(input: Tensor, min) -> Tensor:
    from .functional import clamp
    return clamp(input, min=min)


def clamp_max(input: Tensor, max) -> Tensor:
    from .functional import clamp
    return clamp(input, max=max)


def numel(input: Tensor) -> int:
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    return input._dtype.category == D.FLOAT



# --- elementwise functions over the primitives ---------------------------------------------

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def log2(input: Tensor) -> Tensor:
    return ops.log(input) * (1.0 / _LN2)


def log10(input: Tensor) -> Tensor:
    return ops.log(input) * (1.0 / _LN10)


def exp2(input: Tensor) -> Tensor:
    return ops.exp(_float(input) * _LN2)


def sinh(input: Tensor) -> Tensor:
    e = ops.exp(_float(input))
    return (e - 1.0 / e) * 0.5


def cosh(input: Tensor) -> Tensor:
    e = ops.exp(_float(input))
    return (e + 1.0 / e) * 0.5


def trunc(input: Tensor) -> Tensor:
    """Rounded toward zero."""
    if input._dtype.category != D.FLOAT:
        return input.clone()
    return ops.where(input < 0, ops.ceil(input), ops.floor(input))


fix = trunc


def frac(input: Tensor) -> Tensor:
    return input - trunc(input)


def fmod(input: Tensor, other) -> Tensor:
    """The C remainder: input - trunc(input / other) * other (the sign of input)."""
    if input._dtype.category != D.FLOAT and not isinstance(other, float) and (
            type(other) is not Tensor or other._dtype.category != D.FLOAT):
        r = input.remainder(other)
        return ops.where((r != 0).logical_and((r < 0) != (input < 0)), r - other, r)
    return input - trunc(input / other) * other


def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    m = ops.maximum(input, other).detach()
    m = ops.where(m.isfinite(), m, 0.0)
    return ops.log(ops.exp(input - m) + ops.exp(other - m)) + m


def hypot(input: Tensor, other: Tensor) -> Tensor:
    return (input * input + other * other).sqrt()


def erfc(input: Tensor) -> Tensor:
    return 1.0 - ops.erf(input)


def logit(input: Tensor, eps=None) -> Tensor:
    x = input if eps is None else input.clamp(eps, 1.0 - eps)
    return ops.log(x / (1.0 - x))


def xlogy(input, other) -> Tensor:
    """input * log(other), 0 where input is 0 (and other is not nan)."""
    if type(input) is not Tensor:
        input = ops.full((), input, dtype=other._dtype, device=other._device)
    out = input * ops.log(other)
    return ops.where((input == 0).logical_and(~_isnan(other)), 0.0, out)


def _isnan(x):
    return x.isnan() if type(x) is Tensor else ops.full((), math.isnan(x), dtype=D.bool_)


def deg2rad(input: Tensor) -> Tensor:
    return _float(input) * (math.pi / 180.0)


def rad2deg(input: Tensor) -> Tensor:
    return _float(input) * (180.0 / math.pi)


def sgn(input: Tensor) -> Tensor:
    return ops.sign(input)


def positive(input: Tensor) -> Tensor:
    return input


def float_power(input, exponent) -> Tensor:
    base = input.to(D.float64) if type(input) is Tensor else input
    exp = exponent.to(D.float64) if type(exponent) is Tensor else exponent
    return base ** exp


def _float(x: Tensor) -> Tensor:
    return x if x._dtype.category == D.FLOAT else x.to(D.get_default_dtype())


def lerp(input: Tensor, end: Tensor, weight) -> Tensor:
    return input + (end - input) * weight


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    return input + tensor1 * tensor2 * value


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    return input + tensor1 / tensor2 * value


# --- more of torch's functions, as composites ----------------------------------------------

def concat(tensors, dim: int = 0) -> Tensor:
    return ops.cat(tensors, dim)


concatenate = concat


def take_along_dim(input: Tensor, indices: Tensor, dim=None) -> Tensor:
    if dim is None:
        return ops.take(input, indices.reshape(-1))
    shape = list(_broadcast("take_along_dim", input._data.shape, indices._data.shape))
    axis = norm_dim(dim, input.ndim, "take_along_dim")
    shape_in, shape_ix = list(shape), list(shape)
    shape_in[axis], shape_ix[axis] = input._data.shape[axis], indices._data.shape[axis]
    return ops.gather(ops.expand(input, tuple(shape_in)), axis,
                      ops.expand(indices, tuple(shape_ix)))


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    exponents = ops.linspace(start, end, steps, dtype=D.float64 if dtype is None else dtype,
                             device="cpu")
    out = (base ** exponents).to(dtype or D.get_default_dtype())
    out = out.to(device) if device is not None else out
    return out.requires_grad_(True) if requires_grad else out


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """The larger of the two, ignoring nan (nan only where both are)."""
    return ops.where(input.isnan(), other, ops.where(other.isnan(), input,
                                                     ops.maximum(input, other)))


def fmin(input: Tensor, other: Tensor) -> Tensor:
    return ops.where(input.isnan(), other, ops.where(other.isnan(), input,
                                                     ops.minimum(input, other)))


def std_mean(input: Tensor, dim=None, *, correction=1, keepdim: bool = False):
    from .functional import mean, std
    return std(input, dim, correction=correction, keepdim=keepdim), mean(input, dim, keepdim)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    from .linalg import vector_norm
    return vector_norm(input - other, p)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode=None) -> Tensor:
    """Pairwise p-norm distances between the rows of x1 (.., P, M) and x2 (.., R, M)."""
    from .linalg import vector_norm
    if p == 2:
        # |a - b|^2 = |a|^2 - 2 a.b + |b|^2, clamped at 0 against rounding
        sq = (x1 * x1).sum(-1, keepdim=True) - 2 * ops.matmul(x1, x2.mT) + \
            (x2 * x2).sum(-1).unsqueeze(-2)
        zero = sq <= 0
        return ops.where(zero, 0.0, ops.where(zero, 1.0, sq).sqrt())
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1)


def tensordot(a: Tensor, b: Tensor, dims=2) -> Tensor:
    """Contract the last `dims` dims of a with the first of b (or the listed pairs)."""
    if isinstance(dims, int):
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    da = [norm_dim(d, a.ndim, "tensordot") for d in da]
    db = [norm_dim(d, b.ndim, "tensordot") for d in db]
    ra = [d for d in range(a.ndim) if d not in da]
    rb = [d for d in range(b.ndim) if d not in db]
    k = 1
    for d in da:
        k *= a._data.shape[d]
    left = a.permute(ra + da).reshape(-1, k)
    right = b.permute(db + rb).reshape(k, -1)
    shape = tuple(a._data.shape[d] for d in ra) + tuple(b._data.shape[d] for d in rb)
    return ops.matmul(left, right).reshape(shape)


def kron(input: Tensor, other: Tensor) -> Tensor:
    nd = builtins.max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + input._data.shape)
    b = other.reshape((1,) * (nd - other.ndim) + other._data.shape)
    inter_a = tuple(v for n in a._data.shape for v in (n, 1))
    inter_b = tuple(v for n in b._data.shape for v in (1, n))
    out = a.reshape(inter_a) * b.reshape(inter_b)
    return out.reshape(tuple(m * n for m, n in zip(a._data.shape, b._data.shape)))


def bincount(input: Tensor, weights=None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs (weighted: the sum of its weights)."""
    if input.ndim != 1 or input._dtype.category != D.INT:
        raise ShapeError(f"bincount: expected a 1-D integer tensor, got {tuple(input.shape)} "
                         f"{input._dtype.name}")
    n = builtins.max(int(input.max().item()) + 1 if input.numel() else 0, minlength)
    if input.numel() and int(input.min().item()) < 0:
        raise EmberValueError("bincount: the input must be non-negative")
    src = weights if weights is not None else ops.ones(input._data.shape, dtype=D.int64,
                                                       device=input._device)
    base = ops.zeros(n, dtype=src._dtype, device=input._device)
    return ops.index_add(base, 0, input, src)


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False,
                 right: bool = False, side=None, sorter=None) -> Tensor:
    """Where each value would be inserted into the sorted last dim to keep it sorted."""
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
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def dropout(input: Tensor, p: float = 0.5, train: bool = True) -> Tensor:
    from .nn.functional import dropout as _dropout
    return _dropout(input, p, train)
