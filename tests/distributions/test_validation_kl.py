"""Validation (arg_constraints, support, set_default_validate_args), constraints,
kl_divergence and register_kl, expand, enumerate_support and the transforms, against
torch.distributions."""
from __future__ import annotations

import zlib

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(zlib.crc32(b"distributions-kl"))
E, T = ember.distributions, torch.distributions


def _pos(*shape):
    return RNG.uniform(0.5, 2.5, shape)


def _simplex(*shape):
    x = RNG.uniform(0.1, 1.0, shape)
    return x / x.sum(-1, keepdims=True)


def _spd(n):
    a = RNG.standard_normal((2, n, n))
    return a @ a.transpose(0, 2, 1) + n * np.eye(n)


# name: (build(D, params) -> (p, q), params)
KL = {
    "Normal": (lambda D, a: (D.Normal(a["l1"], a["s1"]), D.Normal(a["l2"], a["s2"])),
               {"l1": RNG.standard_normal(3), "s1": _pos(3), "l2": RNG.standard_normal(3),
                "s2": _pos(3)}),
    "Categorical": (lambda D, a: (D.Categorical(probs=a["p"]), D.Categorical(logits=a["q"])),
                    {"p": _simplex(2, 4), "q": RNG.standard_normal((2, 4))}),
    "Bernoulli": (lambda D, a: (D.Bernoulli(probs=a["p"]), D.Bernoulli(logits=a["q"])),
                  {"p": RNG.uniform(0.1, 0.9, 3), "q": RNG.standard_normal(3)}),
    "MultivariateNormal": (
        lambda D, a: (D.MultivariateNormal(a["l1"], covariance_matrix=a["c1"]),
                      D.MultivariateNormal(a["l2"], scale_tril=a["t2"])),
        {"l1": RNG.standard_normal((2, 3)), "c1": _spd(3), "l2": RNG.standard_normal(3),
         "t2": np.linalg.cholesky(_spd(3)[0])}),
    "Uniform": (lambda D, a: (D.Uniform(a["a1"], a["b1"]), D.Uniform(a["a2"], a["b2"])),
                {"a1": -_pos(3), "b1": _pos(3), "a2": -_pos(3) - 2, "b2": _pos(3) + 2}),
    "Beta": (lambda D, a: (D.Beta(a["a1"], a["b1"]), D.Beta(a["a2"], a["b2"])),
             {"a1": _pos(3), "b1": _pos(3), "a2": _pos(3), "b2": _pos(3)}),
    "Gamma": (lambda D, a: (D.Gamma(a["a1"], a["b1"]), D.Gamma(a["a2"], a["b2"])),
              {"a1": _pos(3), "b1": _pos(3), "a2": _pos(3), "b2": _pos(3)}),
    "Dirichlet": (lambda D, a: (D.Dirichlet(a["c1"]), D.Dirichlet(a["c2"])),
                  {"c1": _pos(2, 4), "c2": _pos(2, 4)}),
    "Exponential": (lambda D, a: (D.Exponential(a["r1"]), D.Exponential(a["r2"])),
                    {"r1": _pos(3), "r2": _pos(3)}),
    "Laplace": (lambda D, a: (D.Laplace(a["l1"], a["s1"]), D.Laplace(a["l2"], a["s2"])),
                {"l1": RNG.standard_normal(3), "s1": _pos(3), "l2": RNG.standard_normal(3),
                 "s2": _pos(3)}),
    "Independent": (lambda D, a: (D.Independent(D.Normal(a["l1"], a["s1"]), 1),
                                  D.Independent(D.Normal(a["l2"], a["s2"]), 1)),
                    {"l1": RNG.standard_normal((2, 3)), "s1": _pos(2, 3),
                     "l2": RNG.standard_normal((2, 3)), "s2": _pos(2, 3)}),
    "LogNormal": (lambda D, a: (D.LogNormal(a["l1"], a["s1"]), D.LogNormal(a["l2"], a["s2"])),
                  {"l1": RNG.standard_normal(3), "s1": _pos(3), "l2": RNG.standard_normal(3),
                   "s2": _pos(3)}),
    "Binomial": (lambda D, a: (D.Binomial(5, probs=a["p"]), D.Binomial(3, logits=a["q"])),
                 {"p": RNG.uniform(0.1, 0.9, 3), "q": RNG.standard_normal(3)}),
    "BinomialSameCount": (
        lambda D, a: (D.Binomial(4, probs=a["p"]), D.Binomial(4, logits=a["q"])),
        {"p": RNG.uniform(0.1, 0.9, 3), "q": RNG.standard_normal(3)}),
    "Geometric": (lambda D, a: (D.Geometric(probs=a["p"]), D.Geometric(logits=a["q"])),
                  {"p": RNG.uniform(0.1, 0.9, 3), "q": RNG.standard_normal(3)}),
    "HalfNormal": (lambda D, a: (D.HalfNormal(a["s1"]), D.HalfNormal(a["s2"])),
                   {"s1": _pos(3), "s2": _pos(3)}),
    "OneHotCategorical": (lambda D, a: (D.OneHotCategorical(probs=a["p"]),
                                        D.OneHotCategorical(logits=a["q"])),
                          {"p": _simplex(2, 4), "q": RNG.standard_normal((2, 4))}),
    "Poisson": (lambda D, a: (D.Poisson(a["r1"]), D.Poisson(a["r2"])),
                {"r1": _pos(3), "r2": _pos(3)}),
    "Gumbel": (lambda D, a: (D.Gumbel(a["l1"], a["s1"]), D.Gumbel(a["l2"], a["s2"])),
               {"l1": RNG.standard_normal(3), "s1": _pos(3), "l2": RNG.standard_normal(3),
                "s2": _pos(3)}),
    "ExponentialGamma": (lambda D, a: (D.Exponential(a["r1"]), D.Gamma(a["c2"], a["r2"])),
                         {"r1": _pos(3), "c2": _pos(3), "r2": _pos(3)}),
    "GammaExponential": (lambda D, a: (D.Gamma(a["c1"], a["r1"]), D.Exponential(a["r2"])),
                         {"c1": _pos(3), "r1": _pos(3), "r2": _pos(3)}),
    "NormalLaplace": (lambda D, a: (D.Normal(a["l1"], a["s1"]), D.Laplace(a["l2"], a["s2"])),
                      {"l1": RNG.standard_normal(3), "s1": _pos(3),
                       "l2": RNG.standard_normal(3), "s2": _pos(3)}),
}


