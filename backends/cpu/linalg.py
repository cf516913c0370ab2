"""LAPACK's LU (getrf, getrs) and Bunch-Kaufman L D L^T (sytrf/hetrf, sytrs/hetrs) on the
CPU through scipy.linalg.lapack where SciPy is installed.

NumPy's linalg has neither: array_api's blocked LU pays a few array calls per column
(256x256: ~8 ms against LAPACK's 0.5), its L D L^T one Python step per column of each
matrix. Torch's factors come from LAPACK too, so the pivots are the same choice. One LAPACK
call per matrix: a batch of many small matrices goes through array_api's LU instead, whose
steps each cover the whole batch.  Input holding inf or nan takes array_api's kernels, which
follow reference LAPACK there (as torch's MKL does; OpenBLAS differs).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from ember.errors import EmberValueError

from .. import array_api

# past this many matrices per column, array_api's whole-batch steps beat one LAPACK call per
# matrix (timed on a 2-core EPYC, float32: getrf and the blocked LU break even near 12
# matrices per column, getrs and two batched solves near 250)
_FACTOR_PER_COLUMN = 8
_SOLVE_PER_COLUMN = 64


@functools.cache
def _lapack():
    """scipy.linalg.lapack, imported at the first LU (import ember stays light), or None."""
    try:
        import scipy.linalg.lapack
    except ImportError:
        return None
    return scipy.linalg.lapack


def kernels() -> dict:
    """lu_factor and lu_solve on LAPACK (array_api's kernels without SciPy)."""

    def lu_factor(a):
        *batch, m, n = a.shape
        k = min(m, n)
        count = math.prod(batch)
        lapack = _lapack()
        # OpenBLAS's getrf leaves a nan pivot's column unscaled and updates with it
        # (torch's MKL scales by it, as reference LAPACK): non-finite input takes
        # array_api's, which follows the reference
        if lapack is None or count * m * n == 0 or count > _FACTOR_PER_COLUMN * k or \
                not np.isfinite(a).all():
            return array_api._lu(np, a)
        (getrf,) = lapack.get_lapack_funcs(("getrf",), dtype=a.dtype)
        out = np.zeros((count, m + 1, n + 1), dtype=a.dtype)
        for i, matrix in enumerate(a.reshape(count, m, n)):
            out[i, :m, :n], pivots, out[i, m, n] = getrf(matrix)
            out[i, m, :k] = pivots + 1
        return out.reshape(*batch, m + 1, n + 1)

    def lu_solve(lu, pivots, b, *, adjoint):
        *batch, n, _ = lu.shape
        count = math.prod(batch)
        lapack = _lapack()
        if lapack is None or count * n * b.shape[-1] == 0 or count > _SOLVE_PER_COLUMN * n:
            return array_api._lu_solve(np, lu, pivots, b, adjoint)
        array_api._lu_permutation(np, pivots, n)      # refuses pivots outside 1..n
        (getrs,) = lapack.get_lapack_funcs(("getrs",), dtype=lu.dtype)
        trans = (2 if np.iscomplexobj(lu) else 1) if adjoint else 0
        out = np.empty(b.shape, dtype=b.dtype)
        flat = out.reshape(count, *b.shape[-2:])
        for i, (f, p, rhs) in enumerate(zip(lu.reshape(count, n, n),
                                            pivots.reshape(count, n) - 1,
                                            b.reshape(count, *b.shape[-2:]))):
            flat[i], _ = getrs(f, p, rhs, trans=trans)
        return out

    def ldl_factor(a, *, hermitian):
        *batch, n, _ = a.shape
        count = math.prod(batch)
        lapack = _lapack()
        if lapack is None or count * n == 0 or not np.isfinite(a).all():
            return array_api._ldl(np, a, hermitian)
        (sytrf,) = lapack.get_lapack_funcs((_symmetric("trf", a, hermitian),), dtype=a.dtype)
        ld = np.empty((count, n, n), dtype=a.dtype)
        pivots = np.empty((count, n), dtype=np.int32)
        for i, matrix in enumerate(a.reshape(count, n, n)):
            factors, pivots[i], _ = sytrf(matrix, lower=1)
            ld[i] = np.tril(factors)                # torch zeroes the upper triangle
        return array_api._ldl_packed(np, ld.reshape(a.shape), pivots.reshape(*batch, n))

    def ldl_solve(ld, pivots, b, *, hermitian):
        *batch, n, _ = ld.shape
        count = math.prod(batch)
        lapack = _lapack()
        if lapack is None or count * n * b.shape[-1] == 0:
            return array_api._ldl_solve(np, ld, pivots, b, hermitian)
        size = np.abs(pivots)
        if not ((size >= 1) & (size <= n)).all():   # sytrs would read outside the matrix
            raise EmberValueError(f"linalg.ldl_solve: pivots must be between 1 and {n} in "
                                  "absolute value, as linalg.ldl_factor returns them; pass "
                                  "its pivots unchanged")
        (sytrs,) = lapack.get_lapack_funcs((_symmetric("trs", ld, hermitian),), dtype=ld.dtype)
        out = np.empty(b.shape, dtype=b.dtype)
        flat = out.reshape(count, *b.shape[-2:])
        for i, (f, p, rhs) in enumerate(zip(ld.reshape(count, n, n), pivots.reshape(count, n),
                                            b.reshape(count, *b.shape[-2:]))):
            flat[i], _ = sytrs(f, p, rhs, lower=1)
        return out

    return {"lu_factor": lu_factor, "lu_solve": lu_solve, "ldl_factor": ldl_factor,
            "ldl_solve": ldl_solve}


def _symmetric(step: str, a, hermitian: bool) -> str:
    """LAPACK's routine name: he* for complex hermitian, sy* otherwise."""
    return ("he" if hermitian and np.iscomplexobj(a) else "sy") + step
