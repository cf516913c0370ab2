"""The array API standard's `linalg` extension over ember tensors.

On the device, with ember ops: matmul, matrix_transpose, tensordot, vecdot, outer, cross,
diagonal, trace, vector_norm, matrix_norm ('fro', 1, -1, inf, -inf), matrix_power (n >= 0,
by repeated squaring).  Not on-device yet: the LAPACK decompositions (cholesky, det, eigh,
eigvalsh, inv, pinv, qr, slogdet, solve, svd, svdvals) run in NumPy on a host copy
(_host.py), and so do matrix_rank, matrix_power with n < 0 and the 2, -2 and nuclear
matrix norms, which need singular values or an inverse.  They take float32 and float64
(LAPACK has no half precision) and give no gradients.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import dtypes as D
from .. import ops
from ..errors import DtypeNotSupportedError, EmberValueError, ShapeError
from ..ops._util import norm_dim
from ..tensor import Tensor
from ._dtypes import need, promote
from ._host import to_device, to_host
from ._util import norm_axes, sum_dtype

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
    "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr",
    "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


def _matrices(name: str, x: Tensor, square: bool = False) -> Tensor:
    need(name, x, "floating-point")
    if x.ndim < 2 or (square and x._data.shape[-1] != x._data.shape[-2]):
        raise ShapeError(f"ember.array_api.linalg.{name}: expected a stack of "
                         f"{'square ' if square else ''}matrices (..., M, "
                         f"{'M' if square else 'N'}), got shape {tuple(x.shape)}")
    return x


def _lapack(name: str, fn, x: Tensor, *more, square: bool = True):
    """fn(host arrays...) -> one array or a tuple, each back on x's device (see _host.py)."""
    _matrices(name, x, square)
    if x._dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise DtypeNotSupportedError(
            f"ember.array_api.linalg.{name}: expected float32, float64, complex64 or "
            f"complex128 (LAPACK has no {x._dtype.name}), got {x._dtype.name}; cast with "
            "astype first")
    try:
        out = fn(to_host(x, f"linalg.{name}"), *(to_host(m, f"linalg.{name}") for m in more))
    except np.linalg.LinAlgError as exc:
        raise EmberValueError(f"ember.array_api.linalg.{name}: {exc} (input shape "
                              f"{tuple(x.shape)})") from None
    def back(o):
        o = np.asarray(o)
        # a complex matrix's real results (singular values, eigenvalues of a Hermitian
        # one, log |det|) stay real: its parts' dtype
        dt = x._dtype if o.dtype.kind == "c" or x._dtype.category != D.COMPLEX else \
            x._dtype.to_real()
        return to_device(o.astype(dt.np, copy=False), x)
    if isinstance(out, tuple):
        return tuple(back(o) for o in out)
    return back(out)


# -- through the host (not on-device yet) --------------------------------------------------

