"""atan2, lgamma, digamma, erfinv, ember.special, histc, combinations, quantile, mode and
scatter_reduce(prod/amax/amin) against PyTorch: values over wide ranges with edge values,
gradients with a random upstream gradient, on cpu and opencl:0."""
from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from parity_helpers import TOL, check_grad, seeded, to_numpy

torch = pytest.importorskip("torch")


def _wide(dtype):
    x = np.concatenate([np.linspace(-25.0, 25.0, 1001), np.geomspace(1e-6, 1e12, 60),
                        [0.0, -0.0, 0.5, 1.0, 2.0, 3.0, -1.0, -2.0, -2.5, np.inf, -np.inf,
                         np.nan, 1e-30, 171.5, 1e30]])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_gamma_functions_forward(device, name, dtype):
    x = _wide(dtype)
    if dtype == "float32":
        x = x[np.abs(x) < 1e30]
    got = to_numpy(getattr(ember, name)(ember.tensor(x, device=device)))
    want = getattr(torch, name)(torch.tensor(x)).numpy()
    tol = TOL[dtype]
    # near the roots (lgamma at 1 and 2, digamma at 1.4616) only absolute accuracy exists
    np.testing.assert_allclose(got, want, rtol=tol["rtol"] * 10,
                               atol=1e-5 if dtype == "float32" else 1e-12)
    assert np.array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erfinv_forward(device, dtype):
    y = np.concatenate([np.linspace(-1, 1, 2001), [1 - 1e-7, -(1 - 1e-7), 1e-20, -0.0, 1.5,
                                                   -2.0, np.nan]])
    if dtype == "float64":
        y = np.concatenate([y, [1 - 1e-12, -(1 - 1e-15)]])
    y = y.astype(dtype)
    got = to_numpy(ember.erfinv(ember.tensor(y, device=device)))
    want = torch.erfinv(torch.tensor(y)).numpy()
    np.testing.assert_allclose(got, want, **TOL[dtype])
    real = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[real]), np.signbit(want[real]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_atan2_quadrants_and_zeros(device, dtype):
    inf, nan = np.inf, np.nan
    edge = [0.0, -0.0, 1.0, -1.0, inf, -inf, nan, 1e-300 if dtype == "float64" else 1e-30]
    y = np.array([a for a in edge for _ in edge], dtype=dtype)
    x = np.array([b for _ in edge for b in edge], dtype=dtype)
    rng = seeded("atan2" + dtype)
    y = np.concatenate([y, rng.standard_normal(500) * 10.0 ** rng.integers(-5, 5, 500)])
    x = np.concatenate([x, rng.standard_normal(500) * 10.0 ** rng.integers(-5, 5, 500)])
    y, x = y.astype(dtype), x.astype(dtype)
    got = to_numpy(ember.atan2(ember.tensor(y, device=device), ember.tensor(x, device=device)))
    want = torch.atan2(torch.tensor(y), torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=TOL[dtype]["rtol"], atol=0)
    real = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[real]), np.signbit(want[real]))
    assert ember.arctan2 is ember.atan2
    np.testing.assert_allclose(to_numpy(ember.tensor(y[:5]).atan2(ember.tensor(x[:5]))), want[:5])


@pytest.mark.parametrize("name", ["atan2", "lgamma", "digamma", "erfinv", "sinc", "xlog1py",
                                  "i0", "ndtri", "entr", "logit"])
def test_gradients(device, name):
    rng = seeded(name)
    a = rng.uniform(0.2, 6.0, (3, 4))
    if name in ("erfinv", "ndtri", "logit"):
        a = rng.uniform(0.05, 0.95, (3, 4))
    if name == "digamma":
        a = np.concatenate([a, -a - 0.3], axis=0)
    fns = {"atan2": (ember.atan2, torch.atan2), "xlog1py": (ember.special.xlog1py,
                                                            torch.special.xlog1py)}
    if name in fns:
        b = rng.standard_normal((3, 4))
        check_grad(name, *fns[name], [rng.standard_normal((3, 4)), b], device, TOL["float64"])
        return
    e_fn = getattr(ember.special, name, None) or getattr(ember, name)
    t_fn = getattr(torch.special, name, None) or getattr(torch, name)
    if name in ("lgamma", "digamma"):
        e_fn, t_fn = getattr(ember, name), getattr(torch, name)
    check_grad(name, e_fn, t_fn, [a], device, dict(rtol=1e-9, atol=1e-11))