@pytest.mark.parametrize("name", list(KL))
def test_kl_divergence_as_torch(name, device):
    dtype = np.float64 if device == "cpu" else np.float32
    tol = dict(rtol=1e-9, atol=1e-10) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)
    build, params = KL[name]
    pe = {k: ember.tensor(v.astype(dtype), device=device, requires_grad=True)
          for k, v in params.items()}
    pt = {k: torch.tensor(v.astype(dtype), requires_grad=True) for k, v in params.items()}
    ke = E.kl_divergence(*build(E, pe))
    kt = T.kl_divergence(*build(T, pt))
    np.testing.assert_allclose(ke.detach().numpy(), kt.detach().numpy(), **tol)
    up = RNG.standard_normal(tuple(kt.shape)).astype(dtype)
    (ke * ember.tensor(up, device=device)).sum().backward()
    (kt * torch.tensor(up)).sum().backward()
    for k in pe:
        if pt[k].grad is None:
            assert pe[k].grad is None or not np.any(pe[k].grad.numpy()), k
            continue
        ge, gt = pe[k].grad.numpy(), pt[k].grad.numpy()
        if k == "c1" and name == "MultivariateNormal":      # symmetric: compare symmetrised
            ge, gt = ge + ge.transpose(0, 2, 1), gt + gt.transpose(0, 2, 1)
        np.testing.assert_allclose(ge, gt, err_msg=k, rtol=tol["rtol"] * 10,
                                   atol=tol["atol"] * 10)


def test_kl_infinite_and_unregistered():
    p = E.Uniform(ember.tensor([0.0]), ember.tensor([2.0]))
    q = E.Uniform(ember.tensor([0.5]), ember.tensor([3.0]))
    assert float(E.kl_divergence(p, q)[0]) == float(
        T.kl_divergence(T.Uniform(torch.tensor([0.0]), torch.tensor([2.0])),
                        T.Uniform(torch.tensor([0.5]), torch.tensor([3.0])))[0]) == np.inf
    with pytest.raises(NotImplementedError, match="Normal and q type Uniform"):
        E.kl_divergence(E.Normal(0.0, 1.0), p)


