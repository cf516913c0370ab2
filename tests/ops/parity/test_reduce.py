"""Reductions against PyTorch on cpu and opencl:0 (amax/amin, logsumexp, aminmax, isclose,
histc, combinations, quantile, mode): forward values, gradients, errors."""
from __future__ import annotations

import ember
import numpy as np
import pytest
from parity_helpers import TOL, Rows, check_grad, check_parity, seeded, to_numpy

torch = pytest.importorskip("torch")


ROWS = Rows()
case = ROWS.case

case("isclose_allclose", lambda T, a: (T.isclose(a, a + 1e-7), T.isclose(a, a * 1.1),
                                       a.isclose(a + 1, atol=2.0)), ("f", (3, 4)), grad=False)
case("amax_amin_logsumexp", lambda T, a: (a.amax(1), T.amin(a, 0), T.logsumexp(a, 1),
                                          *a.max(1)), ("f", (3, 4)))
case("aminmax", lambda T, a: (*T.aminmax(a), *T.aminmax(a, dim=1, keepdim=True),
                              *a.aminmax(dim=0)), ("t", (3, 5)), grad_tol=1e-5)


@pytest.mark.parametrize("row", ROWS)
def test_parity(row):
    # on the CPU only: each op of these rows is checked on opencl:0 by its conformance row
    # (tests/ops/test_conformance.py); what PyTorch adds is the same on every device
    check_parity(row, "cpu")


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
