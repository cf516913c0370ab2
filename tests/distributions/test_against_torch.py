"""Every ember distribution against torch.distributions on every device: log_prob,
entropy, cdf/icdf, the moments and their gradients w.r.t. the parameters (a random
upstream gradient); batch/event shapes and has_rsample; samples' shape, dtype, support
and moments over many draws (values differ from torch's for a seed)."""
from __future__ import annotations

import zlib

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(zlib.crc32(b"distributions"))


def _pos(*shape):
    return RNG.uniform(0.5, 2.5, shape)


def _simplex(*shape):
    x = RNG.uniform(0.1, 1.0, shape)
    return x / x.sum(-1, keepdims=True)


# name: (build(D, params), params, value, methods torch has, rsample in ember)
CASES = {
    "Normal": (lambda D, p: D.Normal(p["loc"], p["scale"]),
               {"loc": RNG.standard_normal((2, 3)), "scale": _pos(3)},
               RNG.standard_normal((4, 2, 3)), ("cdf", "icdf"), True),
    "Uniform": (lambda D, p: D.Uniform(p["low"], p["high"]),
                {"low": -_pos(2, 3), "high": _pos(2, 3)}, RNG.uniform(-0.4, 0.4, (4, 2, 3)),
                ("cdf", "icdf"), True),
    "Exponential": (lambda D, p: D.Exponential(p["rate"]), {"rate": _pos(2, 3)},
                    _pos(4, 2, 3), ("cdf", "icdf"), True),
    "Laplace": (lambda D, p: D.Laplace(p["loc"], p["scale"]),
                {"loc": RNG.standard_normal((2, 3)), "scale": _pos(2, 3)},
                RNG.standard_normal((4, 2, 3)), ("cdf", "icdf"), True),
    "LogNormal": (lambda D, p: D.LogNormal(p["loc"], p["scale"]),
                  {"loc": RNG.standard_normal((2, 3)) * 0.3, "scale": _pos(2, 3) * 0.5},
                  _pos(4, 2, 3), ("cdf", "icdf"), True),
    "Gamma": (lambda D, p: D.Gamma(p["concentration"], p["rate"]),
              {"concentration": _pos(2, 3) + 1, "rate": _pos(2, 3)}, _pos(4, 2, 3), (),
              True),
    "Beta": (lambda D, p: D.Beta(p["concentration1"], p["concentration0"]),
             {"concentration1": _pos(2, 3) + 1, "concentration0": _pos(2, 3) + 1},
             RNG.uniform(0.05, 0.95, (4, 2, 3)), (), False),
    "Dirichlet": (lambda D, p: D.Dirichlet(p["concentration"]),
                  {"concentration": _pos(2, 4) + 1}, _simplex(5, 2, 4), (), False),
    "Categorical": (lambda D, p: D.Categorical(probs=p["probs"]), {"probs": _simplex(2, 4)},
                    RNG.integers(0, 4, (5, 2)).astype(np.float64), (), False),
    "CategoricalLogits": (lambda D, p: D.Categorical(logits=p["logits"]),
                          {"logits": RNG.standard_normal((2, 4))},
                          RNG.integers(0, 4, (5, 2)).astype(np.float64), (), False),
    "Bernoulli": (lambda D, p: D.Bernoulli(probs=p["probs"]),
                  {"probs": RNG.uniform(0.1, 0.9, (2, 3))},
                  RNG.integers(0, 2, (4, 2, 3)).astype(np.float64), (), False),
    "BernoulliLogits": (lambda D, p: D.Bernoulli(logits=p["logits"]),
                        {"logits": RNG.standard_normal((2, 3))},
                        RNG.integers(0, 2, (4, 2, 3)).astype(np.float64), (), False),
    "Independent": (lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1),
                    {"loc": RNG.standard_normal((2, 3)), "scale": _pos(2, 3)},
                    RNG.standard_normal((4, 2, 3)), (), True),
    "TransformedTanhAffine": (
        lambda D, p: D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]),
            [D.AffineTransform(0.5, 2.0), D.SigmoidTransform(),
             D.AffineTransform(-1.0, 2.0)]),
        {"loc": RNG.standard_normal((2, 3)) * 0.3, "scale": _pos(2, 3) * 0.5},
        RNG.uniform(-0.9, 0.9, (4, 2, 3)), ("cdf", "icdf"), True),
    "TransformedTanh": (
        lambda D, p: D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]),
            D.ComposeTransform([D.TanhTransform(), D.AffineTransform(p["loc"], 3.0)])),
        {"loc": RNG.standard_normal((2, 3)) * 0.3, "scale": _pos(2, 3) * 0.5},
        RNG.uniform(-0.5, 0.5, (4, 2, 3)), (), True),
    "Cauchy": (lambda D, p: D.Cauchy(p["loc"], p["scale"]),
               {"loc": RNG.standard_normal((2, 3)), "scale": _pos(2, 3)},
               RNG.standard_normal((4, 2, 3)), ("cdf", "icdf"), True),
    "HalfNormal": (lambda D, p: D.HalfNormal(p["scale"]), {"scale": _pos(2, 3)},
                   _pos(4, 2, 3), ("cdf", "icdf"), True),
    "Gumbel": (lambda D, p: D.Gumbel(p["loc"], p["scale"]),
               {"loc": RNG.standard_normal((2, 3)), "scale": _pos(2, 3)},
               RNG.standard_normal((4, 2, 3)), ("cdf", "icdf"), True),
    "Chi2": (lambda D, p: D.Chi2(p["df"]), {"df": _pos(2, 3) + 2}, _pos(4, 2, 3), (),
             True),
    "StudentT": (lambda D, p: D.StudentT(p["df"], p["loc"], p["scale"]),
                 {"df": _pos(2, 3) + 2.5, "loc": RNG.standard_normal((2, 3)),
                  "scale": _pos(2, 3)}, RNG.standard_normal((4, 2, 3)), (), True),
    "Geometric": (lambda D, p: D.Geometric(probs=p["probs"]),
                  {"probs": RNG.uniform(0.3, 0.9, (2, 3))},
                  RNG.integers(0, 5, (4, 2, 3)).astype(np.float64), (), False),
    "GeometricLogits": (lambda D, p: D.Geometric(logits=p["logits"]),
                        {"logits": RNG.standard_normal((2, 3))},
                        RNG.integers(0, 5, (4, 2, 3)).astype(np.float64), (), False),
    "Poisson": (lambda D, p: D.Poisson(p["rate"]), {"rate": _pos(2, 3) * 2},
                RNG.integers(0, 6, (4, 2, 3)).astype(np.float64), (), False),
    "Binomial": (lambda D, p: D.Binomial(5, probs=p["probs"]),
                 {"probs": RNG.uniform(0.2, 0.8, (2, 3))},
                 RNG.integers(0, 6, (4, 2, 3)).astype(np.float64), (), False),
    "BinomialLogits": (lambda D, p: D.Binomial(4, logits=p["logits"]),
                       {"logits": RNG.standard_normal((2, 3))},
                       RNG.integers(0, 5, (4, 2, 3)).astype(np.float64), (), False),
    "NegativeBinomial": (lambda D, p: D.NegativeBinomial(p["total_count"], probs=p["probs"]),
                         {"total_count": _pos(2, 3) * 2, "probs": RNG.uniform(0.1, 0.7, (2, 3))},
                         RNG.integers(0, 8, (4, 2, 3)).astype(np.float64), (), False),
    "NegativeBinomialLogits": (lambda D, p: D.NegativeBinomial(3, logits=p["logits"]),
                               {"logits": RNG.standard_normal((2, 3)) - 0.5},
                               RNG.integers(0, 8, (4, 2, 3)).astype(np.float64), (), False),
    "OneHotCategorical": (lambda D, p: D.OneHotCategorical(probs=p["probs"]),
                          {"probs": _simplex(2, 4)},
                          np.eye(4)[RNG.integers(0, 4, (5, 2))], (), False),
    "Multinomial": (lambda D, p: D.Multinomial(6, probs=p["probs"]),
                    {"probs": _simplex(2, 4)},
                    np.stack([RNG.multinomial(6, [0.25] * 4, 2) for _ in range(3)])
                    .astype(np.float64), (), False),
    "MixtureSameFamily": (
        lambda D, p: D.MixtureSameFamily(D.Categorical(logits=p["w"]),
                                         D.Normal(p["loc"], p["scale"])),
        {"w": RNG.standard_normal((2, 3)), "loc": RNG.standard_normal((2, 3)),
         "scale": _pos(2, 3)}, RNG.standard_normal((4, 2)), ("cdf",), False),
    "MixtureSameFamilyMVN": (
        lambda D, p: D.MixtureSameFamily(
            D.Categorical(probs=p["w"]),
            D.Independent(D.Normal(p["loc"], p["scale"]), 1)),
        {"w": _simplex(3), "loc": RNG.standard_normal((3, 2)), "scale": _pos(3, 2)},
        RNG.standard_normal((4, 2)), (), False),
    "LowRankMultivariateNormal": (
        lambda D, p: D.LowRankMultivariateNormal(p["loc"], p["W"], p["d"]),
        {"loc": RNG.standard_normal((2, 3)), "W": RNG.standard_normal((3, 2)),
         "d": _pos(2, 3)}, RNG.standard_normal((4, 2, 3)), (), True),
}

