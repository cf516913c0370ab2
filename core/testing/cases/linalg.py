"""Conformance rows of matmul, the norms, and linalg's decompositions and solvers (inv, solve,
det, cholesky, eigh, eig, svd, qr, geqrf, lu, ldl) against NumPy's LAPACK.
"""
from __future__ import annotations

import math

import numpy as np

from ._table import ALL_FLOATS, Input, M, Rows

ROWS = Rows("linalg")
case = ROWS.case

# --- matmul --------------------------------------------------------------------------------
case("matmul", lambda E, x, y: x @ y, np.matmul, Input((3, 4)), Input((4, 5)),
     dtypes=ALL_FLOATS)
case("matmul:batched_broadcast", lambda E, x, y: x @ y, np.matmul, Input((2, 1, 3, 4)),
     Input((3, 4, 2)))
case("matmul:vector", lambda E, x, y, v: (x @ v, v @ y, v @ v), lambda np, x, y, v: (
    x @ v, v @ y, v @ v), Input((3, 4)), Input((4, 2)), Input((4,)))
case("matmul:int", lambda E, x, y: x @ y, np.matmul, Input((2, 3), "i"), Input((3, 2), "i"),
     dtypes=("int64", "int32"), grad=False)
case("matmul:empty", lambda E, x, y: (x @ y, y.mT @ x.mT),
     lambda np, x, y: (x @ y, y.T @ x.T), Input((2, 0)), Input((0, 3)), grad=False)
case("matmul:long", lambda E, x, y: x @ y, lambda np, x, y: x @ y, Input((2, 300)),
     Input((300, 3)), dtypes=ALL_FLOATS, grad=False, layouts=False, atol=1e-4, rtol=1e-4)
case("matmul:special", lambda E, x, y: x @ y, np.matmul, Input((2, 2), "f",
                                                             (math.nan, 1.0, math.inf, 0.0)),
     Input((2, 2), "f", (1.0, 2.0, 0.0, 1.0)), grad=False, layouts=False)


# --- PyTorch's tensor functions: norms ----------------------------------------------------
case("norm", lambda E, x: (x.norm(), x.norm(1, 1), E.linalg.norm(x, dim=-1),
                           E.linalg.vector_norm(x, float("inf"), (0, 2))),
     lambda np, x: (np.sqrt((x * x).sum()), np.abs(x).sum(1), np.sqrt((x * x).sum(-1)),
                    np.abs(x).max((0, 2))), Input(M), ops=("norm", "l2_norm"))
# the 2-norm's op (l2_norm) over one dim kept, several dims, and a 0-d input
case("norm:l2", lambda E, x, s: (E.linalg.vector_norm(x, 2, 1, True),
                                 E.linalg.vector_norm(x, 2, (0, 2)), s.norm()),
     lambda np, x, s: (np.sqrt((x * x).sum(1, keepdims=True)), np.sqrt((x * x).sum((0, 2))),
                       np.abs(s)), Input(M), Input(()), ops=("l2_norm",))


# --- linalg's decompositions and solvers ---------------------------------------------------
def _general(E, x):
    """A well-conditioned matrix from random entries (conditioning keeps gradcheck stable)."""
    return x + 3 * E.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def _spd(E, x):
    return x @ x.mT + x.shape[-1] * E.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def _np_general(np, x):
    return x + 3 * np.eye(x.shape[-1], dtype=x.dtype)


def _np_spd(np, x):
    return x @ np.swapaxes(x, -1, -2) + x.shape[-1] * np.eye(x.shape[-1], dtype=x.dtype)


def _signed_e(v):
    return v * v[..., :1, :].sign()


def _signed_np(np, v):
    return v * np.sign(v[..., :1, :])


case("inv", lambda E, x: E.linalg.inv(_general(E, x)),
     lambda np, x: np.linalg.inv(_np_general(np, x)), Input((2, 3, 3)))
case("solve", lambda E, a, b: E.linalg.solve(_general(E, a), b),
     lambda np, a, b: np.linalg.solve(_np_general(np, a), b), Input((2, 3, 3)),
     Input((2, 3, 2)))
case("det", lambda E, x: (E.linalg.det(_general(E, x)), E.linalg.slogdet(_general(E, x))[1]),
     lambda np, x: (np.linalg.det(_np_general(np, x)),
                    np.linalg.slogdet(_np_general(np, x))[1]),
     Input((2, 3, 3)), ops=("det", "logabsdet"), atol=1e-4)
case("cholesky", lambda E, x: E.linalg.cholesky(_spd(E, x)),
     lambda np, x: np.linalg.cholesky(_np_spd(np, x)), Input((2, 3, 3)))
