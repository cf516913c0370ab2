"""Linear-algebra primitives over the last two dims (batched): inv, solve, det, cholesky, eigh,
svd, qr, geqrf, lu, ldl, eig; and matrix_exp, a declared composite with PyTorch's gradient.

Each kernel takes float arrays of one dtype; every gradient rule is written with ember ops,
so it runs on every device and differentiates again.
"""
from __future__ import annotations

from .. import dtypes as D
from ..dispatch import run
from ..errors import AutogradError, DtypeNotSupportedError, ShapeError
from ..tensor import Tensor
from ._op import declare, rule_fixed, rule_same
from .creation import arange, eye, zeros
from .elementwise import where
from .movement import cat
from .scan import cumprod


def _matrix(name, square: bool):
    """The check of a linalg decomposition: a float tensor, (*, m, n), m == n if square."""
    def check(inputs, attrs):
        a = inputs[0]
        if a._dtype.category < D.FLOAT:
            raise DtypeNotSupportedError(f"linalg.{name}: expected a floating point tensor, "
                                         f"got {a._dtype.name}; call .float() first")
        s = a._data.shape
        if square and (len(s) < 2 or s[-1] != s[-2]):
            raise ShapeError(f"linalg.{name}: expected a square matrix or a batch of them "
                             f"(shape (*, n, n)), got shape {tuple(s)}")
        if len(s) < 2:
            raise ShapeError(f"linalg.{name}: expected a matrix or a batch of them (shape "
                             f"(*, m, n)), got shape {tuple(s)}")
    return check


def _square(name):
    return _matrix(name, True)


def _float_matrix(name):
    return _matrix(name, False)


def _solve_check(inputs, attrs):
    _square("solve")(inputs, attrs)
    a, b = inputs
    if b._data.shape[-2:-1] != a._data.shape[-1:] or a._data.shape[:-2] != \
            b._data.shape[:-2]:
        raise ShapeError(f"linalg.solve: B must have shape (*, {a._data.shape[-1]}, k) with "
                         f"A's batch dims {tuple(a._data.shape[:-2])}, got "
                         f"{tuple(b._data.shape)}")


def _sym(x):
    return (x + x.mT) * 0.5


def _inv_vjp(g, out, a):
    return (-(out.mT @ g @ out.mT),)


def _solve_vjp(g, out, a, b):
    gb = solve_op_run(a.mT, g)
    return -(gb @ out.mT), gb


def _det_vjp(g, out, a):
    if not bool((out == 0).any()):
        return ((g * out)[..., None, None] * inv_op_run(a).mT,)
    # a singular matrix: det's gradient is adj(A)^T, through the SVD as PyTorch's:
    # adj(A) = det(Vh) Vh^T diag(prod of the other singular values) det(U) U^T
    u, vh = run_svd_u(a, False), run_svd_vh(a, False)
    s = run_svdvals(a)
    ones = s[..., :1] * 0 + 1
    before = cumprod(_cat_last([ones, s[..., :-1]]), -1)          # prod of s_j, j < i
    after = cumprod(_cat_last([ones, s.flip(-1)[..., :-1]]), -1).flip(-1)   # j > i
    signs = _run(det_op, u) * _run(det_op, vh)
    adj = (vh.mT * (before * after)[..., None, :]) @ u.mT * signs[..., None, None]
    return (g[..., None, None] * adj.mT,)


def _cat_last(xs):
    return cat(xs, -1)


def _run(op, *inputs, **attrs):
    return run(op, *inputs, **attrs)


def _logabsdet_vjp(g, out, a):
    return (g[..., None, None] * inv_op_run(a).mT,)


def _cholesky_vjp(g, out, a):
    # A = L L^T: gA = L^-T Phi(L^T gL) L^-1, symmetrised (Murray 2016), as PyTorch's
    li = inv_op_run(out)
    return (_sym(li.mT @ _phi(out.mT @ g) @ li),)