def test_register_kl_most_specific_wins():
    class MyNormal(E.Normal):
        pass

    @E.register_kl(MyNormal, E.Normal)
    def _mine(p, q):
        return ember.tensor(42.0)

    try:
        assert float(E.kl_divergence(MyNormal(0.0, 1.0), E.Normal(0.0, 1.0))) == 42.0
        assert float(E.kl_divergence(E.Normal(0.0, 1.0), MyNormal(0.0, 1.0))) == 0.0
    finally:
        del E.kl._KL_REGISTRY[MyNormal, E.Normal]
        E.kl._KL_MEMOIZE.clear()


# (build, the torch message's start): parameters outside their constraint
BAD = [
    (lambda D, t: D.Normal(t(0.0), t(-1.0)), "Expected parameter scale"),
    (lambda D, t: D.Bernoulli(probs=t([0.5, 1.5])), "Expected parameter probs"),
    (lambda D, t: D.Categorical(probs=t([0.5, -0.5, 1.0])), "Expected parameter probs"),
    (lambda D, t: D.Exponential(t([0.0])), "Expected parameter rate"),
    (lambda D, t: D.Gamma(t([1.0]), t([-1.0])), "Expected parameter rate"),
    (lambda D, t: D.Beta(t([-1.0]), t([1.0])), "Expected parameter concentration"),
    (lambda D, t: D.Dirichlet(t([1.0, 0.0])), "Expected parameter concentration"),
    (lambda D, t: D.Laplace(t([0.0]), t([0.0])), "Expected parameter scale"),
    (lambda D, t: D.LogNormal(t([0.0]), t([-2.0])), "Expected parameter scale"),
    (lambda D, t: D.Uniform(t([1.0]), t([0.0])), "Expected parameter low"),
    (lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), covariance_matrix=t([[1.0, 2.0],
                                                                         [2.0, 1.0]])),
     "Expected parameter covariance_matrix"),
    (lambda D, t: D.Geometric(probs=t([0.0, 0.5])), "Expected parameter probs"),
    (lambda D, t: D.Poisson(t([-1.0])), "Expected parameter rate"),
    (lambda D, t: D.Binomial(t([2.5]), probs=t([0.5])), "Expected parameter total_count"),
    (lambda D, t: D.StudentT(t([0.0])), "Expected parameter df"),
    (lambda D, t: D.Cauchy(t([0.0]), t([-1.0])), "Expected parameter scale"),
    (lambda D, t: D.LowRankMultivariateNormal(t([0.0]), t([[0.1]]), t([-1.0])),
     "Expected parameter cov_diag"),
    (lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 1.0],
                                                                  [0.0, 1.0]])),
     "Expected parameter scale_tril"),
    (lambda D, t: D.NegativeBinomial(t([-1.0]), probs=t([0.5])),
     "Expected parameter total_count"),
    (lambda D, t: D.NegativeBinomial(t([2.0]), probs=t([1.0])), "Expected parameter probs"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_parameters_raise_as_torch(case):
    build, message = BAD[case]
    with pytest.raises(ValueError, match=message):
        build(T, torch.tensor)
    with pytest.raises(ember.EmberError, match=message) as info:
        build(E, ember.tensor)
    assert isinstance(info.value, ValueError)
    if case == 10:                  # unvalidated, cholesky refuses it (torch's too)
        return
    E.Distribution.set_default_validate_args(False)
    try:
        build(E, ember.tensor)                      # accepted, as torch's, when turned off
    finally:
        E.Distribution.set_default_validate_args(True)


# (build, a value outside the support)
OUTSIDE = [
    (lambda D, t: D.Exponential(t([1.0])), [-1.0]),
    (lambda D, t: D.Bernoulli(probs=t([0.3])), [0.5]),
    (lambda D, t: D.Categorical(probs=t([0.3, 0.7])), 2.0),
    (lambda D, t: D.Beta(t([2.0]), t([2.0])), [1.5]),
    (lambda D, t: D.Uniform(t([0.0]), t([1.0])), [2.0]),
    (lambda D, t: D.Gamma(t([2.0]), t([2.0])), [-0.5]),
    (lambda D, t: D.Dirichlet(t([2.0, 2.0])), [0.3, 0.3]),
    (lambda D, t: D.LogNormal(t([0.0]), t([1.0])), [-1.0]),
    (lambda D, t: D.Poisson(t([1.0])), [1.5]),
    (lambda D, t: D.Binomial(3, probs=t([0.5])), [4.0]),
    (lambda D, t: D.Geometric(probs=t([0.5])), [-1.0]),
    (lambda D, t: D.HalfNormal(t([1.0])), [-1.0]),
    (lambda D, t: D.OneHotCategorical(probs=t([0.5, 0.5])), [1.0, 1.0]),
    (lambda D, t: D.Multinomial(2, probs=t([0.5, 0.5])), [2.0, 1.0]),
    (lambda D, t: D.NegativeBinomial(t([2.0]), probs=t([0.5])), [1.5]),
]


@pytest.mark.parametrize("case", range(len(OUTSIDE)))
def test_log_prob_outside_support_raises_as_torch(case):
    build, value = OUTSIDE[case]
    with pytest.raises(ValueError, match="to be within the support"):
        build(T, torch.tensor).log_prob(torch.tensor(value))
    with pytest.raises(ember.EmberError, match="to be within the support"):
        build(E, ember.tensor).log_prob(ember.tensor(value))
    if case in (2, 6):              # out of range for gather / off the simplex: no value
        return
    E.Distribution.set_default_validate_args(False)
    T.Distribution.set_default_validate_args(False)
    try:
        quiet, tq = build(E, ember.tensor), build(T, torch.tensor)
        np.testing.assert_allclose(quiet.log_prob(ember.tensor(value)).numpy(),
                                   tq.log_prob(torch.tensor(value)).numpy(), rtol=1e-5)
    finally:
        E.Distribution.set_default_validate_args(True)
        T.Distribution.set_default_validate_args(True)


def test_log_prob_shape_checks_as_torch():
    d = E.Normal(ember.zeros(3), ember.ones(3))
    with pytest.raises(ember.EmberError, match="not broadcastable"):
        d.log_prob(ember.zeros(4))
    with pytest.raises(ember.EmberError, match="must be a Tensor"):
        d.log_prob(0.5)
    mvn = E.MultivariateNormal(ember.zeros(3), ember.eye(3))
    with pytest.raises(ember.EmberError, match="event_shape"):
        mvn.log_prob(ember.zeros(2))


CONSTRAINTS = [
    ("real", (), [0.0, np.nan, np.inf]),
    ("positive", (), [1.0, 0.0, -1.0]),
    ("nonnegative", (), [1.0, 0.0, -1.0]),
    ("unit_interval", (), [0.0, 0.5, 1.0, 1.5]),
    ("boolean", (), [0.0, 1.0, 0.5]),
    ("nonnegative_integer", (), [0.0, 2.0, 2.5, -1.0]),
    ("positive_integer", (), [0.0, 2.0, 2.5]),
    ("simplex", (), [[0.3, 0.7], [0.5, 0.6], [-0.1, 1.1]]),
    ("real_vector", (), [[0.0, 1.0], [np.nan, 1.0]]),
    ("lower_cholesky", (), [[[1.0, 0.0], [2.0, 1.0]], [[1.0, 1.0], [0.0, 1.0]],
                            [[-1.0, 0.0], [0.0, 1.0]]]),
    ("positive_definite", (), [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]],
                               [[1.0, 2.0], [0.0, 1.0]]]),
    ("greater_than", (1.0,), [0.5, 1.0, 2.0]),
    ("interval", (0.0, 2.0), [-1.0, 0.0, 2.0, 3.0]),
    ("half_open_interval", (0.0, 2.0), [0.0, 2.0]),
    ("integer_interval", (0, 3), [0.0, 3.0, 4.0, 1.5]),
    ("less_than", (1.0,), [0.5, 1.0]),
]