case("eigh", lambda E, x: (E.linalg.eigvalsh(x + x.mT),
                           _signed_e(E.linalg.eigh(x + x.mT, "U").eigenvectors)),
     lambda np, x: (np.linalg.eigvalsh(x + np.swapaxes(x, -1, -2)),
                    _signed_np(np, np.linalg.eigh(x + np.swapaxes(x, -1, -2))[1])),
     Input((2, 3, 3)), ops=("eigh", "eigvalsh"), atol=1e-4)



def _svd_e(E, x, full):
    U, S, Vh = E.linalg.svd(x, full_matrices=full)
    k = min(x.shape[-2:])
    sign = U[..., :1, :k].sign().detach()
    return S, U[..., :k] * sign, Vh[..., :k, :] * sign.mT


def _svd_np(np, x, full):
    U, S, Vh = np.linalg.svd(x, full_matrices=full)
    k = min(x.shape[-2:])
    sign = np.sign(U[..., :1, :k])
    return S, U[..., :k] * sign, Vh[..., :k, :] * np.swapaxes(sign, -1, -2)


# signs fixed per singular pair: the vectors are defined up to one
case("svd_u", lambda E, x: _svd_e(E, x, False), lambda np, x: _svd_np(np, x, False),
     Input((2, 4, 3)), ops=("svd_u", "svd_vh", "svdvals"), atol=1e-4)
case("svd_u:full_wide", lambda E, x: _svd_e(E, x, True), lambda np, x: _svd_np(np, x, True),
     Input((3, 4)), ops=("svd_u", "svd_vh", "svdvals"), atol=1e-4)
case("pinv", lambda E, x: E.linalg.pinv(x), lambda np, x: np.linalg.pinv(x),
     Input((2, 4, 3)), atol=1e-4)
case("pinv:hermitian", lambda E, x: E.linalg.pinv(x + x.mT, hermitian=True),
     lambda np, x: np.linalg.pinv(x + np.swapaxes(x, -1, -2), hermitian=True),
     Input((2, 3, 3)), atol=1e-4)
case("qr_q", lambda E, x: tuple(E.linalg.qr(x)), lambda np, x: tuple(np.linalg.qr(x)),
     Input((2, 4, 3)), ops=("qr_q", "qr_r"), atol=1e-4)
case("qr_q:wide_complete", lambda E, x: tuple(E.linalg.qr(x, "complete")),
     lambda np, x: tuple(np.linalg.qr(x, "complete")), Input((3, 5)), ops=("qr_q", "qr_r"),
     atol=1e-4)


def _plu(E, x):
    p, lower, upper = E.linalg.lu(x)
    return p @ lower @ upper


# LU: P L U rebuilds A (values, and gradients through the factors' rules), lu_solve solves
case("lu_factor", lambda E, x, b: (_plu(E, _general(E, x)),
                                   E.linalg.lu_solve(*E.linalg.lu_factor(_general(E, x)), b)),
     lambda np, x, b: (_np_general(np, x), np.linalg.solve(_np_general(np, x), b)),
     Input((2, 3, 3)), Input((2, 3, 2)), ops=("lu_factor", "lu_permutation", "lu_solve"),
     atol=1e-4)
case("lu_factor:tall_wide", lambda E, x: (_plu(E, x), _plu(E, x.mT)),
     lambda np, x: (x, np.swapaxes(x, -1, -2)), Input((2, 4, 3)),
     ops=("lu_factor", "lu_permutation"), atol=1e-4)


def _expm_np(np, x):
    """exp(x) by its Taylor series on x / 2^8, squared back 8 times (float64)."""
    y = x.astype(np.float64) / 256.0
    term = total = np.broadcast_to(np.eye(x.shape[-1]), x.shape).copy()
    for k in range(1, 20):
        term = term @ y / k
        total = total + term
    for _ in range(8):
        total = total @ total
    return total.astype(x.dtype)


case("matrix_exp", lambda E, x: E.linalg.matrix_exp(x * 3), lambda np, x: _expm_np(np, x * 3),
     Input((2, 3, 3)), atol=1e-4, rtol=1e-4)


def _eig_rebuilt(E, x):
    w, v = E.linalg.eig(x)
    return ((v * w[..., None, :]) @ E.linalg.inv(v)).real, w.abs()


# eig: V diag(L) V^-1 rebuilds A (gradients through both rules), |L| as NumPy's geev
case("eig", _eig_rebuilt, lambda np, x: (x, np.abs(np.linalg.eigvals(x))),
     Input((2, 3, 3)), ops=("eig", "eigvals"), atol=1e-4, needs=("complex64", "complex128"))


def _geqrf_np(np, x):
    h, tau = np.linalg.qr(x, mode="raw")          # LAPACK's a, transposed
    return np.swapaxes(h, -1, -2), tau


