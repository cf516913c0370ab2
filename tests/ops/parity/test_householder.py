"""geqrf, linalg.householder_product (orgqr) and ormqr against PyTorch on cpu and opencl:0:
double precision, complex input, a zero column (tau = 0), gradients of both inputs, the
errors."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from parity_helpers import seeded

torch = pytest.importorskip("torch")


def _input(name, shape, kind):
    rng = seeded(name)
    a = rng.standard_normal(shape)
    if kind == "complex":
        a = a + 1j * rng.standard_normal(shape)
    if kind == "zero_column":
        a[..., 1:, 0] = 0.0             # nothing to reflect: LAPACK's tau is 0 there
    return a


@pytest.mark.parametrize("kind", ["real", "complex", "zero_column"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_geqrf_matches_lapack(device, kind, shape):
    a = _input(f"geqrf{kind}{shape}", shape, kind)
    h, tau = ember.geqrf(ember.tensor(a, device=device))
    th, ttau = torch.geqrf(torch.tensor(a))
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tau.numpy(), ttau.numpy(), rtol=1e-10, atol=1e-12)
    assert ember.geqrf(ember.tensor(a, device=device))._fields == ("a", "tau")


@pytest.mark.parametrize("kind", ["real", "complex"])
def test_householder_product_and_ormqr_gradients(device, kind):
    rng = seeded(f"hh_grad{kind}")
    a = _input(f"hh{kind}", (2, 5, 3), kind)
    tau = _input(f"tau{kind}", (2, 3), kind)
    c = _input(f"c{kind}", (2, 3, 5), kind)
    up_q = rng.standard_normal((2, 5, 3))
    up_c = rng.standard_normal((2, 3, 5))

    def loss(lib, x, t, y, uq, uc):
        q = lib.linalg.householder_product(x, t)
        applied = lib.ormqr(x, t, y, left=False, transpose=True)
        return (q.abs() * uq).sum() + (applied.abs() * uc).sum()

    e = [ember.tensor(v, device=device, requires_grad=True) for v in (a, tau, c)]
    t = [torch.tensor(v, requires_grad=True) for v in (a, tau, c)]
    ge = ember.autograd.grad(loss(ember, *e, ember.tensor(up_q, device=device),
                                  ember.tensor(up_c, device=device)), e)
    gt = torch.autograd.grad(loss(torch, *t, torch.tensor(up_q), torch.tensor(up_c)), t)
    for x, y in zip(ge, gt):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(ember.orgqr(e[0], e[1]).detach().numpy(),
                               torch.orgqr(t[0], t[1]).detach().numpy(), rtol=1e-10,
                               atol=1e-12)


def test_errors(device):
    x = ember.ones(4, 5, device=device)
    with pytest.raises(ember.EmberError, match=r"shape\[-2\] >= input.shape\[-1\]"):
        ember.linalg.householder_product(x, ember.ones(3, device=device))
    with pytest.raises(ember.EmberError, match=r"tau.shape\[-1\] <= input.shape\[-1\]"):
        ember.linalg.householder_product(x.mT, ember.ones(5, device=device))
    with pytest.raises(ember.EmberError, match="at least 2 dimensions"):
        ember.ormqr(ember.ones(3, device=device), ember.ones(1, device=device),
                    ember.ones(3, 3, device=device))
    with pytest.raises(ember.EmberError, match="one dtype"):
        ember.linalg.householder_product(x.mT, ember.ones(3, dtype=ember.float64,
                                                          device=device))