@pytest.mark.parametrize("name,args,value", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_constraints_as_torch(name, args, value):
    ce = getattr(E.constraints, name)
    ct = getattr(T.constraints, name)
    if args:
        ce, ct = ce(*args), ct(*args)
    got = ce.check(ember.tensor(value)).numpy()
    want = ct.check(torch.tensor(value)).numpy()
    np.testing.assert_array_equal(got, want)
    assert ce.event_dim == ct.event_dim and ce.is_discrete == ct.is_discrete
    assert repr(ce) == repr(ct)
    ie, it = E.constraints.independent(ce, 1), T.constraints.independent(ct, 1)
    if np.asarray(value).ndim > ce.event_dim:
        np.testing.assert_array_equal(ie.check(ember.tensor(value)).numpy(),
                                      it.check(torch.tensor(value)).numpy())


EXPAND = [
    lambda D, t: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])),
    lambda D, t: D.Categorical(logits=t([[0.0, 1.0, 2.0]])),
    lambda D, t: D.Bernoulli(probs=t([0.3])),
    lambda D, t: D.Gamma(t([2.0]), t([3.0])),
    lambda D, t: D.Beta(t([2.0]), t([3.0])),
    lambda D, t: D.Dirichlet(t([2.0, 3.0])),
    lambda D, t: D.LogNormal(t([0.0]), t([1.0])),
    lambda D, t: D.Independent(D.Normal(t([[0.0, 1.0]]), t([[1.0, 2.0]])), 1),
    lambda D, t: D.MultivariateNormal(t([0.0, 1.0]), t([[2.0, 0.5], [0.5, 1.0]])),
    lambda D, t: D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0])),
    lambda D, t: D.HalfNormal(t([1.0, 2.0])),
    lambda D, t: D.StudentT(t([3.0, 4.0])),
    lambda D, t: D.Chi2(t([3.0])),
    lambda D, t: D.Binomial(3, probs=t([0.3])),
    lambda D, t: D.OneHotCategorical(probs=t([[0.3, 0.7]])),
    lambda D, t: D.Multinomial(3, probs=t([[0.3, 0.7]])),
    lambda D, t: D.Poisson(t([2.0])),
    lambda D, t: D.Cauchy(t([0.0]), t([1.0])),
    lambda D, t: D.Geometric(probs=t([0.3])),
    lambda D, t: D.LowRankMultivariateNormal(t([0.0, 1.0]), t([[1.0], [0.5]]),
                                             t([1.0, 2.0])),
    lambda D, t: D.MixtureSameFamily(D.Categorical(probs=t([[0.3, 0.7]])),
                                     D.Normal(t([[0.0, 1.0]]), t([[1.0, 2.0]]))),
]


