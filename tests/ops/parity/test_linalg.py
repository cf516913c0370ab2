"""linalg against PyTorch on cpu and opencl:0: the norms, and the decompositions and
solvers: forward values, gradients with a random upstream gradient, batching, torch's
aliases, and clear errors."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from parity_helpers import Rows, check_parity, seeded

torch = pytest.importorskip("torch")


ROWS = Rows()
case = ROWS.case

# norms
case("norm", lambda T, a: (a.norm(), T.norm(a, 2, 1), a.norm(1, 0, keepdim=True),
                           a.norm(float("inf"), 1), T.norm(a, p="fro"), a.norm(3, 1),
                           a.norm(dim=(0, 1))), ("f", (3, 4)))
case("norm:zero_vector", lambda T, a: (a * 0).norm(2, 1), ("f", (3, 4)))
case("linalg_norm", lambda T, a: (T.linalg.norm(a), T.linalg.norm(a, dim=1),
                                  T.linalg.norm(a, "fro"), T.linalg.norm(a, float("inf")),
                                  T.linalg.norm(a, 1), T.linalg.vector_norm(a, 1, (0, 1)),
                                  T.linalg.matrix_norm(a)), ("f", (3, 4)))


@pytest.mark.parametrize("row", ROWS)
def test_parity(row):
    # on the CPU only: each op of these rows is checked on opencl:0 by its conformance row
    # (tests/ops/test_conformance.py); what PyTorch adds is the same on every device
    check_parity(row, "cpu")


def _general(rng, shape):
    n = shape[-1]
    return rng.standard_normal(shape) + 3 * np.eye(n)      # well-conditioned


def _spd(rng, shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _symmetric(rng, shape):
    a = rng.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2)          # distinct eigenvalues (almost surely)


def _compare(name, device, fe, ft, arrays, *, rtol=1e-7, atol=1e-9):
    """fe(ember tensors) and ft(torch tensors): outputs (one or a tuple) and the gradients
    of sum(out * random upstream) over every output."""
    rng = seeded(name + ":upstream")
    te = [ember.tensor(a, device=device, requires_grad=True) for a in arrays]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    oe, ot = fe(*te), ft(*tt)
    oe = oe if isinstance(oe, tuple) else (oe,)
    ot = ot if isinstance(ot, tuple) else (ot,)
    loss_e, loss_t = 0, 0
    for e, t in zip(oe, ot):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"{name} forward")
        if t.requires_grad:
            up = rng.standard_normal(tuple(t.shape))
            loss_e = loss_e + (e * ember.tensor(up, device=device)).sum()
            loss_t = loss_t + (t * torch.tensor(up)).sum()
    loss_e.backward()
    loss_t.backward()
    for i, (e, t) in enumerate(zip(te, tt)):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=rtol * 10,
                                   atol=atol * 10, err_msg=f"{name} grad {i}")
    return oe


L, TL = ember.linalg, torch.linalg


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3, 3)])
def test_inv_det_slogdet(device, shape):
    a = _general(seeded("inv"), shape)
    _compare("inv", device, L.inv, TL.inv, [a])
    _compare("det", device, L.det, TL.det, [a])
    out = _compare("slogdet", device, lambda x: tuple(L.slogdet(x)),
                   lambda x: tuple(TL.slogdet(x)), [a])
    assert L.slogdet(ember.tensor(a, device=device))._fields == ("sign", "logabsdet")
    assert out[0].shape == shape[:-2]
    _compare("logdet", device, ember.logdet, torch.logdet, [_spd(seeded("logdet"), shape)])


def test_det_sign_and_logdet_of_a_negative_det(device):
    a = np.diag([2.0, -3.0, 1.5])
    s, la = L.slogdet(ember.tensor(a, device=device))
    assert float(s) == -1.0 and np.isclose(float(la), np.log(9.0))
    assert np.isnan(float(ember.logdet(ember.tensor(a, device=device))))


@pytest.mark.parametrize("b_shape", [(4,), (4, 2), (3, 4), (3, 4, 2), (2, 1, 4, 5)])
def test_solve_vectors_matrices_batches(device, b_shape):
    rng = seeded(f"solve{b_shape}")
    a = _general(rng, (3, 4, 4) if len(b_shape) != 4 else (3, 4, 4))
    b = rng.standard_normal(b_shape)
    _compare(f"solve{b_shape}", device, L.solve, TL.solve, [a, b])


def test_solve_left_false(device):
    rng = seeded("solve_right")
    a, b = _general(rng, (2, 3, 3)), rng.standard_normal((2, 5, 3))
    _compare("solve_right", device, lambda x, y: L.solve(x, y, left=False),
             lambda x, y: TL.solve(x, y, left=False), [a, b])


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(device, upper):
    a = _spd(seeded("cholesky"), (2, 4, 4))
    # the gradient of a symmetric input: compare through a symmetric parametrisation
    _compare("cholesky", device, lambda x: L.cholesky((x + x.mT) / 2, upper=upper),
             lambda x: TL.cholesky((x + x.mT) / 2, upper=upper), [a])
    _compare("torch.cholesky", device, lambda x: ember.cholesky((x + x.mT) / 2, upper),
             lambda x: torch.cholesky((x + x.mT) / 2, upper), [a])


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_and_eigvalsh(device, uplo):
    a = _symmetric(seeded("eigh"), (2, 4, 4))

    def fix_sign(v):          # eigenvectors are defined up to sign: compare a fixed one
        return v * v[..., :1, :].sign()
    _compare("eigh", device,
             lambda x: (L.eigh(x, uplo)[0], fix_sign(L.eigh(x, UPLO=uplo).eigenvectors)),
             lambda x: (TL.eigh(x, uplo)[0], fix_sign(TL.eigh(x, UPLO=uplo).eigenvectors)),
             [a])
    _compare("eigvalsh", device, lambda x: L.eigvalsh(x, uplo), lambda x: TL.eigvalsh(x, uplo),
             [a])
    assert L.eigh(ember.tensor(a, device=device))._fields == ("eigenvalues", "eigenvectors")


@pytest.mark.parametrize("n", [0, 1, 2, 5, -3])
def test_matrix_power(device, n):
    a = _general(seeded("matrix_power"), (2, 3, 3)) / 3
    _compare(f"matrix_power{n}", device, lambda x: L.matrix_power(x, n),
             lambda x: TL.matrix_power(x, n), [a])
    _compare(f"Tensor.matrix_power{n}", device, lambda x: x.matrix_power(n),
             lambda x: x.matrix_power(n), [a])


def test_multi_dot_and_chain_matmul(device):
    rng = seeded("multi_dot")
    arrays = [rng.standard_normal(s) for s in [(3,), (3, 7), (7, 2), (2, 5), (5,)]]
    _compare("multi_dot", device, lambda *xs: L.multi_dot(list(xs)),
             lambda *xs: TL.multi_dot(list(xs)), arrays)
    mats = [rng.standard_normal(s) for s in [(2, 6), (6, 3), (3, 4)]]
    _compare("chain_matmul", device, ember.chain_matmul,
             lambda *xs: torch.linalg.multi_dot(list(xs)), mats)


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
def test_aliases_and_methods(device):
    a = _general(seeded("aliases"), (3, 3))
    _compare("inverse", device, ember.inverse, torch.inverse, [a])
    _compare("Tensor.inverse", device, lambda x: x.inverse(), lambda x: x.inverse(), [a])
    _compare("Tensor.det", device, lambda x: x.det(), lambda x: x.det(), [a])
    _compare("Tensor.slogdet", device, lambda x: tuple(x.slogdet()),
             lambda x: tuple(x.slogdet()), [a])
    s = _spd(seeded("aliases2"), (3, 3))
    _compare("Tensor.logdet", device, lambda x: x.logdet(), lambda x: x.logdet(), [s])
    _compare("Tensor.cholesky", device, lambda x: ((x + x.mT) / 2).cholesky(),
             lambda x: ((x + x.mT) / 2).cholesky(), [s])
    assert ember.det is ember.linalg.det


def test_float32(device):
    a = _general(seeded("float32"), (2, 4, 4)).astype(np.float32)
    x = L.inv(ember.tensor(a, device=device))
    assert x.dtype == ember.float32
    np.testing.assert_allclose(x.numpy(), np.linalg.inv(a), rtol=1e-4, atol=1e-5)


def test_singular_and_bad_inputs_raise_clearly(device):
    singular = ember.tensor([[1.0, 2.0], [2.0, 4.0]], device=device)
    with pytest.raises(ember.EmberError, match="linalg.inv: the input is singular"):
        L.inv(singular)
    with pytest.raises(ember.EmberError, match="linalg.solve: the input is singular"):
        L.solve(singular, ember.ones(2, device=device))
    with pytest.raises(ember.EmberError, match="linalg.cholesky: .*positive-definite"):
        L.cholesky(ember.tensor([[1.0, 2.0], [2.0, 1.0]], device=device))
    assert float(L.det(singular)) == 0.0
    with pytest.raises(ember.EmberError, match=r"linalg.inv: expected a square matrix"):
        L.inv(ember.ones(2, 3, device=device))
    with pytest.raises(ember.EmberError, match="linalg.det: expected a floating point"):
        L.det(ember.ones(2, 2, dtype=ember.int64, device=device))
    with pytest.raises(ember.EmberError, match=r"linalg.solve: B must be"):
        L.solve(ember.eye(3, device=device), ember.ones(2, device=device))
    with pytest.raises(ember.EmberError, match="UPLO"):
        L.eigh(ember.eye(3, device=device), "X")


def test_kernels_use_only_the_array_api_linalg_extension():
    """The same table serves CuPy: run it under array_api_strict (the standard only)."""
    xp = pytest.importorskip("array_api_strict")
    from ember.backends.array_api import linalg_kernels
    k = linalg_kernels(xp)
    s = _spd(seeded("strict"), (2, 3, 3))
    a = xp.asarray(s)
    np.testing.assert_allclose(np.asarray(k["inv"](a)), np.linalg.inv(s), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(k["cholesky"](a)), np.linalg.cholesky(s), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(k["logabsdet"](a)), np.linalg.slogdet(s)[1])
    upper_only = xp.asarray(np.triu(s))        # eigh reads only the UPLO triangle
    np.testing.assert_allclose(np.asarray(k["eigvalsh"](upper_only, UPLO="U")),
                               np.linalg.eigvalsh(s), rtol=1e-10)
    with pytest.raises(ember.EmberError, match="singular"):
        k["inv"](xp.asarray(np.ones((2, 2))))


def _gauge(u, vh, k):
    """Singular vectors are defined up to a sign per pair: make each column of U's first k
    have a positive first entry, flipping Vh's row with it (the sign itself is constant)."""
    sign = u[..., :1, :k].sign().detach()
    return u[..., :k] * sign, vh[..., :k, :] * sign.mT


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_svd(device, shape, full):
    k = min(shape[-2:])

    def run(lib, x):
        U, S, Vh = lib.linalg.svd(x, full_matrices=full)
        assert tuple(U.shape[-2:]) == (shape[-2], shape[-2] if full else k)
        assert tuple(Vh.shape[-2:]) == (shape[-1] if full else k, shape[-1])
        return (S, *_gauge(U, Vh, k))
    a = seeded(f"svd{shape}").standard_normal(shape)
    _compare(f"svd{shape}{full}", device, lambda x: run(ember, x), lambda x: run(torch, x), [a])
    _compare("svdvals", device, L.svdvals, TL.svdvals, [a])
    assert L.svd(ember.tensor(a, device=device))._fields == ("U", "S", "Vh")


