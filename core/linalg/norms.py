"""torch.linalg's norms, cross and products, written with ember ops."""
from __future__ import annotations

import math

from .. import dtypes as D
from .. import ops
from ..dispatch import run
from ..errors import DtypeNotSupportedError, EmberValueError, ShapeError
from ..ops._util import norm_dim, norm_dims
from ..ops.reduce import l2_norm_op
from ..signatures import numpy_names
from ..tensor import Tensor

__all__ = ["norm", "vector_norm", "matrix_norm", "cross", "matmul", "vecdot", "diagonal"]


_INF = math.inf


def _floats(name, x: Tensor, dtype=None) -> Tensor:
    if dtype is not None:
        x = x.to(dtype)
    if x._dtype.category < D.FLOAT:
        raise DtypeNotSupportedError(f"linalg.{name}: expected a floating point tensor, got "
                                     f"{x._dtype.name}; call .float() first")
    return x


def _dims(x: Tensor, dim):
    if isinstance(dim, (list, tuple)) and not dim:
        dim = None
    return norm_dims(dim, x.ndim, "norm")


def _l2(x: Tensor, dims, keepdim: bool) -> Tensor:
    """sqrt(sum(x * x)) whose gradient at a zero vector is 0, as PyTorch's (a plain
    sqrt there would give 0 * inf = nan): ops/reduce.py's l2_norm."""
    return run(l2_norm_op, x, axes=tuple(dims), keepdims=bool(keepdim))


_HALVES = (D.float16, D.bfloat16)


