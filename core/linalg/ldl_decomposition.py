"""torch.linalg's L D L^T family (Bunch-Kaufman, LAPACK sytrf/sytrs): ldl_factor,
ldl_factor_ex, ldl_solve; not differentiable, as in PyTorch."""
from __future__ import annotations

from collections import namedtuple

from .. import dtypes as D
from ..dispatch import run
from ..errors import DtypeNotSupportedError, EmberValueError, ShapeError
from ..ops import decompositions as P
from ..tensor import Tensor
from .decompositions import _broadcast, _float, _out

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

LDLFactorResult = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
LDLFactorExResult = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def _symmetric(name: str, A, hermitian: bool) -> Tensor:
    A = _float(name, A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"linalg.{name}: expected a square matrix or a batch of them "
                         f"(shape (*, n, n)), got shape {tuple(A.shape)}")
    return A


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False,
                  out=None) -> LDLFactorExResult:
    """(LD, pivots, info): the Bunch-Kaufman factorization A = P L D L^T P^T of each
    symmetric matrix (L D L^H of a hermitian one with hermitian), read from its lower
    triangle, packed as LAPACK sytrf's (upper
    triangle zero, as torch's); info is 1 + the index of the first zero 1x1 block of D
    (0 if none); check_errors raises where it is not 0.

    PyTorch
    -------
    ``torch.linalg.ldl_factor_ex``
    """
    _out(out, "ldl_factor_ex")
    A = _symmetric("ldl_factor_ex", A, hermitian)
    LD, pivots, info = P.run_ldl_factor(A, bool(hermitian))
    if check_errors and bool((info != 0).any()):
        raise EmberValueError(f"linalg.ldl_factor_ex: D has a zero 1x1 block (info = "
                              f"{info.tolist()}): the matrix is singular; pass "
                              "check_errors=False to get the factors anyway")
    return LDLFactorExResult(LD, pivots, info)


def ldl_factor(A: Tensor, *, hermitian: bool = False, out=None) -> LDLFactorResult:
    """(LD, pivots) of A = P L D L^T P^T; raises where D is singular (torch raises too).

    PyTorch
    -------
    ``torch.linalg.ldl_factor``
    """
    _out(out, "ldl_factor")
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    if bool((info != 0).any()):
        raise EmberValueError(f"linalg.ldl_factor: expected a matrix whose D has no zero "
                              f"1x1 block, got info = {info.tolist()} (1 + the index of the "
                              "first); call linalg.ldl_factor_ex to factor it anyway")
    return LDLFactorResult(LD, pivots)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False,
              out=None) -> Tensor:
    """X with A X = B for A given by ldl_factor's (LD, pivots); batch dims broadcast.

    PyTorch
    -------
    ``torch.linalg.ldl_solve``
    """
    _out(out, "ldl_solve")
    LD = _symmetric("ldl_solve", LD, hermitian)
    B = _float("ldl_solve", B)
    if pivots.dtype is not D.int32:
        raise DtypeNotSupportedError(f"linalg.ldl_solve: expected int32 pivots (as "
                                     f"linalg.ldl_factor returns them), got "
                                     f"{pivots.dtype.name}")
    n = LD.shape[-1]
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise ShapeError(f"linalg.ldl_solve: expected pivots of shape {tuple(LD.shape[:-1])}"
                         f" for LD of shape {tuple(LD.shape)}, got {tuple(pivots.shape)}")
    if B.ndim < 2 or B.shape[-2] != n:
        raise ShapeError(f"linalg.ldl_solve: expected B of shape (*, {n}, k), got "
                         f"{tuple(B.shape)}")
    if LD.dtype != B.dtype:
        raise DtypeNotSupportedError(f"linalg.ldl_solve: expected LD and B of one dtype, "
                                     f"got {LD.dtype.name} and {B.dtype.name}")
    batch = _broadcast(LD.shape[:-2], B.shape[:-2])
    LD = LD.expand(batch + (n, n)).contiguous()
    pivots = pivots.expand(batch + (n,)).contiguous()
    B = B.expand(batch + tuple(B.shape[-2:])).contiguous()
    return run(P.ldl_solve_op, LD, pivots, B, hermitian=bool(hermitian))