# geqrf: LAPACK's packed QR itself; householder_product rebuilds Q, ormqr applies it
case("geqrf", lambda E, x: tuple(E.geqrf(x)), _geqrf_np, Input((2, 4, 3)),
     ops=("geqrf", "geqrf_tau"), grad=False, atol=1e-4)
case("geqrf:wide", lambda E, x: tuple(E.geqrf(x)), _geqrf_np, Input((3, 5)),
     ops=("geqrf", "geqrf_tau"), grad=False, atol=1e-4)
case("householder_product", lambda E, x, c: (
    E.linalg.householder_product(*E.geqrf(x)).abs(), E.ormqr(*E.geqrf(x), c).abs()),
     lambda np, x, c: (np.abs(np.linalg.qr(x)[0]), np.abs(np.linalg.qr(x, "complete")[0] @ c)),
     Input((2, 4, 3)), Input((2, 4, 2)), ops=("linalg.householder_product", "ormqr"),
     grad=False, atol=1e-4)


def _ldl_solved(E, x, b):
    a = x + x.mT
    return E.linalg.ldl_solve(*E.linalg.ldl_factor(a), b)


# ldl: sytrf's factors solve the symmetric system they came from
case("ldl_factor", _ldl_solved,
     lambda np, x, b: np.linalg.solve(x + np.swapaxes(x, -1, -2), b), Input((2, 4, 4)),
     Input((2, 4, 2)), ops=("ldl_factor", "ldl_solve"), grad=False,
     atol=1e-3, rtol=1e-3)

# --- non-finite input (docs/semantics.md, non_finite_linear_algebra) -----------------------
# per matrix of a batch: finite, inf on the diagonal, nan off it, -inf off it
_EDGE = (2.0, 0.5, 0.5, 2.0, math.inf, 0.5, 0.5, 2.0, 2.0, math.nan, math.nan, 2.0,
         1.0, -math.inf, -math.inf, 1.0)
_EDGE_NAN = (2.0, 0.5, 0.5, 2.0, math.nan, 0.5, 0.5, 2.0, 2.0, 0.5, math.nan, 2.0)


def _bad_np(np, x):
    return ~np.isfinite(x).all((-2, -1))


def _nan_np(np, bad, out):
    return np.where(bad.reshape(bad.shape + (1,) * (out.ndim - bad.ndim)), np.nan, out)


def _eigh_edge_np(np, x):
    bad = _bad_np(np, x)
    w, v = np.linalg.eigh(np.where(bad[:, None, None], 0, x))
    return _nan_np(np, bad, w), _nan_np(np, bad, np.abs(v))


def _qr_edge_np(np, x):
    bad = _bad_np(np, x)
    q, r = np.linalg.qr(np.where(bad[:, None, None], 0, x))
    return _nan_np(np, bad, q), _nan_np(np, bad, r)


def _svdvals_edge_np(np, x):
    bad = _bad_np(np, x)
    return _nan_np(np, bad, np.linalg.svd(np.where(bad[:, None, None], 0, x),
                                          compute_uv=False))


def _slogdet_edge_np(np, x):
    # the sign of an infinite det is +-1 (PyTorch), of a nan one nan (sign_of_nan_is_nan)
    return np.sign(np.linalg.det(x)), np.linalg.slogdet(x)[1]


def _inv_edge_np(np, x):
    nan = np.isnan(x).any((-2, -1))
    return _nan_np(np, nan, np.linalg.inv(np.where(nan[:, None, None], np.eye(2), x)))


case("eigh:special", lambda E, x: (E.linalg.eigvalsh(x), E.linalg.eigh(x).eigenvectors.abs()),
     _eigh_edge_np, Input((4, 2, 2), "f", _EDGE), ops=("eigh", "eigvalsh"), grad=False,
     layouts=False)
case("qr_q:special", lambda E, x: tuple(E.linalg.qr(x)), _qr_edge_np,
     Input((4, 2, 2), "f", _EDGE), ops=("qr_q", "qr_r"), grad=False, layouts=False)
case("svdvals:special", lambda E, x: E.linalg.svdvals(x), _svdvals_edge_np,
     Input((2, 2, 2), "f", _EDGE[:8]), ops=("svdvals",), grad=False, layouts=False)
case("det:special", lambda E, x: tuple(E.linalg.slogdet(x)), _slogdet_edge_np,
     Input((4, 2, 2), "f", _EDGE), ops=("det", "logabsdet"), grad=False, layouts=False)
case("inv:special", lambda E, x: (E.linalg.inv(x), E.linalg.solve(x, x[..., :1])),
     lambda np, x: (_inv_edge_np(np, x), _inv_edge_np(np, x) @ x[..., :1]),
     Input((3, 2, 2), "f", _EDGE_NAN), ops=("inv", "solve"), grad=False, layouts=False)