def _phi(p):
    """The lower triangle of p with its diagonal halved."""
    n = p._data.shape[-1]
    offsets = arange(n, device=p._device).reshape(1, n) - arange(n, device=p._device).reshape(n, 1)
    return where(offsets < 0, p, where(offsets == 0, p * 0.5, 0.0))


def _eigh_vjp(g, out, a, *, UPLO):
    # eigenvectors V of distinct eigenvalues w: gA = V ((skew(V^T gV)) / E) V^T, E_ij = w_j - w_i
    w = eigvalsh_op_run(a, UPLO)
    n = w._data.shape[-1]
    e = w[..., None, :] - w[..., :, None]
    i = eye(n, dtype=w._dtype, device=w._device)
    vg = out.mT @ g
    mid = (vg - vg.mT) * 0.5 / (e + i) * (1 - i)
    return (out @ mid @ out.mT,)


def _eigvalsh_vjp(g, out, a, *, UPLO):
    v = eigh_op_run(a, UPLO)
    return ((v * g[..., None, :]) @ v.mH,)          # V diag(g) V^H (Hermitian: complex)


def _batch(inputs, attrs):
    return inputs[0]._data.shape[:-2]


inv_op = declare("inv", "linalg", rule_same, sig="a", check=_square("inv"), vjp=_inv_vjp,
                 save_out=True, shape=lambda i, a: i[0]._data.shape,
                 doc="the inverse of each matrix over the last two dims (raises if singular)")
solve_op = declare("solve", "linalg", rule_same, sig="a, b", check=_solve_check,
                   vjp=_solve_vjp, save_out=True, shape=lambda i, a: i[1]._data.shape,
                   doc="X with A X = B, A (*, n, n) and B (*, n, k) of one batch (raises if "
                       "A is singular)")
det_op = declare("det", "linalg", rule_same, sig="a", check=_square("det"), vjp=_det_vjp,
                 save_out=True, shape=_batch, doc="the determinant of each matrix")
logabsdet_op = declare("logabsdet", "linalg", rule_same, sig="a", check=_square("slogdet"),
                       vjp=_logabsdet_vjp, shape=_batch,
                       doc="log |det| of each matrix (LU, no overflow); -inf if singular")
cholesky_op = declare("cholesky", "linalg", rule_same, sig="a", check=_square("cholesky"),
                      vjp=_cholesky_vjp, save_out=True, shape=lambda i, a: i[0]._data.shape,
                      doc="the lower Cholesky factor of each symmetric positive-definite "
                          "matrix (raises if one is not)")
eigh_op = declare("eigh", "linalg", rule_same, sig="a, *, UPLO: str", check=_square("eigh"),
                  vjp=_eigh_vjp, save_out=True, shape=lambda i, a: i[0]._data.shape,
                  doc="the eigenvectors (columns, ascending eigenvalues) of each symmetric "
                      "matrix, read from the UPLO ('L'/'U') triangle")
eigvalsh_op = declare("eigvalsh", "linalg", rule_same, sig="a, *, UPLO: str",
                      check=_square("eigvalsh"), vjp=_eigvalsh_vjp,
                      shape=lambda i, a: i[0]._data.shape[:-1],
                      doc="the ascending eigenvalues of each symmetric matrix (UPLO triangle)")


def inv_op_run(a: Tensor) -> Tensor:
    return run(inv_op, a)


def solve_op_run(a: Tensor, b: Tensor) -> Tensor:
    return run(solve_op, a, b)


def eigh_op_run(a: Tensor, UPLO: str = "L") -> Tensor:
    return run(eigh_op, a, UPLO=UPLO)


def eigvalsh_op_run(a: Tensor, UPLO: str = "L") -> Tensor:
    return run(eigvalsh_op, a, UPLO=UPLO)