def test_torch_svd_and_pinverse(device):
    a = seeded("torch.svd").standard_normal((2, 5, 3))

    def run(x):
        U, S, V = x.svd()
        return (S, *_gauge(U, V.mT, 3))
    _compare("Tensor.svd", device, run, run, [a])
    _compare("pinverse", device, ember.pinverse, torch.pinverse, [a])
    _compare("Tensor.pinverse", device, lambda x: x.pinverse(), lambda x: x.pinverse(), [a])


def test_pinv_rank_deficient_and_tolerances(device):
    a = seeded("pinv").standard_normal((4, 3))
    a[:, 2] = a[:, 0]                                # rank 2: the third value is ~0
    for kw in ({}, dict(rtol=0.5), dict(atol=1.0), dict(hermitian=False)):
        got = L.pinv(ember.tensor(a, device=device), **kw).numpy()
        np.testing.assert_allclose(got, TL.pinv(torch.tensor(a), **kw).numpy(), atol=1e-9,
                                   err_msg=str(kw))
    _compare("pinv", device, L.pinv, TL.pinv, [seeded("pinv2").standard_normal((3, 4))])


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_matrix_norms_through_the_svd(device, ord):
    a = seeded(f"norm{ord}").standard_normal((2, 3, 4))
    _compare(f"matrix_norm{ord}", device, lambda x: L.matrix_norm(x, ord),
             lambda x: TL.matrix_norm(x, ord), [a])
    _compare(f"matrix_norm{ord}dims", device,
             lambda x: L.matrix_norm(x, ord, dim=(0, 2), keepdim=True),
             lambda x: TL.matrix_norm(x, ord, dim=(0, 2), keepdim=True), [a])
    _compare("norm(nuc)", device, lambda x: ember.norm(x[0], "nuc"),
             lambda x: torch.norm(x[0], "nuc"), [a])


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr(device, shape, mode):
    a = seeded(f"qr{shape}").standard_normal(shape)
    if mode == "complete" and shape[-2] > shape[-1]:        # torch refuses this gradient too
        q, r = L.qr(ember.tensor(a, device=device), mode)
        np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
        x = ember.tensor(a, device=device, requires_grad=True)
        with pytest.raises(ember.EmberError, match="mode='complete'"):
            L.qr(x, mode).Q.sum().backward()
        return
    _compare(f"qr{shape}{mode}", device, lambda x: tuple(L.qr(x, mode)),
             lambda x: tuple(TL.qr(x, mode)), [a])
    assert L.qr(ember.tensor(a, device=device))._fields == ("Q", "R")


