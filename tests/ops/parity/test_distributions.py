"""MultivariateNormal against torch.distributions on every device: log_prob, entropy and
the moments from each of covariance_matrix / precision_matrix / scale_tril, with batch
broadcasting, gradients w.r.t. loc and the matrix for a random upstream gradient;
rsample's shape and its sample covariance; bad arguments are ember errors."""
from __future__ import annotations

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 3))
COV = (A @ A.transpose(0, 2, 1) + 3 * np.eye(3)).astype(np.float64)
LOC = RNG.standard_normal((2, 3))
VALUE = RNG.standard_normal((4, 2, 3))        # (sample, batch, event): broadcasts


def _build(lib, kind, loc, cov):
    D = lib.distributions.MultivariateNormal
    if kind == "covariance_matrix":
        return D(loc, covariance_matrix=cov)
    if kind == "precision_matrix":
        return D(loc, precision_matrix=lib.linalg.inv(cov))
    return D(loc, scale_tril=lib.linalg.cholesky(cov))


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal_as_torch(device, kind):
    dtype = np.float32 if device != "cpu" else np.float64
    loc_e = ember.tensor(LOC.astype(dtype), device=device, requires_grad=True)
    cov_e = ember.tensor(COV.astype(dtype), device=device, requires_grad=True)
    loc_t = torch.tensor(LOC.astype(dtype), requires_grad=True)
    cov_t = torch.tensor(COV.astype(dtype), requires_grad=True)
    de, dt = _build(ember, kind, loc_e, cov_e), _build(torch, kind, loc_t, cov_t)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-10)
    lp_e = de.log_prob(ember.tensor(VALUE.astype(dtype), device=device))
    lp_t = dt.log_prob(torch.tensor(VALUE.astype(dtype)))
    np.testing.assert_allclose(lp_e.detach().numpy(), lp_t.detach().numpy(), **tol)
    for name in ("mean", "variance", "stddev", "covariance_matrix", "precision_matrix",
                 "scale_tril"):
        np.testing.assert_allclose(getattr(de, name).detach().numpy(),
                                   getattr(dt, name).detach().numpy(), err_msg=name, **tol)
    np.testing.assert_allclose(de.entropy().detach().numpy(), dt.entropy().detach().numpy(),
                               **tol)
    up = RNG.standard_normal(lp_t.shape).astype(dtype)
    (lp_e * ember.tensor(up, device=device)).sum().add(de.entropy().sum()).backward()
    (lp_t * torch.tensor(up)).sum().add(dt.entropy().sum()).backward()
    np.testing.assert_allclose(loc_e.grad.numpy(), loc_t.grad.numpy(), **tol)
    # a symmetric matrix's gradient is defined up to its antisymmetric part (torch's
    # cholesky takes the lower triangle); compare the symmetrised gradients
    ge, gt = cov_e.grad.numpy(), cov_t.grad.numpy()
    if kind == "scale_tril":
        np.testing.assert_allclose(ge, gt, rtol=tol["rtol"] * 10, atol=tol["atol"] * 10)
    else:
        sym = lambda g: (g + g.transpose(0, 2, 1)) / 2              # noqa: E731
        np.testing.assert_allclose(sym(ge), sym(gt), rtol=tol["rtol"] * 10,
                                   atol=tol["atol"] * 10)
    assert tuple(de.batch_shape) == tuple(dt.batch_shape) == (2,)
    assert tuple(de.event_shape) == tuple(dt.event_shape) == (3,)


def test_multivariate_normal_samples(device):
    ember.manual_seed(0)
    cov = COV[0].astype(np.float32)
    d = ember.distributions.MultivariateNormal(ember.tensor(LOC[0].astype(np.float32),
                                                            device=device),
                                               covariance_matrix=ember.tensor(cov,
                                                                              device=device))
    x = d.sample((20000,))
    assert tuple(x.shape) == (20000, 3) and str(x.device).startswith(device.split(":")[0])
    assert not x.requires_grad
    xs = x.numpy()
    np.testing.assert_allclose(xs.mean(0), LOC[0], atol=0.08)
    np.testing.assert_allclose(np.cov(xs.T), cov, rtol=0.06, atol=0.08)
    assert tuple(d.rsample((5, 2)).shape) == (5, 2, 3)


def test_multivariate_normal_refuses_bad_arguments():
    D = ember.distributions.MultivariateNormal
    with pytest.raises(ember.EmberError, match="exactly one of"):
        D(ember.zeros(2))
    with pytest.raises(ember.EmberError, match="exactly one of"):
        D(ember.zeros(2), covariance_matrix=ember.eye(2), scale_tril=ember.eye(2))
    with pytest.raises(ember.EmberError, match=r"\(\.\.\., 3, 3\)"):
        D(ember.zeros(3), covariance_matrix=ember.eye(2))
    with pytest.raises(ember.EmberError, match="one-dimensional"):
        D(ember.tensor(0.0), covariance_matrix=ember.eye(1))