# --- SVD: A = U diag(S) Vh; one primitive per factor, so each VJP sees its own gradient -------
# and their sum is PyTorch's svd_backward (it is linear in gU, gS, gVh).  LAPACK is
# deterministic, so the three calls on one input agree on the signs of U and Vh.
def _svd_parts(a):
    k = min(a._data.shape[-2:])
    u = run_svd_u(a, False)
    vh = run_svd_vh(a, False)
    s = run_svdvals(a)
    return k, u, s, vh


def _svd_e(s):
    """S_j^2 - S_i^2 off the diagonal, 1 on it (the diagonal of the skew terms is 0)."""
    s2 = s * s
    i = eye(s._data.shape[-1], dtype=s._dtype, device=s._device)
    return (s2[..., None, :] - s2[..., :, None]) * (1 - i) + i


def _svdvals_vjp(g, out, a):
    _, u, _, vh = _svd_parts(a)
    return ((u * g[..., None, :]) @ vh,)


def _svd_u_vjp(g, out, a, *, full_matrices):
    k, u, s, vh = _svd_parts(a)
    g = g[..., :k]                 # the columns past k (full_matrices) carry no gradient
    uhgu = u.mT @ g
    mid = ((uhgu - uhgu.mT) / _svd_e(s)) * s[..., None, :]
    if a._data.shape[-2] > k:       # the part of gU outside U's span
        gs = g / s[..., None, :]
        return ((u @ mid + gs - u @ (u.mT @ gs)) @ vh,)
    return (u @ mid @ vh,)


def _svd_vh_vjp(g, out, a, *, full_matrices):
    k, u, s, vh = _svd_parts(a)
    g = g[..., :k, :]
    vhgv = vh @ g.mT
    mid = s[..., :, None] * ((vhgv - vhgv.mT) / _svd_e(s))
    if a._data.shape[-1] > k:
        gs = g / s[..., :, None]
        return (u @ (mid @ vh + gs - (gs @ vh.mT) @ vh),)
    return (u @ mid @ vh,)


def _u_shape(inputs, attrs):
    *b, m, n = inputs[0]._data.shape
    return (*b, m, m if attrs["full_matrices"] else min(m, n))


def _vh_shape(inputs, attrs):
    *b, m, n = inputs[0]._data.shape
    return (*b, n if attrs["full_matrices"] else min(m, n), n)


svdvals_op = declare("svdvals", "linalg", rule_same, sig="a", check=_float_matrix("svdvals"),
                     vjp=_svdvals_vjp, shape=lambda i, a: i[0]._data.shape[:-2] +
                     (min(i[0]._data.shape[-2:]),),
                     doc="the singular values of each matrix, descending")
svd_u_op = declare("svd_u", "linalg", rule_same, sig="a, *, full_matrices: bool",
                   check=_float_matrix("svd"), vjp=_svd_u_vjp, shape=_u_shape,
                   doc="U of A = U diag(S) Vh (LAPACK's signs), (*, m, m) with full_matrices "
                       "else (*, m, min(m, n))")
svd_vh_op = declare("svd_vh", "linalg", rule_same, sig="a, *, full_matrices: bool",
                    check=_float_matrix("svd"), vjp=_svd_vh_vjp, shape=_vh_shape,
                    doc="Vh of A = U diag(S) Vh (LAPACK's signs), (*, n, n) with "
                        "full_matrices else (*, min(m, n), n)")


def run_svdvals(a: Tensor) -> Tensor:
    return run(svdvals_op, a)


def run_svd_u(a: Tensor, full_matrices: bool) -> Tensor:
    return run(svd_u_op, a, full_matrices=full_matrices)


def run_svd_vh(a: Tensor, full_matrices: bool) -> Tensor:
    return run(svd_vh_op, a, full_matrices=full_matrices)


