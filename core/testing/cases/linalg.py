"""Conformance rows of linalg's decompositions and solvers (inv, solve, det, cholesky, eigh),
against NumPy's LAPACK."""
from __future__ import annotations

from .elementwise import Input, case, section


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


section("linalg")
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
case("qr_q", lambda E, x: tuple(E.linalg.qr(x)), lambda np, x: tuple(np.linalg.qr(x)),
     Input((2, 4, 3)), ops=("qr_q", "qr_r"), atol=1e-4)
case("qr_q:wide_complete", lambda E, x: tuple(E.linalg.qr(x, "complete")),
     lambda np, x: tuple(np.linalg.qr(x, "complete")), Input((3, 5)), ops=("qr_q", "qr_r"),
     atol=1e-4)