@pytest.mark.parametrize("case", range(len(EXPAND)))
def test_expand_as_torch(case):
    torch.manual_seed(case)
    de = EXPAND[case](E, lambda v: ember.tensor(v, dtype=ember.float64))
    dt = EXPAND[case](T, lambda v: torch.tensor(v, dtype=torch.float64))
    shape = (4,) + tuple(dt.batch_shape[:-1]) + ((2,) if dt.batch_shape else ())
    ee, et = de.expand(shape), dt.expand(shape)
    assert type(ee) is type(de)
    assert tuple(ee.batch_shape) == tuple(et.batch_shape)
    assert tuple(ee.event_shape) == tuple(et.event_shape)
    value = et.sample()
    np.testing.assert_allclose(ee.log_prob(ember.tensor(value.numpy())).numpy(),
                               et.log_prob(value).numpy(), rtol=1e-9, atol=1e-12)
    try:
        want = et.entropy()
    except (NotImplementedError, AttributeError):   # Poisson has none; torch's expanded
        return                                      # Multinomial loses its _binomial
    np.testing.assert_allclose(ee.entropy().numpy(), want.numpy(), rtol=1e-9)


def test_enumerate_support_and_perplexity_as_torch():
    for build in (lambda D, t: D.Categorical(probs=t([[0.2, 0.8, 0.0], [0.3, 0.3, 0.4]])),
                  lambda D, t: D.Bernoulli(probs=t([0.2, 0.5]))):
        de, dt = build(E, ember.tensor), build(T, torch.tensor)
        for expand in (True, False):
            se, st = de.enumerate_support(expand), dt.enumerate_support(expand)
            np.testing.assert_array_equal(se.numpy(), st.numpy())
            assert str(se.dtype).split(".")[-1] == str(st.dtype).split(".")[-1]
        np.testing.assert_allclose(de.perplexity().numpy(), dt.perplexity().numpy(),
                                   rtol=1e-6)
        np.testing.assert_allclose(de.mode.numpy(), dt.mode.numpy())
        np.testing.assert_allclose(de.mean.numpy(), dt.mean.numpy())
        np.testing.assert_allclose(de.variance.numpy(), dt.variance.numpy())
    assert E.Categorical(probs=ember.tensor([0.5, 0.5])).has_enumerate_support
    with pytest.raises(NotImplementedError):
        E.Independent(E.Bernoulli(probs=ember.tensor([[0.3]])), 1).enumerate_support()