@pytest.mark.filterwarnings("ignore:torch.qr is deprecated")
def test_qr_r_mode_and_torch_qr(device):
    a = seeded("qr_r").standard_normal((4, 3))
    q, r = L.qr(ember.tensor(a, device=device), mode="r")
    assert q.numel() == 0
    np.testing.assert_allclose(r.numpy(), TL.qr(torch.tensor(a), mode="r").R.numpy(),
                               atol=1e-12)
    _compare("Tensor.qr", device, lambda x: tuple(x.qr()), lambda x: tuple(x.qr()), [a])
    _compare("torch.qr(some=False)", device, lambda x: ember.qr(x[:3], some=False).R,
             lambda x: torch.qr(x[:3], some=False).R, [a])
    with pytest.raises(ember.EmberError, match="mode must be"):
        L.qr(ember.tensor(a, device=device), mode="full")


def test_slogdet_sign_where_det_underflows(device):
    a = np.diag([1e-200, -1e-200, 1e-200, 1.0])        # det 1e-600: 0 in float64
    s, la = L.slogdet(ember.tensor(a, device=device))
    ts, tla = TL.slogdet(torch.tensor(a))
    assert float(s) == float(ts) == -1.0
    np.testing.assert_allclose(float(la), float(tla))


def test_ex_variants_report_failures_in_info(device):
    a = np.stack([np.eye(2) * 2, [[1.0, 2.0], [2.0, 4.0]]])       # the second is singular
    x, info = L.inv_ex(ember.tensor(a, device=device))
    tx, tinfo = TL.inv_ex(torch.tensor(a))
    np.testing.assert_allclose(x.numpy()[0], tx.numpy()[0])
    assert np.isnan(x.numpy()[1]).all()
    assert info.dtype == ember.int32 and list(info.numpy() != 0) == list(tinfo.numpy() != 0)
    with pytest.raises(ember.EmberError, match="singular"):
        L.inv_ex(ember.tensor(a, device=device), check_errors=True)
    s = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]])         # the second is indefinite
    f, info = L.cholesky_ex(ember.tensor(s, device=device))
    tf, tinfo = TL.cholesky_ex(torch.tensor(s))
    np.testing.assert_allclose(f.numpy()[0], tf.numpy()[0])
    assert np.isnan(f.numpy()[1]).all() and list(info.numpy() != 0) == list(tinfo.numpy() != 0)
    good = _spd(seeded("cholesky_ex"), (2, 3, 3))
    f, info = L.cholesky_ex(ember.tensor(good, device=device), upper=True)
    np.testing.assert_allclose(f.numpy(), TL.cholesky_ex(torch.tensor(good), upper=True).L)
    assert not info.numpy().any()


def test_det_gradient_of_singular_matrices(device):
    """adj(A)^T through the SVD, checked against finite differences (torch 2.x's CPU
    kernel gives 0 for these rank n-1 matrices, which finite differences contradict)."""
    a = np.array([[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],
                  [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 2.0]]])
    up = seeded("det_singular").standard_normal(2)
    x = ember.tensor(a, device=device, requires_grad=True)
    (L.det(x) * ember.tensor(up, device=device)).sum().backward()
    numeric, eps = np.zeros_like(a), 1e-6
    for idx in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[idx] += eps
        lo[idx] -= eps
        numeric[idx] = ((np.linalg.det(hi) - np.linalg.det(lo)) * up).sum() / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), numeric, atol=1e-7)