def test_lgamma_second_derivative(device):
    x = ember.tensor([0.3, 1.7, 4.0, -2.5], device=device, dtype=ember.float64,
                     requires_grad=True)
    (g,) = ember.autograd.grad(ember.lgamma(x).sum(), x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    tx = torch.tensor([0.3, 1.7, 4.0, -2.5], dtype=torch.float64)
    # torch's trigamma is good to ~1e-10; ember's matches pi^2/6 - sum 1/k^2 at integers
    np.testing.assert_allclose(to_numpy(h), torch.polygamma(1, tx).numpy(), rtol=1e-8)
    exact = math.pi ** 2 / 6 - sum(1 / k ** 2 for k in range(1, 4))
    np.testing.assert_allclose(to_numpy(h)[2], exact, rtol=1e-13)


SPECIAL_UNARY = ["expit", "logit", "erf", "erfc", "erfinv", "gammaln", "digamma", "psi",
                 "log1p", "expm1", "exp2", "sinc", "entr", "ndtr", "ndtri", "i0"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_namespace(device, dtype):
    rng = seeded("special" + dtype)
    for name in SPECIAL_UNARY:
        if name in ("logit", "erfinv", "ndtri"):
            a = np.concatenate([rng.uniform(-1 if name == "erfinv" else 0, 1, 50), [0.0, 0.5]])
        elif name in ("log1p",):
            a = rng.uniform(-0.9, 30, 50)
        elif name == "entr":
            a = np.concatenate([rng.uniform(-1, 5, 50), [0.0]])
        else:
            a = np.concatenate([rng.uniform(-30, 30, 50), [0.0, -0.0, 1.0]])
        a = a.astype(dtype)
        got = to_numpy(getattr(ember.special, name)(ember.tensor(a, device=device)))
        want = getattr(torch.special, name)(torch.tensor(a)).numpy()
        np.testing.assert_allclose(got, want, rtol=TOL[dtype]["rtol"] * 10,
                                   atol=1e-5 if dtype == "float32" else 1e-11, err_msg=name)
    a = rng.uniform(0, 1, (4, 5)).astype(dtype)
    b = rng.uniform(-1, 3, (4, 5)).astype(dtype)
    a[0, 0] = 0.0
    for name in ("xlogy", "xlog1py"):
        got = to_numpy(getattr(ember.special, name)(ember.tensor(a, device=device),
                                               ember.tensor(np.abs(b), device=device)))
        want = getattr(torch.special, name)(torch.tensor(a), torch.tensor(np.abs(b))).numpy()
        np.testing.assert_allclose(got, want, **TOL[dtype])
    for name in ("logsumexp", "log_softmax", "softmax"):
        got = to_numpy(getattr(ember.special, name)(ember.tensor(b, device=device), 1))
        want = getattr(torch.special, name)(torch.tensor(b), 1).numpy()
        np.testing.assert_allclose(got, want, **TOL[dtype])
    got = to_numpy(ember.special.logit(ember.tensor(a, device=device), eps=0.1))
    np.testing.assert_allclose(got, torch.special.logit(torch.tensor(a), eps=0.1).numpy(),
                               **TOL[dtype])


@pytest.mark.parametrize("kwargs", [dict(), dict(bins=7), dict(bins=5, min=-1, max=1),
                                    dict(bins=4, min=0.5, max=0.5)])
def test_histc(device, kwargs):
    a = seeded("histc").standard_normal(200).astype(np.float32)
    a[:3] = [1.0, -1.0, 0.5]
    got = to_numpy(ember.histc(ember.tensor(a, device=device), **kwargs))
    np.testing.assert_array_equal(got, torch.histc(torch.tensor(a), **kwargs).numpy())
    same = np.full(5, 2.0, np.float32)
    np.testing.assert_array_equal(to_numpy(ember.tensor(same, device=device).histc(bins=3)),
                                  torch.histc(torch.tensor(same), bins=3).numpy())


@pytest.mark.parametrize("r,rep", [(2, False), (3, False), (2, True), (1, False), (5, False)])
def test_combinations(device, r, rep):
    a = np.arange(4, dtype=np.float32) * 1.5
    got = to_numpy(ember.combinations(ember.tensor(a, device=device), r, rep))
    want = torch.combinations(torch.tensor(a), r, rep).numpy()
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    check_grad(f"comb{r}{rep}", lambda t: ember.combinations(t, 2, rep),
                lambda t: torch.combinations(t, 2, rep), [a.astype(np.float64)], device,
                TOL["float64"])


@pytest.mark.parametrize("interp", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(device, interp):
    rng = seeded("quantile" + interp)
    a = rng.standard_normal((4, 7))
    q = np.array([0.0, 0.25, 0.5, 0.9, 1.0])
    for dim, keep in ((None, False), (1, False), (0, True), (-1, True)):
        for qq in (0.3, q):
            tq = torch.tensor(qq) if isinstance(qq, np.ndarray) else qq
            eq = ember.tensor(qq, device=device) if isinstance(qq, np.ndarray) else qq
            got = to_numpy(ember.quantile(ember.tensor(a, device=device), eq, dim, keep,
                                     interpolation=interp))
            want = torch.quantile(torch.tensor(a), tq, dim, keep, interpolation=interp)
            np.testing.assert_allclose(got, want.numpy(), **TOL["float64"])
    n = a.copy()
    n[0, 2] = n[1, :] = np.nan
    for fn in ("quantile", "nanquantile"):
        got = to_numpy(getattr(ember, fn)(ember.tensor(n, device=device), ember.tensor(q,
                                     device=device), dim=1, interpolation=interp))
        want = getattr(torch, fn)(torch.tensor(n), torch.tensor(q), dim=1,
                                  interpolation=interp).numpy()
        np.testing.assert_allclose(got, want, **TOL["float64"])
    if interp == "linear":
        check_grad("quantile", lambda t: t.quantile(0.37, dim=1),
                    lambda t: t.quantile(0.37, dim=1), [a], device, TOL["float64"])


def test_mode(device):
    a = seeded("mode").integers(0, 4, (5, 9)).astype(np.float32)
    for dim, keep in ((-1, False), (0, True), (1, True)):
        got = ember.mode(ember.tensor(a, device=device), dim, keep)
        want = torch.mode(torch.tensor(a), dim, keep)
        np.testing.assert_array_equal(to_numpy(got.values), want.values.numpy())
        np.testing.assert_array_equal(to_numpy(got.indices), want.indices.numpy())
        v, i = ember.tensor(a, device=device).mode(dim, keepdim=keep)
        np.testing.assert_array_equal(to_numpy(i), want.indices.numpy())
    # every integer dtype: the "no candidate" fill is the dtype's own max (2**62 wrapped
    # around in int8/int32/uint8 and picked the wrong value)
    for dtype in ("int64", "int32", "int16", "int8", "uint8"):
        ints = a.astype(dtype)
        got = ember.mode(ember.tensor(ints, device=device))
        want = torch.mode(torch.tensor(ints))
        np.testing.assert_array_equal(to_numpy(got.values), want.values.numpy())
        np.testing.assert_array_equal(to_numpy(got.indices), want.indices.numpy())


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "sum", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(device, reduce, include_self):
    rng = seeded("scatter_reduce" + reduce)
    inp = rng.standard_normal((4, 5))
    src = rng.standard_normal((6, 5))
    idx = rng.integers(0, 3, (6, 5))
    fe = lambda i, s: i.scatter_reduce(0, ember.tensor(idx, device=device), s, reduce,  # noqa: E731
                                       include_self=include_self)
    ft = lambda i, s: i.scatter_reduce(0, torch.tensor(idx), s, reduce,  # noqa: E731
                                       include_self=include_self)
    got = to_numpy(fe(ember.tensor(inp, device=device), ember.tensor(src, device=device)))
    np.testing.assert_allclose(got, ft(torch.tensor(inp), torch.tensor(src)).numpy(),
                               **TOL["float64"])
    check_grad("sr" + reduce, fe, ft, [inp, src], device, TOL["float64"])
    ii = rng.integers(-3, 4, (3, 4))
    si = rng.integers(-3, 4, (5, 4))
    ix = rng.integers(0, 3, (5, 4))
    got = to_numpy(ember.tensor(ii, device=device).scatter_reduce(
        0, ember.tensor(ix, device=device), ember.tensor(si, device=device), reduce,
        include_self=include_self)) if reduce != "mean" else None
    if got is not None:
        want = torch.tensor(ii).scatter_reduce(0, torch.tensor(ix), torch.tensor(si), reduce,
                                               include_self=include_self).numpy()
        np.testing.assert_array_equal(got, want)


def test_errors():
    x = ember.tensor([0.5, 0.2])
    with pytest.raises(ember.EmberError, match="interpolation"):
        ember.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(ember.EmberError, match=r"q values must be in the range \[0, 1\]"):
        ember.quantile(x, 1.5)
    with pytest.raises(ember.EmberError, match="combinations.*1-D"):
        ember.combinations(ember.ones((2, 2)))
    with pytest.raises(ember.EmberError, match="scatter_reduce.*reduce must be one of"):
        x.scatter_reduce(0, ember.tensor([0]), ember.tensor([1.0]), "median")
    with pytest.raises(ember.EmberError, match="histc.*bins"):
        ember.histc(x, bins=0)