# --- QR: A = Q R; one primitive per factor (LAPACK's signs, as PyTorch's) -------------------
def _qr_square(q, r, gq, gr):
    """PyTorch's QR backward for m >= n: gA = (gQ + Q copyltu(triu(gR R^T - Q^T gQ))) R^-T,
    copyltu(X) = X + X^T with X's diagonal once.  gq/gr may be None (no gradient)."""
    m = None
    if gr is not None:
        m = gr @ r.mT
    if gq is not None:
        m = -(q.mT @ gq) if m is None else m - q.mT @ gq
    n = r._data.shape[-1]
    i = eye(n, dtype=r._dtype, device=r._device)
    u = m.triu()
    ga = q @ (u + u.mT - u * i)
    if gq is not None:
        ga = ga + gq
    return ga @ inv_op_run(r).mT


def _qr_check_grad(a, mode):
    m, n = a._data.shape[-2:]
    if mode == "complete" and m > n:
        raise AutogradError("linalg.qr: not differentiable with mode='complete' and more rows "
                            "than columns (Q's extra columns are not determined), as in "
                            "PyTorch; use mode='reduced'")


def _qr_q_vjp(g, out, a, *, mode):
    _qr_check_grad(a, mode)
    m, n = a._data.shape[-2:]
    if m >= n:
        return (_qr_square(out, run_qr_r(a, "reduced"), g, None),)
    # wide: A = [X | Y] with X = Q U square; Y carries no gradient of Q
    gx = _qr_square(out, run_qr_r(a, "reduced")[..., :m], g, None)
    return (_pad_cols(gx, n - m),)


def _qr_r_vjp(g, out, a, *, mode):
    _qr_check_grad(a, mode)
    m, n = a._data.shape[-2:]
    q = run_qr_q(a, "reduced")
    if m >= n:
        return (_qr_square(q, out[..., :n, :], None, g[..., :n, :]),)
    gv = g[..., m:]                         # R = [U | V], V = Q^T Y
    gx = _qr_square(q, out[..., :m], a[..., m:] @ gv.mT, g[..., :m])
    return (cat([gx, q @ gv], -1),)


def _pad_cols(x, k):
    return cat([x, zeros(*x._data.shape[:-1], k, dtype=x._dtype, device=x._device)], -1)


def _qr_shapes(inputs, attrs):
    *b, m, n = inputs[0]._data.shape
    k = m if attrs["mode"] == "complete" else min(m, n)
    return (*b, m, k), (*b, k, n)


qr_q_op = declare("qr_q", "linalg", rule_same, sig="a, *, mode: str", check=_float_matrix("qr"),
                  vjp=_qr_q_vjp, save_out=True, shape=lambda i, a: _qr_shapes(i, a)[0],
                  doc="Q of A = Q R (LAPACK's signs): (*, m, k), k = m with mode 'complete' "
                      "else min(m, n)")
qr_r_op = declare("qr_r", "linalg", rule_same, sig="a, *, mode: str", check=_float_matrix("qr"),
                  vjp=_qr_r_vjp, save_out=True, shape=lambda i, a: _qr_shapes(i, a)[1],
                  doc="R (upper triangular) of A = Q R: (*, k, n), k as for qr_q")


def run_qr_q(a: Tensor, mode: str) -> Tensor:
    return run(qr_q_op, a, mode=mode)


def run_qr_r(a: Tensor, mode: str) -> Tensor:
    return run(qr_r_op, a, mode=mode)


# --- the pseudo-inverse: forward through the SVD (eigh for hermitian=True), PyTorch's
# analytic gradient (its derivative for a constant rank, FunctionsManual's pinv_backward)
# rather than the SVD's, which is nan or off at repeated or truncated singular values
def _pinv_forward(a, *, atol, rtol, hermitian):
    if hermitian:
        w, v = eigvalsh_op_run(a, "L"), eigh_op_run(a, "L")
        size = w.abs()
        limit = size.amax(-1, keepdim=True) * rtol
        limit = where(limit > atol, limit, atol)
        inverse = where(size > limit, 1.0 / where(size > limit, w, 1.0), 0.0)
        return (v * inverse[..., None, :]) @ v.mH
    u, s, vh = run_svd_u(a, False), run_svdvals(a), run_svd_vh(a, False)
    limit = s[..., :1] * rtol
    limit = where(limit > atol, limit, atol)
    keep = s > limit
    inverse = where(keep, 1.0 / where(keep, s, 1.0), 0.0)
    return (vh.mH * inverse[..., None, :]) @ u.mH


