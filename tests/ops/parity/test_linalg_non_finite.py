"""linalg with inf, nan, signed zeros, subnormals and huge entries, against PyTorch on cpu
and opencl:0 (docs/semantics.md, non_finite_linear_algebra).

The inputs are generated: each edge value put in each place of a 2x2 symmetric positive-
definite matrix (a diagonal entry, the lower and the upper off-diagonal entry alone, and
both off-diagonal entries), alone and batched with a finite matrix.  Where PyTorch raises,
ember must raise an ember error; where it answers, ember's answer must agree, except where
docs/semantics.md decides otherwise (LAPACK's answer for a non-finite input is an artefact:
eigvalsh of [[nan, 0], [0, 1]] is [0, -0] in PyTorch), written in `expected` below."""
from __future__ import annotations

import math

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

# NumPy's notes on inf/nan inside LAPACK wrappers (the CPU backend's own are quiet)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BASE = np.array([[2.0, 0.5], [0.5, 2.0]])
PLACES = {"diag": [(0, 0)], "lower": [(1, 0)], "upper": [(0, 1)], "off": [(1, 0), (0, 1)]}


def edges(dtype):
    info = np.finfo(dtype)
    return [math.nan, math.inf, -math.inf, 0.0, -0.0, float(info.smallest_subnormal),
            -float(info.smallest_subnormal), 1e8, -1e8, float(info.max) / 4]


def grid(dtype):
    """(label, matrix) for the finite base and every edge value in every place."""
    out = [("the base matrix", BASE.astype(dtype))]
    for v in edges(dtype):
        for place, where in PLACES.items():
            a = BASE.copy()
            for ij in where:
                a[ij] = v
            out.append((f"{v!r} at {place}", a.astype(dtype)))
    return out


def _ones(T, a):
    if T is torch:
        return torch.ones(a.shape[:-1], dtype=a.dtype)
    return ember.ones(a.shape[:-1], dtype=a.dtype, device=a.device)


# name -> fn(T, A): torch.linalg and ember.linalg spell these alike
FUNCTIONS = {
    "eigvalsh": lambda T, a: T.linalg.eigvalsh(a),
    "eigvalsh_U": lambda T, a: T.linalg.eigvalsh(a, "U"),
    "eigh": lambda T, a: tuple(T.linalg.eigh(a)),
    "svdvals": lambda T, a: T.linalg.svdvals(a),
    "svd": lambda T, a: tuple(T.linalg.svd(a)),
    "matrix_norm_2": lambda T, a: T.linalg.matrix_norm(a, 2),
    "pinv": lambda T, a: T.linalg.pinv(a),
    "inv": lambda T, a: T.linalg.inv(a),
    "inv_ex": lambda T, a: tuple(T.linalg.inv_ex(a)),
    "solve": lambda T, a: T.linalg.solve(a, _ones(T, a)),
    "det": lambda T, a: T.linalg.det(a),
    "slogdet": lambda T, a: tuple(T.linalg.slogdet(a)),
    "cholesky": lambda T, a: T.linalg.cholesky(a),
    "cholesky_upper": lambda T, a: T.linalg.cholesky(a, upper=True),
    "cholesky_ex": lambda T, a: tuple(T.linalg.cholesky_ex(a)),
    "qr": lambda T, a: tuple(T.linalg.qr(a)),
    "matrix_power": lambda T, a: T.linalg.matrix_power(a, 2),
}


def _read(name, a):
    """The entries each function reads: one triangle for eigh/cholesky, else all."""
    if name in ("eigvalsh", "eigh", "cholesky", "cholesky_ex"):
        return np.tril(a)
    if name in ("eigvalsh_U", "cholesky_upper"):
        return np.triu(a)
    return a


def _bad(a):
    """Per matrix of a: whether it holds inf or nan, shape (*,)."""
    return ~np.isfinite(a).all((-2, -1))


def _nan_where(bad, x):
    x = np.array(x, dtype=x.dtype, copy=True)
    x[np.broadcast_to(bad.reshape(bad.shape + (1,) * (x.ndim - bad.ndim)), x.shape)] = np.nan
    return x


def must_raise(name, a):
    """True where docs/semantics.md decides ember raises, False where it decides ember
    answers, None where PyTorch decides (it raises for some dtypes and not for others:
    cholesky of [[inf, .5], [.5, 2]] raises in float32, not in float64)."""
    if name in ("cholesky", "cholesky_upper"):
        return True if _bad(_read(name, a)).any() else None
    if name in ("svd", "svdvals", "pinv", "matrix_norm_2"):
        return bool(np.isnan(a).any())
    if name in ("cholesky_ex", "inv_ex", "eigh", "eigvalsh", "eigvalsh_U", "qr"):
        return False
    return None


def expected(name, a, got_torch):
    """PyTorch's outputs (host arrays) with docs/semantics.md's decisions applied."""
    bad = _bad(_read(name, a))
    out = [o.copy() for o in got_torch]
    if name in ("eigvalsh", "eigvalsh_U", "eigh", "qr"):
        # LAPACK's eigenvalues of a non-finite matrix depend on where the nan is, and
        # Householder leaves finite entries in R: nan
        return [_nan_where(bad, o) for o in out]
    if name in ("svd", "pinv"):
        # infinities (nan raises, as PyTorch): nan factors, where LAPACK's U and Vh are
        # arbitrary and pinv(diag(inf, 1)) would be 0
        return [_nan_where(bad, o) for o in out]
    if name == "slogdet":
        # sign(nan) is nan (sign_of_nan_is_nan; PyTorch gives 0)
        out[0] = np.where(np.isnan(out[1]), np.nan, out[0]).astype(out[0].dtype)
    if name in ("inv", "inv_ex", "solve"):
        # a nan anywhere makes the whole answer nan (PyTorch's LU; NumPy's keeps a row)
        nan = np.isnan(a).any((-2, -1))
        out[0] = _nan_where(nan, out[0])
    if name == "cholesky_ex":
        # info: nonzero where it failed (PyTorch: the order of the failing minor); the
        # failed factor is nan (PyTorch: what LAPACK left)
        failed = (out[1] != 0) | bad
        out = [_nan_where(failed, out[0]), failed.astype(np.int32)]
    return out