def vector_norm(input: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The ord-norm of x over dim (None: every element) as a vector: ord 2, 1, inf, -inf,
    0 (count of nonzeros) or any other number.

    PyTorch
    -------
    ``torch.linalg.vector_norm``
    """
    input = _floats("vector_norm", input, dtype)
    if input._dtype in _HALVES and ord not in (_INF, -_INF):
        # torch accumulates half-precision norms in float32 and rounds once: squares of
        # values past 256 overflow float16 (a norm of [300, 400] is not inf)
        return vector_norm(input.float(), ord, dim, keepdim).to(input._dtype)
    if input._dtype.category == D.COMPLEX:       # the norms of the magnitudes (real), as torch
        input = input.abs()
    dims = _dims(input, dim)
    if isinstance(ord, str):
        raise EmberValueError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    if ord == 2:
        return _l2(input, dims, keepdim)
    a = input.abs()
    if ord in (_INF, -_INF) and input.numel() == 0 and (
            not input.ndim or any(input._data.shape[d] == 0 for d in dims)):
        raise EmberValueError("linalg.vector_norm: the inf norms of an empty tensor are "
                              "undefined")
    if ord == _INF:
        return a.amax(dims, keepdim)
    if ord == -_INF:
        return a.amin(dims, keepdim)
    if ord == 0:
        # the count of nonzeros through sign (zero gradient): in the graph as torch's;
        # nan counts as nonzero
        s = ops.sign(a)
        return ops.where(s != s, 1.0, s).sum(dims, keepdim)
    if ord == 1:
        return a.sum(dims, keepdim)
    return _p_norm(a, ord, dims, keepdim)


def _p_norm(a: Tensor, p: float, dims, keepdim: bool) -> Tensor:
    """(sum |x|^p)^(1/p) of a = |x| with torch's subgradients where x or the norm is 0:
    a zero element contributes 0 (p > 0) or inf (p < 0) without its nan derivative, and a
    zero norm (p > 1) has gradient 0 (torch's norm_backward masks both)."""
    zero = a == 0
    term = ops.where(zero, _INF if p < 0 else 0.0, ops.where(zero, 1.0, a) ** p)
    total = term.sum(dims, keepdim)
    if p > 1:
        empty = total == 0
        return ops.where(empty, 0.0, ops.where(empty, 1.0, total) ** (1.0 / p))
    return total ** (1.0 / p)


@numpy_names
def matrix_norm(input: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *,
                dtype=None) -> Tensor:
    """'fro', or the induced 1/inf norms (max column / row sums) over two dims.

    PyTorch
    -------
    ``torch.linalg.matrix_norm``
    """
    input = _floats("matrix_norm", input, dtype)
    if not isinstance(dim, (list, tuple)) or len(dim) != 2:
        raise ShapeError(f"linalg.matrix_norm: dim must be a pair of dims, got {dim!r}")
    rows, cols = (norm_dim(d, input.ndim, "matrix_norm") for d in dim)
    if rows == cols:
        raise ShapeError(f"linalg.matrix_norm: the two dims must differ, got {dim!r}")
    if ord == "fro":
        return _l2(input.abs() if input._dtype.category == D.COMPLEX else input, (rows, cols),
                   keepdim)
    if ord in (1, -1, _INF, -_INF):
        inner, outer = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = input.abs().sum(inner, keepdim=True)
        out = sums.amax(outer, keepdim=True) if ord > 0 else sums.amin(outer, keepdim=True)
        return out if keepdim else out.squeeze((rows, cols))
    if ord in ("nuc", 2, -2):
        from .decompositions import svdvals
        rest = [d for d in range(input.ndim) if d not in (rows, cols)]
        sv = svdvals(input.permute(*rest, rows, cols))
        out = sv.sum(-1) if ord == "nuc" else sv.amax(-1) if ord == 2 else sv.amin(-1)
        return out.reshape(_kept(input.shape, (rows, cols))) if keepdim else out
    raise EmberValueError(f"linalg.matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf "
                          f"or -inf, got {ord!r}")


def _kept(shape, dims) -> tuple:
    return tuple(1 if i in dims else n for i, n in enumerate(shape))


@numpy_names
def norm(input: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """torch.linalg.norm: a vector norm over one dim (or all, ord None), a matrix norm over
    two.

    PyTorch
    -------
    ``torch.linalg.norm``
    """
    if isinstance(dim, int) or (isinstance(dim, (list, tuple)) and len(dim) == 1):
        return vector_norm(input, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if isinstance(dim, (list, tuple)) and len(dim) == 2:
        return matrix_norm(input, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is not None:
        raise ShapeError(f"linalg.norm: dim must be an int or a pair, got {dim!r}")
    if ord is None:
        return vector_norm(input.reshape(-1), 2, None, False, dtype=dtype).reshape(
            (1,) * input.ndim if keepdim else ())
    if input.ndim == 1:
        return vector_norm(input, ord, None, keepdim, dtype=dtype)
    if input.ndim == 2:
        return matrix_norm(input, ord, (-2, -1), keepdim, dtype=dtype)
    raise ShapeError(f"linalg.norm: with ord={ord!r} and no dim the input must be 1-D or "
                     f"2-D, got shape {tuple(input.shape)}")


@numpy_names
def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim``.

    PyTorch
    -------
    ``torch.linalg.cross``
    """
    from ..functional.products import cross as _cross
    if input.ndim != other.ndim:
        raise ShapeError(f"linalg.cross: inputs must have the same number of dimensions, got "
                         f"{input.ndim} and {other.ndim}")
    if input.ndim:
        dim = norm_dim(dim, input.ndim, "linalg.cross")
    if input.ndim and (input.shape[dim] != 3 or other.shape[dim] != 3):
        raise ShapeError(f"linalg.cross: inputs dimension {dim} must have length 3, got "
                         f"{input.shape[dim]} and {other.shape[dim]}")
    return _cross(input, other, dim)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """The matrix product (the same as :func:`ember.matmul`).

    PyTorch
    -------
    ``torch.linalg.matmul``
    """
    return ops.matmul(input, other)


@numpy_names
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along ``dim``, broadcasting the other dims.

    PyTorch
    -------
    ``torch.linalg.vecdot``
    """
    return (x * y).sum(dim)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal ``offset`` of each matrix over ``dim1`` and ``dim2``.

    PyTorch
    -------
    ``torch.linalg.diagonal``
    """
    from ..functional.products import diagonal as _diagonal
    return _diagonal(A, offset, dim1, dim2)