def _pinv_vjp(g, out, a, *, atol, rtol, hermitian):
    m, n = a._data.shape[-2:]
    p, ph, gh = out, out.mH, g.mH
    if m <= n:
        k = gh @ p
        kph = k @ ph
        return (-(p @ k).mH + kph - (a @ p) @ kph + (ph @ p) @ (gh - k @ a),)
    k = p @ gh
    phk = ph @ k
    return (-(k @ p).mH + (gh - a @ k) @ p @ ph + phk - phk @ p @ a,)


pinv_op = declare("pinv", "composite", rule_same, sig="a, *, atol: float, rtol: float, "
                  "hermitian: bool", check=_float_matrix("pinv"), decompose=_pinv_forward,
                  opaque=True, vjp=_pinv_vjp, save_out=True,
                  shape=lambda i, a: i[0]._data.shape[:-2] + i[0]._data.shape[-2:][::-1],
                  doc="the pseudo-inverse of each matrix: singular values (|eigenvalues| "
                      "with hermitian, lower triangle) at or below max(atol, rtol * largest) "
                      "count as zero")


def run_pinv(a: Tensor, atol: float, rtol: float, hermitian: bool) -> Tensor:
    return run(pinv_op, a, atol=atol, rtol=rtol, hermitian=hermitian)


# --- LU with partial pivoting: A = P L U, L unit lower (m, k), U upper (k, n), k = min(m, n),
# packed in one (m, n) matrix as LAPACK's getrf; one primitive gives it with its pivots and
# info in one more row and column (one elimination for all three)
def lu_split(packed):
    """(LU, pivots, info) of lu_factor_op's (*, m + 1, n + 1) output: [:m, :n], and the
    int32 pivots and info of row m (not differentiable)."""
    m, n = packed._data.shape[-2] - 1, packed._data.shape[-1] - 1
    last = packed.detach()[..., m, :]
    last = (last.real if last._dtype.is_complex else last).to(D.int32)
    return packed[..., :m, :n], last[..., :min(m, n)], last[..., n]


def lu_parts(lu, order):
    """(P, L, U) of a packed LU and its row order (A[order] = L U, so A = P L U)."""
    m, n = lu._data.shape[-2:]
    k = min(m, n)
    # one row and one column index serve all three (tril and triu build their own each)
    rows = arange(m, device=lu._device).reshape(m, 1)
    cols = arange(n, device=lu._device)
    p = (rows == order.unsqueeze(-2)).to(lu._dtype)
    front = cols[:k]
    lower = where(rows > front, lu[..., :k], (rows == front).to(lu._dtype))
    upper = where(rows[:k] <= cols, lu[..., :k, :], 0.0)
    return p, lower, upper


def _solve_right(a, b):
    """X with X A = B."""
    return solve_op_run(a.mT, b.mT).mT