MOMENTS = ("mean", "variance", "stddev", "mode", "covariance_matrix", "precision_matrix",
           "scale_tril")


def _dtype(device):
    return np.float64 if device == "cpu" else np.float32


def _tol(dtype):
    return dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-10)


def _close(a, b, tol, what):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy()
    np.testing.assert_allclose(a, b, err_msg=what, equal_nan=True, **tol)


def _both(name, device, dtype):
    build, params, value, extra, rsample = CASES[name]
    pe = {k: ember.tensor(v.astype(dtype), device=device, requires_grad=True)
          for k, v in params.items()}
    pt = {k: torch.tensor(v.astype(dtype), requires_grad=True) for k, v in params.items()}
    return build(ember.distributions, pe), build(torch.distributions, pt), pe, pt


@pytest.mark.parametrize("name", list(CASES))
def test_distribution_as_torch(name, device):
    dtype = _dtype(device)
    tol = _tol(dtype)
    _, _, value, extra, rsample = CASES[name]
    de, dt, pe, pt = _both(name, device, dtype)
    assert tuple(de.batch_shape) == tuple(dt.batch_shape)
    assert tuple(de.event_shape) == tuple(dt.event_shape)
    assert de.has_rsample == rsample and dt.has_rsample or not rsample
    ve = ember.tensor(value.astype(dtype), device=device)
    vt = torch.tensor(value.astype(dtype))
    outs_e, outs_t = [de.log_prob(ve)], [dt.log_prob(vt)]
    _close(outs_e[0], outs_t[0], tol, "log_prob")
    try:
        ht = dt.entropy()
    except NotImplementedError:
        ht = None
    if ht is not None:
        outs_e.append(de.entropy())
        outs_t.append(ht)
        _close(outs_e[-1], ht, tol, "entropy")
    if "cdf" in extra:
        outs_e.append(de.cdf(ve))
        outs_t.append(dt.cdf(vt))
        _close(outs_e[-1], outs_t[-1], tol, "cdf")
    if "icdf" in extra:
        q = RNG.uniform(0.05, 0.95, value.shape).astype(dtype)
        outs_e.append(de.icdf(ember.tensor(q, device=device)))
        outs_t.append(dt.icdf(torch.tensor(q)))
        _close(outs_e[-1], outs_t[-1], tol, "icdf")
    for moment in MOMENTS:
        try:
            mt = getattr(dt, moment)
        except (NotImplementedError, AttributeError):     # torch has none here
            continue
        me = getattr(de, moment)
        assert tuple(me.shape) == tuple(mt.shape), moment
        _close(me, mt, tol, moment)
        if moment != "mode" and mt.requires_grad:
            outs_e.append(me)
            outs_t.append(mt)
    total_e, total_t = 0, 0
    for oe, ot in zip(outs_e, outs_t):
        up = RNG.standard_normal(tuple(ot.shape)).astype(dtype)
        total_e = total_e + (oe * ember.tensor(up, device=device)).sum()
        total_t = total_t + (ot * torch.tensor(up)).sum()
    total_e.backward()
    total_t.backward()
    for k in pe:
        if pt[k].grad is None:
            assert pe[k].grad is None or not np.any(pe[k].grad.numpy()), k
            continue
        np.testing.assert_allclose(pe[k].grad.numpy(), pt[k].grad.numpy(), err_msg=k,
                                   rtol=tol["rtol"] * 10, atol=tol["atol"] * 10)


