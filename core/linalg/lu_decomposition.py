"""torch.linalg's LU family: lu_factor, lu_factor_ex, lu, lu_solve, and torch.lu_unpack."""
from __future__ import annotations

from collections import namedtuple

from .. import dtypes as D
from .. import ops
from ..dispatch import run
from ..errors import DtypeNotSupportedError, EmberValueError, NotInEmberError, ShapeError
from ..ops import decompositions as P
from ..ops._util import broadcast_shapes
from ..tensor import Tensor
from .decompositions import _float, _out

__all__ = ["lu_factor", "lu_factor_ex", "lu", "lu_solve"]

LUFactorResult = namedtuple("linalg_lu_factor", ["LU", "pivots"])
LUFactorExResult = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LUResult = namedtuple("linalg_lu", ["P", "L", "U"])
LUUnpackResult = namedtuple("lu_unpack", ["P", "L", "U"])


def _matrix(name: str, A) -> Tensor:
    A = _float(name, A)
    if A.ndim < 2:
        raise ShapeError(f"linalg.{name}: expected a matrix or a batch of them (shape "
                         f"(*, m, n)), got shape {tuple(A.shape)}")
    return A


def _pivoted(name: str, pivot) -> None:
    if not pivot:
        raise NotInEmberError(f"linalg.{name}: LU without pivoting (pivot=False) is not in "
                              "ember (PyTorch has it on CUDA only; its CPU refuses it too); "
                              "use pivot=True")


def _int32(name: str, pivots: Tensor) -> Tensor:
    if pivots.dtype is not D.int32:
        raise DtypeNotSupportedError(f"{name}: expected int32 pivots (as linalg.lu_factor "
                                     f"returns them), got {pivots.dtype.name}; pass "
                                     "lu_factor's pivots, or call .int() on them")
    return pivots


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False,
                 out=None) -> LUFactorExResult:
    """(LU, pivots, info): L and U of A = P L U packed in one matrix (L's unit diagonal left
    out), the 1-based int32 pivots and LAPACK's info (1 + the index of U's first zero
    diagonal entry, 0 if none), as PyTorch's; check_errors raises where info is not 0.

    PyTorch
    -------
    ``torch.linalg.lu_factor_ex``
    """
    _out(out, "lu_factor_ex")
    A = _matrix("lu_factor_ex", A)
    _pivoted("lu_factor_ex", pivot)
    LU, pivots, info = P.run_lu_factor(A)
    if check_errors and bool((info != 0).any()):        # torch.lu never checks: it has info
        raise EmberValueError("linalg.lu_factor_ex: U has a zero on its diagonal (info = "
                              f"{info.tolist()}): the matrix is singular; pass "
                              "check_errors=False to get the factors anyway")
    return LUFactorExResult(LU, pivots, info)


def lu_factor(A: Tensor, *, pivot: bool = True, out=None) -> LUFactorResult:
    """(LU, pivots) of A = P L U; raises where U has a zero on its diagonal (lu_solve would
    divide by it), as PyTorch's: linalg.lu_factor_ex or linalg.lu factor such matrices.

    PyTorch
    -------
    ``torch.linalg.lu_factor``
    """
    _out(out, "lu_factor")
    LU, pivots, info = lu_factor_ex(_matrix("lu_factor", A), pivot=pivot)
    if bool((info != 0).any()):
        flat = info.reshape(-1)
        at = int((flat != 0).to(D.int32).argmax())
        i = int(flat[at]) - 1
        where = f" in batch element {at}" if info.ndim else ""
        raise EmberValueError(f"linalg.lu_factor: expected a matrix whose U has no zero on "
                              f"its diagonal, got U[{i},{i}] == 0{where} (lu_solve "
                              "would divide by it); call linalg.lu(A) or "
                              "linalg.lu_factor_ex(A) to factor it anyway")
    return LUFactorResult(LU, pivots)