def _lu_factor_vjp(g, out, a):
    # PyTorch's linalg_lu_backward (FunctionsManual.cpp) with gL, gU the parts of the
    # packed gradient each factor owns (the rest of each block is masked away); written as
    # the real formula, with transposes (autograd conjugates around it for complex input)
    lu, pivots, _ = lu_split(out)
    g = g[..., :-1, :-1]            # the pivots and info have no gradient
    m, n = lu._data.shape[-2:]
    k = min(m, n)
    p, lower, upper = lu_parts(lu, run(lu_permutation_op, pivots, m=m))
    gl, gu = g[..., :k], g[..., :k, :]
    if m == n:
        x = (lower.mT @ gl).tril(-1) + (gu @ upper.mT).triu()
        return (p @ solve_op_run(lower.mT, _solve_right(upper.mT, x)),)
    if m < n:     # wide: A = P L [U1 | U2]
        u1 = upper[..., :k]
        x = _solve_right(u1.mT, (lower.mT @ gl - gu.triu() @ upper.mT).tril(-1))
        x = cat([x + gu[..., :k].triu(), gu[..., k:]], -1)
        return (p @ solve_op_run(lower.mT, x),)
    l1 = lower[..., :k, :]       # tall: A = P [L1; L2] U
    x = solve_op_run(l1.mT, (gu @ upper.mT - lower.mT @ gl.tril(-1)).triu())
    x = cat([x + gl[..., :k, :].tril(-1), gl[..., k:, :]], -2)
    return (p @ _solve_right(upper.mT, x),)


def _permutation_check(inputs, attrs):
    pivots = inputs[0]
    if pivots._dtype is not D.int32:
        raise DtypeNotSupportedError(f"lu_unpack: pivots must be int32 (as linalg.lu_factor "
                                     f"returns them), got {pivots._dtype.name}; pass "
                                     f"lu_factor's pivots, or call .int() on them")


def run_lu_factor(a):
    """(LU, pivots, info) of a by lu_factor_op; half precision is factored in float32 (the
    packed pivots and info are exact in a float16 or bfloat16 row only up to 2048 or 256)
    and its LU rounded back."""
    if a._dtype in (D.float16, D.bfloat16):
        lu, pivots, info = run_lu_factor(a.to(D.float32))
        return lu.to(a._dtype), pivots, info
    return lu_split(run(lu_factor_op, a))


def _lu_shape(inputs, attrs):
    *b, m, n = inputs[0]._data.shape
    return (*b, m + 1, n + 1)


lu_factor_op = declare("lu_factor", "linalg", rule_same, sig="a", check=_float_matrix("lu"),
                       vjp=_lu_factor_vjp, save_out=True, shape=_lu_shape,
                       doc="L and U of A = P L U packed in [:m, :n] (L's unit diagonal "
                           "left out), LAPACK getrf's partial pivoting; row m holds its "
                           "1-based pivots (row j was swapped with row pivots[j] - 1) in "
                           "[:min(m, n)] and getrf's info in [n], (*, m + 1, n + 1)")
lu_permutation_op = declare("lu_permutation", "linalg", rule_fixed(D.int64),
                            sig="pivots, *, m: int", check=_permutation_check,
                            shape=lambda i, a: i[0]._data.shape[:-1] + (a["m"],),
                            doc="the row order (*, m) lu_factor's pivots make, applied in "
                                "turn: A[order] = L U; raises for a pivot outside 1..m")


def _lu_solve_forward(lu, pivots, b, *, adjoint):
    n = lu._data.shape[-1]
    p, lower, upper = lu_parts(lu, run(lu_permutation_op, pivots, m=n))
    if adjoint:                     # A^H = U^H L^H P^T
        return p @ solve_op_run(lower.mH, solve_op_run(upper.mH, b))
    return solve_op_run(upper, solve_op_run(lower, p.mT @ b))


# a backend's kernel is LAPACK getrs (or its two triangular solves); while a graph is
# recorded the decomposition differentiates itself (torch's rule is the same algebra)
lu_solve_op = declare("lu_solve", "composite", rule_same,
                      sig="lu, pivots, b, *, adjoint: bool", promote=(0, 2),
                      decompose=_lu_solve_forward, shape=lambda i, a: i[2]._data.shape,
                      doc="X with A X = B (A^H X = B with adjoint) for A = P L U given by "
                          "lu_factor's LU (*, n, n) and int32 pivots (*, n), B (*, n, k), "
                          "batch dims alike")