@pytest.mark.parametrize("name", list(CASES))
def test_samples(name, device):
    ember.manual_seed(zlib.crc32(name.encode()))
    dtype = np.float32
    de, dt, _, _ = _both(name, device, dtype)
    x = de.sample((20000,))
    xt = dt.sample((20000,))
    assert tuple(x.shape) == tuple(xt.shape)
    assert str(x.dtype).split(".")[-1] == str(xt.dtype).split(".")[-1]
    assert str(x.device).startswith(device.split(":")[0])
    assert not x.requires_grad
    assert bool(de.support.check(x).all())
    xs = x.numpy().astype(np.float64)
    try:
        mean, var = dt.mean.detach().numpy(), dt.variance.detach().numpy()
    except NotImplementedError:
        mean = None
    if mean is not None and np.all(np.isfinite(mean)):
        sd = np.sqrt(var)
        np.testing.assert_allclose(xs.mean(0), mean, atol=float(5 * sd.max() / np.sqrt(2e4)))
        np.testing.assert_allclose(xs.var(0), var, rtol=0.1, atol=0.02)
    if de.has_rsample:
        y = de.rsample((3,))
        assert tuple(y.shape) == tuple(dt.rsample((3,)).shape) and y.requires_grad


@pytest.mark.parametrize("name", ["Beta", "Dirichlet"])
def test_no_silent_rsample(name):
    de, _, _, _ = _both(name, "cpu", np.float64)
    assert not de.has_rsample
    with pytest.raises(ember.errors.NotInEmberError, match="implicit"):
        de.rsample()


