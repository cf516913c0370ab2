"""torch.* linear algebra (torch.inverse, det, logdet, cholesky, svd, qr, pinverse, norm,
chain_matmul): torch's spellings over ember.linalg.
"""
from __future__ import annotations

from collections import namedtuple

from .. import amp_policy, ops
from .. import dtypes as D
from .._torch_gaps import gap
from ..amp_policy import active as _amp
from ..errors import EmberValueError
from ..linalg import decompositions as LA
from ..linalg import lu_decomposition as LU_
from ..linalg.decompositions import (
    QRResult,
    det,
    inv,
    matrix_power,
    multi_dot,
    pinv,
    slogdet,
    svdvals,
)
from ..linalg.householder import geqrf, ormqr
from ..linalg.householder import householder_product as orgqr
from ..linalg.lu_decomposition import lu_unpack
from ..linalg.matrix_functions import matrix_exp
from ..linalg.norms import _dims, _floats, _l2, matrix_norm, vector_norm
from ..signatures import numpy_names
from ..tensor import Tensor

__all__ = ["inverse", "det", "logdet", "slogdet", "cholesky", "matrix_power", "chain_matmul",
           "svd", "pinverse", "qr", "norm", "cholesky_inverse", "cholesky_solve",
           "triangular_solve", "lu", "lu_solve", "lu_unpack", "matrix_exp", "geqrf", "ormqr",
           "orgqr", "svd_lowrank", "pca_lowrank"]

TorchSVDResult = namedtuple("svd", ["U", "S", "V"])


def logdet(input: Tensor) -> Tensor:
    """log det: nan where det < 0, -inf where det == 0 (torch.logdet).

    PyTorch
    -------
    ``torch.logdet``
    """
    sign, logabs = slogdet(input)
    if sign._dtype.category == D.COMPLEX:       # log det = log |det| + i arg det (torch)
        return logabs + ops.log(sign)
    return ops.where(sign < 0, float("nan"), logabs)


# --- torch.<name> aliases and Tensor methods (only those torch itself has) --------------------
def inverse(input: Tensor, *, out=None) -> Tensor:
    """The inverse of a square matrix (or a batch of them).

    PyTorch
    -------
    ``torch.inverse``
    """
    return inv(input, out=out)


def cholesky(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """torch.cholesky / Tensor.cholesky: `upper` positional, as there.

    PyTorch
    -------
    ``torch.cholesky``
    """
    return LA.cholesky(input, upper=upper, out=out)


def chain_matmul(*matrices, out=None) -> Tensor:
    """The matrix product of the matrices in order (deprecated in PyTorch for
    :func:`ember.linalg.multi_dot`).

    PyTorch
    -------
    ``torch.chain_matmul``
    """
    return multi_dot(matrices, out=out)


def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *,
         out=None) -> TorchSVDResult:
    """torch.svd / Tensor.svd: (U, S, V) with V, not Vh; `some` is not full_matrices;
    compute_uv=False gives zero U and V, as there.

    PyTorch
    -------
    ``torch.svd``
    """
    if not compute_uv:
        s = svdvals(input, out=out)
        *b, m, n = input.shape
        return TorchSVDResult(ops.zeros(*b, m, m if not some else min(m, n),
                                        dtype=input.dtype, device=input.device), s,
                              ops.zeros(*b, n, n if not some else min(m, n),
                                        dtype=input.dtype, device=input.device))
    U, S, Vh = LA.svd(input, full_matrices=not some, out=out)
    return TorchSVDResult(U, S, Vh.mT)