def cholesky(x: Tensor, /, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of symmetric positive-definite matrices (lower unless upper)."""
    return _lapack("cholesky", lambda a: np.linalg.cholesky(a, upper=upper), x)


def det(x: Tensor, /) -> Tensor:
    return _lapack("det", np.linalg.det, x)


def slogdet(x: Tensor, /) -> SlogdetResult:
    """(sign, log|det|) of square matrices."""
    return SlogdetResult(*_lapack("slogdet", lambda a: tuple(np.linalg.slogdet(a)), x))


def inv(x: Tensor, /) -> Tensor:
    return _lapack("inv", np.linalg.inv, x)


def eigh(x: Tensor, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices."""
    return EighResult(*_lapack("eigh", lambda a: tuple(np.linalg.eigh(a)), x))


def eigvalsh(x: Tensor, /) -> Tensor:
    return _lapack("eigvalsh", np.linalg.eigvalsh, x)


def qr(x: Tensor, /, *, mode: str = "reduced") -> QRResult:
    if mode not in ("reduced", "complete"):
        raise EmberValueError(f"ember.array_api.linalg.qr: mode must be 'reduced' or "
                              f"'complete', got {mode!r}")
    return QRResult(*_lapack("qr", lambda a: tuple(np.linalg.qr(a, mode=mode)), x,
                             square=False))


def svd(x: Tensor, /, *, full_matrices: bool = True) -> SVDResult:
    """U, S (descending), Vh with x = U @ diag(S) @ Vh."""
    return SVDResult(*_lapack("svd", lambda a: tuple(np.linalg.svd(
        a, full_matrices=full_matrices)), x, square=False))


def svdvals(x: Tensor, /) -> Tensor:
    return _lapack("svdvals", lambda a: np.linalg.svd(a, compute_uv=False), x, square=False)


def _default_rtol(x: Tensor) -> float:
    return max(x._data.shape[-2:]) * float(np.finfo(x._dtype.np).eps)


def pinv(x: Tensor, /, *, rtol=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse; singular values below rtol * the largest are 0."""
    _matrices("pinv", x)
    rtol = _default_rtol(x) if rtol is None else rtol
    if type(rtol) is Tensor:
        rtol = to_host(rtol, "linalg.pinv")
    return _lapack("pinv", lambda a: np.linalg.pinv(a, rcond=rtol), x, square=False)


def solve(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The solution of x1 @ result = x2 (x2 a vector when it is 1-D)."""
    x1, x2 = promote("solve", x1, x2, "floating-point")
    return _lapack("solve", np.linalg.solve, x1, x2)


def matrix_rank(x: Tensor, /, *, rtol=None) -> Tensor:
    """How many singular values exceed rtol times the largest (int64)."""
    s = svdvals(x)
    rtol = _default_rtol(x) if rtol is None else rtol
    if type(rtol) is Tensor:
        rtol = rtol.unsqueeze(-1)
    tol = ops.amax(s, -1, keepdim=True) * rtol
    return ops.sum((s > tol).to(D.int64), -1)


# -- on the device ----------------------------------------------------------------------

def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    """The matrix product (NumPy's 1-D and batching rules).

    PyTorch
    -------
    ``torch.matmul``
    """
    return ops.matmul(*promote("matmul", x1, x2, "numeric"))


def matrix_transpose(x: Tensor, /) -> Tensor:
    """``x`` with its last two axes swapped.

    PyTorch
    -------
    ``torch.Tensor.mT``
    """
    need("matrix_transpose", x)
    if x.ndim < 2:
        raise ShapeError(f"ember.array_api.matrix_transpose: expected at least 2 dims, got "
                         f"shape {tuple(x.shape)}")
    return x.mT


def tensordot(x1: Tensor, x2: Tensor, /, *, axes=2) -> Tensor:
    """Sum of products over the last `axes` axes of x1 and first of x2 (or two lists).

    PyTorch
    -------
    ``torch.tensordot``
    """
    x1, x2 = promote("tensordot", x1, x2, "numeric")
    if isinstance(axes, int):
        if axes < 0:
            raise EmberValueError(f"ember.array_api.tensordot: axes must be >= 0, got {axes}")
        a1, a2 = list(range(x1.ndim - axes, x1.ndim)), list(range(axes))
    else:
        a1 = [norm_dim(a, x1.ndim, "tensordot") for a in axes[0]]
        a2 = [norm_dim(a, x2.ndim, "tensordot") for a in axes[1]]
    if [x1._data.shape[a] for a in a1] != [x2._data.shape[a] for a in a2]:
        raise ShapeError(f"ember.array_api.tensordot: the contracted axes of {tuple(x1.shape)} "
                         f"and {tuple(x2.shape)} do not match")
    free1 = [i for i in range(x1.ndim) if i not in a1]
    free2 = [i for i in range(x2.ndim) if i not in a2]
    k = math.prod(x1._data.shape[a] for a in a1)
    s1 = [x1._data.shape[i] for i in free1]
    s2 = [x2._data.shape[i] for i in free2]
    left = ops.permute(x1, tuple(free1 + a1)).reshape(math.prod(s1), k)
    right = ops.permute(x2, tuple(a2 + free2)).reshape(k, math.prod(s2))
    return ops.matmul(left, right).reshape(tuple(s1 + s2))


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The dot product of vectors along axis (broadcasting the rest).

    PyTorch
    -------
    ``torch.linalg.vecdot``
    """
    x1, x2 = promote("vecdot", x1, x2, "numeric")
    if x1._data.shape[axis] != x2._data.shape[axis]:
        raise ShapeError(f"ember.array_api.vecdot: axis {axis} has size "
                         f"{x1._data.shape[axis]} in x1 and {x2._data.shape[axis]} in x2")
    prod = (x1.conj() if x1._dtype.category == D.COMPLEX else x1) * x2   # conj(x1) . x2
    return ops.sum(prod, norm_dim(axis, prod.ndim, "vecdot")).to(x1._dtype)


def outer(x1: Tensor, x2: Tensor, /) -> Tensor:
    x1, x2 = promote("outer", x1, x2, "numeric")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ShapeError(f"ember.array_api.linalg.outer: expected two 1-D arrays, got shapes "
                         f"{tuple(x1.shape)} and {tuple(x2.shape)}")
    return x1.reshape(-1, 1) * x2.reshape(1, -1)


def cross(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-vectors along axis."""
    x1, x2 = promote("cross", x1, x2, "numeric")
    if x1._data.shape[axis] != 3 or x2._data.shape[axis] != 3:
        raise ShapeError(f"ember.array_api.linalg.cross: axis {axis} must have size 3, got "
                         f"shapes {tuple(x1.shape)} and {tuple(x2.shape)}")
    a = ops.split(x1, 1, norm_dim(axis, x1.ndim, "cross"))
    b = ops.split(x2, 1, norm_dim(axis, x2.ndim, "cross"))
    parts = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    return ops.cat(parts, norm_dim(axis, parts[0].ndim, "cross"))


def diagonal(x: Tensor, /, *, offset: int = 0) -> Tensor:
    """The offset-th diagonal of each matrix (..., M, N), read with one strided slice."""
    need("diagonal", x)
    if x.ndim < 2:
        raise ShapeError(f"ember.array_api.linalg.diagonal: expected at least 2 dims, got "
                         f"shape {tuple(x.shape)}")
    *batch, m, n = x._data.shape
    length = max(0, min(m, n - offset) if offset >= 0 else min(m + offset, n))
    flat = x.reshape(tuple(batch) + (m * n,))
    if length == 0:
        return ops.zeros(tuple(batch) + (0,), dtype=x._dtype, device=x._device)
    start = offset if offset >= 0 else -offset * n
    return flat[..., start:start + (length - 1) * (n + 1) + 1:n + 1]


def trace(x: Tensor, /, *, offset: int = 0, dtype=None) -> Tensor:
    """The sum of each matrix's offset-th diagonal (integers in int64, as sum)."""
    need("trace", x, "numeric")
    d = sum_dtype(x, dtype)
    return ops.sum(diagonal(x, offset=offset).to(d), -1).to(d)


def vector_norm(x: Tensor, /, *, axis=None, keepdims: bool = False, ord=2) -> Tensor:
    """The ord-norm of vectors over axis (None: all elements): 2, 1, inf, -inf, 0, p."""
    need("vector_norm", x, "floating-point")
    axes = tuple(range(x.ndim)) if axis is None else norm_axes("vector_norm", axis, x.ndim)
    a = ops.abs(x)
    if axes == ():
        # the norm over no axes is each element's (ember's reductions read dim=() as every
        # dim, as PyTorch's do)
        return (a != 0).to(a._dtype) if ord == 0 else a
    if ord == math.inf:
        out = ops.amax(a, axes, keepdims)
    elif ord == -math.inf:
        out = ops.amin(a, axes, keepdims)
    elif ord == 0:
        out = ops.sum((a != 0).to(a._dtype), axes, keepdims)    # real, for complex x too
    elif ord == 1:
        out = ops.sum(a, axes, keepdims)
    elif ord == 2:
        out = ops.sqrt(ops.sum(a * a, axes, keepdims))
    else:
        out = ops.sum(a ** float(ord), axes, keepdims) ** (1.0 / ord)
    return out


def matrix_norm(x: Tensor, /, *, keepdims: bool = False, ord="fro") -> Tensor:
    """The ord-norm of each matrix: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf."""
    _matrices("matrix_norm", x)
    a = ops.abs(x)
    if ord == "fro":
        out = ops.sqrt(ops.sum(a * a, (-2, -1), keepdim=True))
    elif ord in (1, -1, math.inf, -math.inf):
        # 1: the largest column sum; inf: the largest row sum
        sums = ops.sum(a, -2 if ord in (1, -1) else -1, keepdim=True)
        pick = ops.amax if ord in (1, math.inf) else ops.amin
        out = pick(sums, -1 if ord in (1, -1) else -2, keepdim=True)
    elif ord in (2, -2, "nuc"):
        s = svdvals(x)
        out = (ops.amax(s, -1) if ord == 2 else ops.amin(s, -1) if ord == -2
               else ops.sum(s, -1)).reshape(s._data.shape[:-1] + (1, 1))
    else:
        raise EmberValueError(f"ember.array_api.linalg.matrix_norm: unknown ord {ord!r}; "
                              "expected 'fro', 'nuc', 1, -1, 2, -2, inf or -inf")
    return out if keepdims else out.reshape(out._data.shape[:-2])


def matrix_power(x: Tensor, n: int, /) -> Tensor:
    """x multiplied by itself n times (n < 0: of its inverse; 0: the identity)."""
    need("matrix_power", x, "floating-point")
    if x.ndim < 2 or x._data.shape[-1] != x._data.shape[-2]:
        raise ShapeError(f"ember.array_api.linalg.matrix_power: expected square matrices, got "
                         f"shape {tuple(x.shape)}")
    if n < 0:
        x, n = inv(x), -n
    m = x._data.shape[-1]
    eye = (ops.arange(m, device=x._device).reshape(m, 1) ==
           ops.arange(m, device=x._device).reshape(1, m)).to(x._dtype)
    out = ops.expand(eye, x._data.shape) if n == 0 else None
    base = x
    while n:                                    # binary powering: log2(n) squarings
        if n & 1:
            out = base if out is None else ops.matmul(out, base)
        n >>= 1
        if n:
            base = ops.matmul(base, base)
    return ops.contiguous(out) if out is x else out