def test_standard_gamma_grad_as_torch(device):
    """The implicit reparametrisation gradient d x / d alpha, on all three of torch's
    branches (x < 0.8; alpha > 8 near and far from the mode; the rational one)."""
    dtype = _dtype(device)
    rng = np.random.default_rng(zlib.crc32(b"standard_gamma_grad"))
    alpha = np.exp(rng.uniform(-3, 4, 4000))
    x = np.maximum(rng.gamma(alpha), 1e-30).astype(dtype)
    alpha = alpha.astype(dtype)
    from ember.distributions.gamma import standard_gamma_grad
    got = standard_gamma_grad(ember.tensor(alpha, device=device),
                              ember.tensor(x, device=device)).numpy()
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-3, atol=1e-6)
    np.testing.assert_allclose(got, want, **tol)


def test_gamma_rsample_gradient_as_torch(device):
    """rsample's gradients w.r.t. concentration and rate are torch's formula at the drawn
    value: d/d alpha = standard_gamma_grad(alpha, x * rate) / rate, d/d rate = -x / rate."""
    dtype = _dtype(device)
    ember.manual_seed(5)
    conc = RNG.uniform(0.3, 12.0, (3,)).astype(dtype)
    rate = _pos(3).astype(dtype)
    ce = ember.tensor(conc, device=device, requires_grad=True)
    re = ember.tensor(rate, device=device, requires_grad=True)
    x = ember.distributions.Gamma(ce, re).rsample((50,))
    assert x.requires_grad
    up = RNG.standard_normal((50, 3)).astype(dtype)
    (x * ember.tensor(up, device=device)).sum().backward()
    xs = torch.tensor(x.detach().numpy())
    z = xs * torch.tensor(rate)
    want_c = (torch.tensor(up) * torch._standard_gamma_grad(
        torch.tensor(conc).expand(50, 3), z) / torch.tensor(rate)).sum(0)
    want_r = (torch.tensor(up) * -xs / torch.tensor(rate)).sum(0)
    tol = dict(rtol=1e-8, atol=1e-10) if dtype == np.float64 else dict(rtol=2e-3, atol=1e-4)
    np.testing.assert_allclose(ce.grad.numpy(), want_c.numpy(), **tol)
    np.testing.assert_allclose(re.grad.numpy(), want_r.numpy(), **tol)