def lu(A: Tensor, *, pivot: bool = True, out=None) -> LUResult:
    """(P, L, U) with A = P L U: P a permutation matrix, L unit lower (*, m, k), U upper
    (*, k, n), k = min(m, n); singular matrices are factored too.

    PyTorch
    -------
    ``torch.linalg.lu``
    """
    _out(out, "lu")
    A = _matrix("lu", A)
    _pivoted("lu", pivot)
    LU, pivots, _ = P.run_lu_factor(A)
    order = run(P.lu_permutation_op, pivots, m=A.shape[-2])
    return LUResult(*P.lu_parts(LU, order))


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True, *, out=None) -> LUUnpackResult:
    """(P, L, U) of lu_factor's packed LU and pivots; the part not asked for is empty.

    PyTorch
    -------
    ``torch.lu_unpack``
    """
    _out(out, "lu_unpack")
    LU = _matrix("lu_unpack", LU_data)
    m, n = LU.shape[-2:]
    k = min(m, n)
    if not isinstance(LU_pivots, Tensor) or tuple(LU_pivots.shape) != \
            tuple(LU.shape[:-2]) + (k,):
        got = tuple(LU_pivots.shape) if isinstance(LU_pivots, Tensor) else \
            type(LU_pivots).__name__
        raise ShapeError(f"lu_unpack: expected pivots of shape {tuple(LU.shape[:-2]) + (k,)} "
                         f"for LU of shape {tuple(LU.shape)}, got {got}; pass "
                         "linalg.lu_factor's pivots")
    _int32("lu_unpack", LU_pivots)
    empty = LU.new_zeros(0)
    if unpack_pivots:
        order = run(P.lu_permutation_op, LU_pivots, m=m)
        perm, lower, upper = P.lu_parts(LU, order)
    else:
        perm = empty
        lower = LU[..., :k].tril(-1) + ops.eye(m, k, dtype=LU.dtype, device=LU.device)
        upper = LU[..., :k, :].triu()
    if not unpack_data:
        return LUUnpackResult(perm, empty, empty)
    return LUUnpackResult(perm, lower, upper)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False, out=None) -> Tensor:
    """X with A X = B (left=False: X A = B; adjoint: A^H in place of A) for A = P L U given
    by lu_factor's LU and pivots; batch dims broadcast.

    PyTorch
    -------
    ``torch.linalg.lu_solve``
    """
    _out(out, "lu_solve")
    LU, B = _matrix("lu_solve", LU), _float("lu_solve", B)
    if LU.shape[-1] != LU.shape[-2]:
        raise ShapeError(f"linalg.lu_solve: expected LU of square matrices (*, n, n), got "
                         f"shape {tuple(LU.shape)}")
    if B.ndim < 2:
        raise ShapeError(f"linalg.lu_solve: expected B of at least 2 dimensions (*, n, k), "
                         f"got shape {tuple(B.shape)}; add a last dim with B.unsqueeze(-1)")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        want = f"(*, {n}, k)" if left else f"(*, k, {n})"
        raise ShapeError(f"linalg.lu_solve: expected B of shape {want} for LU of shape "
                         f"{tuple(LU.shape)} (left={left}), got {tuple(B.shape)}")
    if not left:                    # X A = B  <=>  A^H X^H = B^H
        return lu_solve(LU, pivots, B.mH, adjoint=not adjoint).mH
    if LU.dtype != B.dtype:
        raise DtypeNotSupportedError(f"linalg.lu_solve: expected LU and B of one dtype, got "
                                     f"{LU.dtype.name} and {B.dtype.name}; convert one with "
                                     f".to(...)")
    if not isinstance(pivots, Tensor) or tuple(pivots.shape[-1:]) != (n,):
        got = tuple(pivots.shape) if isinstance(pivots, Tensor) else type(pivots).__name__
        raise ShapeError(f"linalg.lu_solve: expected pivots of shape (*, {n}) for LU of "
                         f"shape {tuple(LU.shape)}, got {got}; pass linalg.lu_factor's "
                         "pivots")
    _int32("lu_solve", pivots)
    batch = broadcast_shapes("lu_solve", tuple(LU.shape[:-2]), tuple(pivots.shape[:-1]),
                             tuple(B.shape[:-2]))
    return run(P.lu_solve_op, LU.expand(*batch, n, n), pivots.expand(*batch, n),
               B.expand(*batch, *B.shape[-2:]), adjoint=bool(adjoint))
