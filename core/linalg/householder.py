"""Householder reflectors as LAPACK stores them: torch.geqrf, linalg.householder_product
(torch.orgqr) and torch.ormqr, the last two written with ember ops (differentiable)."""
from __future__ import annotations

from collections import namedtuple

from .. import ops
from ..dispatch import run
from ..errors import DtypeNotSupportedError, ShapeError
from ..ops import decompositions as P
from ..tensor import Tensor
from .decompositions import _float, _out

__all__ = ["householder_product"]

GeqrfResult = namedtuple("geqrf", ["a", "tau"])


def geqrf(input: Tensor, *, out=None) -> GeqrfResult:
    """(a, tau): LAPACK geqrf's QR of each matrix, R on and above a's diagonal, the
    Householder vectors below it (their unit first entries left out), tau their scalars
    (H_i = I - tau_i v_i v_i^H, Q = H_1 ... H_k); not differentiable, as in PyTorch.

    PyTorch
    -------
    ``torch.geqrf``
    """
    _out(out, "geqrf")
    A = _float("geqrf", input)
    return GeqrfResult(run(P.geqrf_op, A), run(P.geqrf_tau_op, A))


def _check(name: str, A: Tensor, tau: Tensor) -> tuple[Tensor, Tensor]:
    A, tau = _float(name, A), _float(name, tau)
    if A.ndim < 2:
        raise ShapeError(f"{name}: expected input of at least 2 dimensions (*, m, n), got "
                         f"shape {tuple(A.shape)}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise ShapeError(f"{name}: expected tau's batch dims {tuple(A.shape[:-2])} (input's),"
                         f" got tau of shape {tuple(tau.shape)}")
    if A.dtype != tau.dtype:
        raise DtypeNotSupportedError(f"{name}: expected input and tau of one dtype, got "
                                     f"{A.dtype.name} and {tau.dtype.name}; convert one "
                                     "with .to(...)")
    return A, tau


def _reflector(A: Tensor, i: int) -> Tensor:
    """v_i (*, m): 0 above row i, 1 at it, A's column i below it."""
    m = A.shape[-2]
    rows = ops.arange(m, device=A.device)
    return ops.where(rows > i, A[..., :, i], ops.where(rows == i, 1.0, 0.0).to(A.dtype))


def _apply(A: Tensor, tau: Tensor, C: Tensor, left: bool, adjoint: bool) -> Tensor:
    """Q C, Q^H C, C Q or C Q^H for Q = H_1 ... H_k, one reflector at a time."""
    k = tau.shape[-1]
    # the order the reflectors meet C: Q C = H_1 (... (H_k C)), Q^H C = H_k^H ... H_1^H C
    order = range(k - 1, -1, -1) if left != adjoint else range(k)
    complex_ = A.dtype.is_complex
    for i in order:
        v = _reflector(A, i)
        t = tau[..., i, None, None]
        if adjoint and complex_:
            t = t.conj()
        vh = v.conj() if complex_ else v
        if left:        # H C = C - t v (v^H C)
            C = C - t * v[..., :, None] * (vh[..., None, :] @ C)
        else:           # C H = C - t (C v) v^H
            C = C - t * (C @ v[..., :, None]) * vh[..., None, :]
    return C


def householder_product(input: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H with v_i the i-th
    column of A below the diagonal (a unit entry on it): Q from geqrf's (a, tau).

    PyTorch
    -------
    ``torch.linalg.householder_product``, ``torch.orgqr``
    """
    _out(out, "householder_product")
    name = "linalg.householder_product"
    input, tau = _check(name, input, tau)
    m, n = input.shape[-2:]
    if m < n:
        raise ShapeError(f"{name}: expected input.shape[-2] >= input.shape[-1], got shape "
                         f"{tuple(input.shape)}")
    if tau.shape[-1] > n:
        raise ShapeError(f"{name}: expected tau.shape[-1] <= input.shape[-1] = {n}, got "
                         f"{tau.shape[-1]}")
    eye = ops.eye(m, n, dtype=input.dtype, device=input.device)
    start = eye.expand(tuple(input.shape)) + input * 0          # in A's graph, A's batch
    return _apply(input, tau, start, True, False)


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True,
          transpose: bool = False, *, out=None) -> Tensor:
    """Q C (left) or C Q, with Q^H for Q when transpose, Q = H_1 ... H_k the full (m, m)
    product of geqrf's reflectors in (input, tau).

    PyTorch
    -------
    ``torch.ormqr``
    """
    _out(out, "ormqr")
    A, input2 = _check("ormqr", input, input2)
    C = _float("ormqr", input3)
    if C.ndim < 2:
        raise ShapeError(f"ormqr: expected other of at least 2 dimensions, got shape "
                         f"{tuple(C.shape)}")
    if C.dtype != A.dtype:
        raise DtypeNotSupportedError(f"ormqr: expected input and other of one dtype, got "
                                     f"{A.dtype.name} and {C.dtype.name}")
    m = C.shape[-2] if left else C.shape[-1]
    if A.shape[-2] != m:
        raise ShapeError(f"ormqr: expected input.shape[-2] == other.shape["
                         f"{-2 if left else -1}] = {m} (left={left}), got input of shape "
                         f"{tuple(A.shape)} and other of shape {tuple(C.shape)}")
    if input2.shape[-1] > min(m, A.shape[-1]):
        raise ShapeError(f"ormqr: tau.shape[-1] must be equal to min(other.shape[-2], "
                         f"input.shape[-1]) or less, got {input2.shape[-1]}")
    return _apply(A, input2, C, left, transpose)