TRANSFORMS = [
    lambda D, t: D.ExpTransform(),
    lambda D, t: D.SigmoidTransform(),
    lambda D, t: D.TanhTransform(),
    lambda D, t: D.AffineTransform(t([1.0, -2.0, 0.5]), t([2.0, -0.5, 3.0])),
    lambda D, t: D.AffineTransform(1.0, -2.0),
    lambda D, t: D.ComposeTransform([D.AffineTransform(0.0, 0.5), D.TanhTransform()]),
    lambda D, t: D.ExpTransform().inv,
    lambda D, t: D.AffineTransform(t([1.0, 2.0, 3.0]), t([2.0, 1.0, 0.5]), event_dim=1),
]


@pytest.mark.parametrize("case", range(len(TRANSFORMS)))
def test_transforms_as_torch(case, device):
    te, tt = TRANSFORMS[case](E, lambda v: ember.tensor(v, device=device)), \
        TRANSFORMS[case](T, torch.tensor)
    x = RNG.uniform(0.2, 0.8, (2, 3)).astype(np.float32)
    xe = ember.tensor(x, device=device, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    ye, yt = te(xe), tt(xt)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(te.inv(ye).detach().numpy(), x, rtol=1e-4, atol=1e-5)
    le, lt = te.log_abs_det_jacobian(xe, ye), tt.log_abs_det_jacobian(xt, yt)
    np.testing.assert_allclose(le.detach().numpy(), lt.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    if not lt.requires_grad:                # a constant Jacobian (affine)
        return
    le.sum().backward()
    lt.sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert te.domain.event_dim == tt.domain.event_dim
    assert te.codomain.event_dim == tt.codomain.event_dim
    assert te.bijective == tt.bijective
    assert te.inv.inv is te
    assert te == TRANSFORMS[case](E, lambda v: ember.tensor(v, device=device)) or \
        tt != TRANSFORMS[case](T, torch.tensor)


def test_transform_cache():
    t = E.ExpTransform(cache_size=1)
    x = ember.tensor([0.5])
    y = t(x)
    assert t.inv(y) is x
    with pytest.raises(ember.EmberError, match="cache_size"):
        E.ExpTransform(cache_size=2)


REGISTRY = [
    lambda C, t: C.real, lambda C, t: C.positive, lambda C, t: C.nonnegative,
    lambda C, t: C.unit_interval, lambda C, t: C.interval(-1.0, 3.0),
    lambda C, t: C.greater_than(2.0), lambda C, t: C.less_than(t([1.0, 2.0, 3.0])),
    lambda C, t: C.half_open_interval(0.5, 1.5), lambda C, t: C.independent(C.positive, 1),
    lambda C, t: C.greater_than_eq(t([0.0, 1.0, -1.0])),
]


@pytest.mark.parametrize("case", range(len(REGISTRY)))
def test_biject_to_and_transform_to_as_torch(case, device):
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    for name in ("biject_to", "transform_to"):
        ce = REGISTRY[case](E.constraints, lambda v: ember.tensor(v, device=device))
        ct = REGISTRY[case](T.constraints, torch.tensor)
        te, tt = getattr(E, name)(ce), getattr(T, name)(ct)
        assert type(te).__name__ == type(tt).__name__
        ye, yt = te(ember.tensor(x, device=device)), tt(torch.tensor(x))
        np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-5, atol=1e-6)
        assert bool(ce.check(ye).all())
        np.testing.assert_allclose(
            te.log_abs_det_jacobian(ember.tensor(x, device=device), ye).numpy(),
            tt.log_abs_det_jacobian(torch.tensor(x), yt).numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="Cannot transform"):
        E.biject_to(E.constraints.simplex)