def test_gamma_cdf_as_torch(device):
    """Gamma.cdf (torch.special.gammainc) on both sides of x = a + 1, its gradient w.r.t.
    value and rate; w.r.t. concentration none, NotImplementedError as torch's."""
    dtype = _dtype(device)
    tol = _tol(dtype)
    conc = np.array([[0.3, 1.0, 2.5, 7.0, 30.0]]).repeat(3, 0).astype(dtype)
    rate = np.array([[0.5], [1.0], [2.0]]).repeat(5, 1).astype(dtype)
    value = np.array([0.05, 0.7, 1.9, 6.0, 40.0]).astype(dtype)
    re = ember.tensor(rate, device=device, requires_grad=True)
    ve = ember.tensor(value, device=device, requires_grad=True)
    rt = torch.tensor(rate, requires_grad=True)
    vt = torch.tensor(value, requires_grad=True)
    ce = ember.distributions.Gamma(ember.tensor(conc, device=device), re).cdf(ve)
    ct = torch.distributions.Gamma(torch.tensor(conc), rt).cdf(vt)
    _close(ce, ct, tol, "cdf")
    up = RNG.standard_normal(ct.shape).astype(dtype)
    (ce * ember.tensor(up, device=device)).sum().backward()
    (ct * torch.tensor(up)).sum().backward()
    for got, want, name in ((re, rt, "rate"), (ve, vt, "value")):
        np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), err_msg=name,
                                   rtol=tol["rtol"] * 10, atol=tol["atol"] * 10)
    c = ember.tensor(conc, device=device, requires_grad=True)
    with pytest.raises(NotImplementedError, match="igamma"):
        ember.distributions.Gamma(c, 1.0).cdf(ember.tensor(value, device=device)).sum() \
            .backward()


def test_negative_binomial_point_mass_and_expand():
    # total_count 0: all mass at 0, log_prob 0 there (torch masks the 0/0 normalisation)
    for lib in (ember, torch):
        d = lib.distributions.NegativeBinomial(lib.tensor([0.0, 2.0]),
                                               probs=lib.tensor([0.5, 0.5]))
        lp = d.log_prob(lib.tensor([0.0, 0.0]))
        if lib is ember:
            got = lp.numpy()
        else:
            want = lp.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got[0] == 0.0
    de = ember.distributions.NegativeBinomial(3.0, logits=ember.tensor([0.1, -0.2]))
    dt = torch.distributions.NegativeBinomial(3.0, logits=torch.tensor([0.1, -0.2]))
    ee, et = de.expand((4, 2)), dt.expand((4, 2))
    assert tuple(ee.batch_shape) == tuple(et.batch_shape) == (4, 2)
    np.testing.assert_allclose(ee.mean.numpy(), et.mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ee.probs.numpy(), et.probs.numpy(), rtol=1e-6)
    assert tuple(de.param_shape) == tuple(dt.param_shape)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        ember.distributions.NegativeBinomial(2.0)
