"""linalg.matrix_exp and linalg.cond against PyTorch on cpu and opencl:0: what torch's
OpInfo samples miss (every p of cond, singular and non-square matrices, a batch whose
matrices need different scalings, complex input, double precision, the errors)."""
from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from parity_helpers import seeded

torch = pytest.importorskip("torch")

L, TL = ember.linalg, torch.linalg
NORMS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


@pytest.mark.parametrize("p", NORMS, ids=str)
def test_cond_every_p_with_gradient(device, p):
    a = seeded(f"cond{p}").standard_normal((2, 4, 4))
    e = ember.tensor(a, device=device, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    ce, ct = L.cond(e, p), TL.cond(t, p)
    np.testing.assert_allclose(ce.detach().numpy(), ct.detach().numpy(), rtol=1e-10)
    if p in (None, 2, -2, "nuc"):
        (ge,) = ember.autograd.grad(ce.sum(), e)
        (gt,) = torch.autograd.grad(ct.sum(), t)
        np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-8, atol=1e-10)
    else:   # torch 2.13's backward fails here (inv_ex's output modified in place)
        assert ember.autograd.gradcheck(lambda x: L.cond(x, p), (e,))


@pytest.mark.parametrize("p", NORMS, ids=str)
def test_cond_of_a_singular_matrix(device, p):
    a = np.stack([np.outer([1.0, 2.0, 4.0], [1.0, -1.0, 2.0]), np.eye(3) * 2])
    got = L.cond(ember.tensor(a, device=device), p).numpy()
    want = TL.cond(torch.tensor(a), p).numpy()
    if p == "nuc":      # torch's: a rounding-dependent huge number (6.8e47), not inf
        assert np.isinf(got[0]) and want[0] > 1e30
    else:
        assert np.isinf(got[0]) == np.isinf(want[0]) and got[0] * want[0] >= 0
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_cond_non_square_and_errors(device):
    a = seeded("cond_wide").standard_normal((3, 5))
    for p in (None, 2, -2):
        np.testing.assert_allclose(L.cond(ember.tensor(a, device=device), p).numpy(),
                                   TL.cond(torch.tensor(a), p).numpy(), rtol=1e-10)
    with pytest.raises(ember.EmberError, match="square"):
        L.cond(ember.tensor(a, device=device), 1)
    with pytest.raises(ember.EmberError, match="expected p in"):
        L.cond(ember.tensor(a, device=device), 3)


def test_matrix_exp_batch_of_different_norms(device):
    rng = seeded("expm_batch")
    a = rng.standard_normal((4, 5, 5)) * np.array([0.01, 1.0, 10.0, 40.0])[:, None, None]
    e = ember.tensor(a, device=device, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    xe, xt = L.matrix_exp(e), TL.matrix_exp(t)
    scale = np.abs(xt.detach().numpy()).max((-2, -1), keepdims=True)
    np.testing.assert_allclose(xe.detach().numpy() / scale, xt.detach().numpy() / scale,
                               atol=1e-12)
    up = rng.standard_normal(a.shape)
    (ge,) = ember.autograd.grad((xe * ember.tensor(up, device=device)).sum(), e)
    (gt,) = torch.autograd.grad((xt * torch.tensor(up)).sum(), t)
    gscale = np.abs(gt.numpy()).max((-2, -1), keepdims=True)
    np.testing.assert_allclose(ge.numpy() / gscale, gt.numpy() / gscale, atol=1e-11)
    assert ember.autograd.gradgradcheck(L.matrix_exp, (ember.tensor(
        a[1, :3, :3] * 0.3, device=device, requires_grad=True),))


def test_matrix_exp_forms_complex_and_errors(device):
    rng = seeded("expm_forms")
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    want = torch.matrix_exp(torch.tensor(a)).numpy()
    x = ember.tensor(a, device=device)
    for got in (ember.matrix_exp(x), x.matrix_exp(), L.matrix_exp(x)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    zero = ember.zeros(2, 0, 0, device=device)
    assert L.matrix_exp(zero).shape == (2, 0, 0)
    with pytest.raises(ember.EmberError, match="square"):
        L.matrix_exp(ember.ones(2, 3, device=device))
    with pytest.raises(ember.EmberError, match="floating point"):
        L.matrix_exp(ember.ones(2, 2, dtype=ember.int64, device=device))