# --- the matrix exponential: scaling and squaring over the [13/13] Pade approximant
# (Higham 2005, "The scaling and squaring method for the matrix exponential revisited")
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152        # the 1-norm up to which [13/13] needs no scaling
_LN2 = 0.6931471805599453


def _wider(a):
    """The double-precision dtype of a single-precision tensor where its device has one
    (else None): matrix_exp's squarings multiply float32's rounding error by the norm, so
    torch's own float32 result is about 1e-6 off; in double precision ember's is exact."""
    wide = {D.float32: D.float64, D.complex64: D.complex128}.get(a._dtype)
    device = a._device
    if wide is None or (device.type != "cpu" and wide.name not in
                        device.backend.capabilities(device.index).dtypes):
        return None
    return wide


def _matrix_exp_forward(a):
    wide = _wider(a)
    if wide is not None:
        return _matrix_exp_forward(a.to(wide)).to(a._dtype)
    n = a._data.shape[-1]
    # squarings per matrix: 2^-s A within the approximant's norm (nan and inf: none)
    steps = ((a.abs().sum(-2).amax(-1) / _THETA13).log() / _LN2).ceil()
    steps = where(steps.isfinite() & (steps > 0), steps, 0.0)
    most = int(steps.amax()) if steps.numel() else 0
    x = a * (-steps * _LN2).exp()[..., None, None] if most else a
    i = eye(n, dtype=a._dtype, device=a._device)
    b = _PADE13
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 +
             b[3] * x2 + b[1] * i)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + \
        b[0] * i
    result = solve_op_run(v - u, v + u)
    for step in range(most):        # each matrix squared back as often as it was scaled
        result = where((steps > step)[..., None, None], result @ result, result)
    return result


def _matrix_exp_vjp(g, out, a):
    # PyTorch's: the upper right block of exp([[A^T, G], [0, A^T]]) (Najfeld and Havel)
    n = a._data.shape[-1]
    top = cat([a.mT, g], -1)
    bottom = cat([zeros(*a._data.shape, dtype=a._dtype, device=a._device), a.mT], -1)
    return (run(matrix_exp_op, cat([top, bottom], -2))[..., :n, n:],)


matrix_exp_op = declare("matrix_exp", "composite", rule_same, sig="a",
                        check=_square("matrix_exp"), decompose=_matrix_exp_forward,
                        opaque=True, vjp=_matrix_exp_vjp, shape=lambda i, a: i[0]._data.shape,
                        doc="exp(A) of each square matrix (scaling and squaring, [13/13] "
                            "Pade); its gradient is exp of a block matrix, as PyTorch's")


# --- the general eigenproblem A V = V diag(L): complex results, as PyTorch's (LAPACK geev:
# each eigenvector of unit norm, its largest component real).  The rules are written as
# real formulas, conjugated around by autograd (node._conjugated); the one term that is not
# holomorphic (the real part fixing the eigenvectors' phase) carries its own conj().
def _complex(inputs, attrs):
    d = inputs[0]._dtype
    return d, d.to_complex()


def rule_complex(op):
    """A float or complex matrix in, its complex dtype out (eig, eigvals)."""
    return _complex


def _eig_parts(a):
    return run(eig_op, a), run(eigvals_op, a)


def _eigvals_vjp(g, out, a):
    v = run(eig_op, a)
    # dL = diag(V^-1 dA V): gA = V^-T diag(g) V^T
    return (solve_op_run(v.mT, g[..., :, None] * v.mT),)


def _eig_vjp(g, out, a):
    # torch's linalg_eig_backward for gV: V^-H ((V^H gV - V^H V Re diag(V^H gV)) / conj(E))
    # V^H, E_ij = L_j - L_i, written for conj(gV) (autograd conjugates in and out)
    v, w = _eig_parts(a)
    n = w._data.shape[-1]
    i = eye(n, dtype=w._dtype, device=w._device)
    vg = v.mT @ g
    diagonal = (vg * i).sum(-1).real
    vv = v.mT @ v.conj()
    e = w[..., None, :] - w[..., :, None] + i
    mid = (vg - vv * diagonal[..., None, :]) / e * (1 - i)
    return (solve_op_run(v.mT, mid @ v.mT),)