def qr(input: Tensor, some: bool = True, *, out=None) -> QRResult:
    """torch.qr / Tensor.qr: `some` picks the reduced form.

    PyTorch
    -------
    ``torch.qr``
    """
    return LA.qr(input, "reduced" if some else "complete", out=out)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The Moore-Penrose pseudo-inverse; singular values below ``rcond`` times the largest
    count as zero.

    PyTorch
    -------
    ``torch.pinverse``
    """
    if _amp and amp_policy.on("pinverse"):      # autocast (amp_policy.py)
        return amp_policy.call("pinverse", pinverse, input, rcond)
    return pinv(input, rtol=rcond)


@numpy_names
def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """torch.norm / Tensor.norm: p 'fro' (the 2-norm over dim, or over everything), a
    number (the vector norm over dim), 'nuc' (not in ember yet).

    PyTorch
    -------
    ``torch.norm``
    """
    if p == "fro" or p is None:
        x = _floats("norm", input, dtype)
        if x._dtype in (D.float16, D.bfloat16):   # accumulated in float32, as torch's
            return norm(x.float(), "fro", dim, keepdim).to(x._dtype)
        if x._dtype.category == D.COMPLEX:      # the 2-norm of the magnitudes (real)
            x = x.abs()
        return _l2(x, _dims(x, dim), keepdim)
    if p == "nuc":
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim,
                           dtype=dtype)
    return vector_norm(input, p, dim, keepdim, dtype=dtype)



def cholesky_inverse(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """The inverse of A from its Cholesky factor: A = L L^H (or U^H U with upper).

    PyTorch
    -------
    ``torch.cholesky_inverse``
    """
    if out is not None:
        raise gap("cholesky_inverse(out=)", "assign the result instead")
    A = input.mT @ input if upper else input @ input.mT
    return inv(A)


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """X with A X = B, A given by its Cholesky factor (A = L L^H, or U^H U with upper).

    PyTorch
    -------
    ``torch.cholesky_solve``
    """
    if out is not None:
        raise gap("cholesky_solve(out=)", "assign the result instead")
    A = input2.mT @ input2 if upper else input2 @ input2.mT
    return LA.solve(A, input)


TriangularSolveResult = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, *, out=None) -> TriangularSolveResult:
    """X with op(T) X = b for T A's upper (or lower) triangle, op the transpose when asked,
    and a copy of A (torch's legacy pair).

    PyTorch
    -------
    ``torch.triangular_solve``
    """
    if out is not None:
        raise gap("triangular_solve(out=)", "assign the result instead")
    T = A.mT if transpose else A
    x = LA.solve_triangular(T, input, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(x, A.clone())


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, *, out=None):
    """(LU, pivots), with LAPACK's info too when get_infos: linalg.lu_factor_ex's, never
    raising for a singular matrix (torch.lu's legacy form).

    PyTorch
    -------
    ``torch.lu``
    """
    if out is not None:
        raise gap("lu(out=)", "assign the result instead")
    LU, pivots, info = LU_.lu_factor_ex(A, pivot=pivot)
    return LU_.LUFactorExResult(LU, pivots, info) if get_infos else (LU, pivots)


def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out=None) -> Tensor:
    """X with A X = b for A given by lu_factor's LU and pivots (torch.lu_solve's legacy
    argument order: linalg.lu_solve takes b last).

    PyTorch
    -------
    ``torch.lu_solve``
    """
    return LU_.lu_solve(LU_data, LU_pivots, input, out=out)


# --- randomized low-rank SVD and PCA (torch/_lowrank.py: Halko, Martinsson and Tropp 2009,
# "Finding structure with randomness", algorithms 4.4 and 5.1)
def _approximate_basis(A: Tensor, q: int, niter: int, M) -> Tensor:
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M (M: None or
    A's shape), from a Gaussian sketch and niter subspace iterations."""
    dtype = A.dtype if A.dtype.is_complex or A.dtype.is_floating_point else \
        D.get_default_dtype()
    R = ops.randn(A.shape[-1], q, dtype=dtype, device=A.device)

    def times(X, Y):            # (X - M) Y, or (X - M)^H Y with the adjoint of both
        out = ops.matmul(X, Y)
        return out if M is None else out - ops.matmul(M if X is A else M.mH, Y)
    Q = LA.qr(times(A, R)).Q
    for _ in range(niter):
        Q = LA.qr(times(A.mH, Q)).Q
        Q = LA.qr(times(A, Q)).Q
    return Q


def _svd_lowrank(A: Tensor, q: int, niter: int, M):
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))
    if m < n:                   # the sketch on the short side
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = ops.matmul(Q.mH, A)
    if M is not None:
        B = B - ops.matmul(Q.mH, M)
    U, S, Vh = LA.svd(B, full_matrices=False)
    U, V = ops.matmul(Q, U), Vh.mH
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H (M: none, or broadcast to A's shape): the SVD
    of A projected on a random q-dimensional basis refined by niter subspace iterations
    (randomized: ember.manual_seed makes it repeatable; ember's generator is not torch's,
    so the basis differs while the factors of a matrix of rank <= q agree).

    PyTorch
    -------
    ``torch.svd_lowrank``
    """
    return _svd_lowrank(A, 6 if q is None else int(q), 2 if niter is None else int(niter), M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2):
    """(U, S, V) of svd_lowrank on A centered (its column means subtracted; center=False:
    A as it is), q = min(6, m, n) by default: V's columns are the principal directions and
    S ** 2 / (m - 1) the variances along them.

    PyTorch
    -------
    ``torch.pca_lowrank``
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise EmberValueError(f"q(={q}) must be non-negative integer and not greater than "
                              f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise EmberValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)