def _column_signs(v):
    """+-1 per column: the sign of its entry of largest magnitude (nan columns: 1)."""
    pick = np.nanargmax(np.where(np.isnan(v), -1, np.abs(v)), axis=-2)[..., None, :]
    sign = np.sign(np.take_along_axis(v, pick, axis=-2))
    return np.where((sign == 0) | np.isnan(sign), 1, sign)


def _signs(name, outs):
    """Eigen- and singular vectors are defined up to a sign per vector: fix it."""
    if name == "eigh":
        return [outs[0], outs[1] * _column_signs(outs[1])]
    if name == "qr":
        q, r = outs
        sg = _column_signs(q)
        return [q * sg, r * np.swapaxes(sg, -1, -2)]
    return outs


def _svd_parts(a, outs, tol):
    """svd's U and Vh are not unique where singular values tie (1e8 +- 2 in float32):
    compare S, and check U diag(S) Vh rebuilds A; the nan pattern is compared as is."""
    u, s, vh = outs
    fine = np.isfinite(s).all(-1)
    rebuilt = (u * s[..., None, :]) @ vh
    np.testing.assert_allclose(rebuilt[fine], a[fine], rtol=tol["rtol"] * 10,
                               atol=tol["atol"] * 10 * np.abs(a[fine]).max(initial=1.0))
    return [np.isnan(u), s, np.isnan(vh)]


def _host(x):
    return x.numpy() if isinstance(x, torch.Tensor) else np.asarray(x.detach().numpy())


def _run(fn, T, a):
    out = fn(T, a)
    return [_host(o) for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_non_finite_matches_torch(name, dtype, device):
    """Every matrix of the grid that ember answers goes in one batch (a bad matrix must
    not spoil its neighbours); each one it must refuse is tried alone."""
    fn = FUNCTIONS[name]
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    answered, refused = [], []
    for label, a in grid(dtype):
        try:
            want = _run(fn, torch, torch.tensor(a))
        except RuntimeError:               # torch's LinAlgError
            want = None
        raise_ = must_raise(name, a)
        if raise_ or (raise_ is None and want is None):
            refused.append((label, a))
            continue
        assert want is not None, f"{name} of {label}: PyTorch raised where ember answers"
        answered.append((label, a, want))
    for label, a in refused:
        what = f"linalg {name} of {label} ({dtype}, {device})"
        with pytest.raises(ember.EmberError) as got:
            _run(fn, ember, ember.tensor(a, device=device))
        assert isinstance(got.value, ValueError), f"{what}: {got.value!r}"
        assert "linalg." in str(got.value), (what, str(got.value))
    a = np.stack([a for _, a, _ in answered])
    got = _run(fn, ember, ember.tensor(a, device=device))
    want = [np.stack(parts) for parts in zip(*[w for _, _, w in answered])]
    want = expected(name, a, want)
    labels = [label for label, _, _ in answered]
    what = f"linalg {name} ({dtype}, {device}) of the batch {labels}"
    if name == "cholesky_ex":
        got[1] = (got[1] != 0).astype(np.int32)
    got, want = _signs(name, got), _signs(name, want)
    if name == "svd":
        got, want = _svd_parts(a, got, tol), _svd_parts(a, want, tol)
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (what, k, g.dtype, w.dtype)
        # per matrix, relative to its scale: huge entries make huge (rounded) answers
        finite = np.where(np.isfinite(w), np.abs(w), 0).reshape(len(labels), -1)
        scale = np.maximum(finite.max(-1), 1.0).reshape((-1,) + (1,) * (w.ndim - 1))
        for i, label in enumerate(labels):
            np.testing.assert_allclose(g[i], w[i], rtol=tol["rtol"],
                                       atol=tol["atol"] * float(scale[i].max()), equal_nan=True,
                                       err_msg=f"linalg {name} of {label} ({dtype}, "
                                               f"{device}), output {k}")


def test_cholesky_upper_reads_the_upper_triangle(device):
    """upper=True factors the matrix the upper triangle describes, as PyTorch's (ember read
    the lower one and transposed)."""
    a = np.array([[4.0, 1.0], [100.0, 3.0]])
    got = ember.linalg.cholesky(ember.tensor(a, device=device), upper=True).numpy()
    want = torch.linalg.cholesky(torch.tensor(a), upper=True).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ember.EmberError, match="positive-definite"):
        ember.linalg.cholesky(ember.tensor(a.T.copy(), device=device), upper=True)


def test_cholesky_ex_marks_only_the_bad_matrix(device):
    a = np.stack([BASE, [[math.nan, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, -1.0]]])
    L, info = ember.linalg.cholesky_ex(ember.tensor(a, device=device))
    assert info.numpy().tolist() == [0, 1, 1]
    np.testing.assert_allclose(L.numpy()[0], np.linalg.cholesky(BASE), rtol=1e-12)
    assert np.isnan(L.numpy()[1:]).all()
    with pytest.raises(ember.EmberError, match="inf or nan"):
        ember.linalg.cholesky_ex(ember.tensor(a[1], device=device), check_errors=True)