def _eig_shape(inputs, attrs):
    return inputs[0]._data.shape


eig_op = declare("eig", "linalg", rule_complex, sig="a", check=_square("eig"), vjp=_eig_vjp,
                 shape=_eig_shape,
                 doc="the eigenvectors (columns, unit norm, largest component real, as "
                     "LAPACK geev) of each square matrix, complex")
eigvals_op = declare("eigvals", "linalg", rule_complex, sig="a", check=_square("eigvals"),
                     vjp=_eigvals_vjp, shape=lambda i, a: i[0]._data.shape[:-1],
                     doc="the eigenvalues (LAPACK geev's order) of each square matrix, "
                         "complex")


# --- LAPACK's packed Householder QR (torch.geqrf: not differentiable there either)
def _tau_shape(inputs, attrs):
    *b, m, n = inputs[0]._data.shape
    return (*b, min(m, n))


geqrf_op = declare("geqrf", "linalg", rule_same, sig="a", check=_float_matrix("geqrf"),
                   shape=lambda i, a: i[0]._data.shape,
                   doc="LAPACK geqrf's QR: R on and above the diagonal, the Householder "
                       "vectors (unit first entry left out) below it")
geqrf_tau_op = declare("geqrf_tau", "linalg", rule_same, sig="a", check=_float_matrix("geqrf"),
                       shape=_tau_shape,
                       doc="geqrf's Householder scalars tau, (*, min(m, n)): H_i = I - tau_i "
                           "v_i v_i^H")


# --- Bunch-Kaufman L D L^T of symmetric matrices (LAPACK sytrf; torch: not differentiable);
# one primitive gives the factors with their pivots and info (one elimination)
def ldl_split(packed):
    """(LD, pivots, info) of ldl_factor_op's (*, n + 1, n + 1) output: [:n, :n], and the
    int32 pivots and info of row n."""
    n = packed._data.shape[-1] - 1
    last = packed[..., n, :]
    last = (last.real if last._dtype.is_complex else last).to(D.int32)
    return packed[..., :n, :n], last[..., :n], last[..., n]


def run_ldl_factor(a, hermitian: bool):
    """(LD, pivots, info) of a by ldl_factor_op; half precision is factored in float32
    (as run_lu_factor) and its LD rounded back."""
    if a._dtype in (D.float16, D.bfloat16):
        ld, pivots, info = run_ldl_factor(a.to(D.float32), hermitian)
        return ld.to(a._dtype), pivots, info
    return ldl_split(run(ldl_factor_op, a, hermitian=hermitian))


def _ldl_shape(inputs, attrs):
    *b, n, _ = inputs[0]._data.shape
    return (*b, n + 1, n + 1)


ldl_factor_op = declare("ldl_factor", "linalg", rule_same, sig="a, *, hermitian: bool",
                        check=_square("ldl_factor"), shape=_ldl_shape,
                        doc="LAPACK sytrf's L D L^T of the lower triangle, packed in [:n, :n]: "
                            "L below the diagonal, D's 1x1 and 2x2 blocks on and beside it; "
                            "row n holds its 1-based pivots (k swapped with pivots[k] - 1 for "
                            "a 1x1 block, both rows of a 2x2 block holding -(row + 1)) and "
                            "sytrf's info in [n], (*, n + 1, n + 1)")
ldl_solve_op = declare("ldl_solve", "linalg", rule_same, sig="ld, pivots, b, *, hermitian: "
                       "bool", promote=(0, 2), shape=lambda i, a: i[2]._data.shape,
                       doc="LAPACK sytrs: X with A X = B for A given by ldl_factor and "
                           "ldl_pivots (batch dims alike)")
