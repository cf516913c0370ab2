"""atan2, var, std, sinh, cosh, lgamma and ndtri on a generated grid of edge values (+-0,
+-smallest subnormal, +-1, +-1e8, +-largest / 2, +-inf, nan), against PyTorch on cpu and
opencl:0: every pair for atan2, for the reductions every edge value alone (0-d, dim=()) and
among finite ones with each correction, for the unary functions the grid and values inside
their ranges."""
from __future__ import annotations

import math

import ember
import numpy as np
import pytest

torch = pytest.importorskip("torch")

# PyTorch warns where N - correction <= 0 (the answer is then nan or inf, as ember's)
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")


def edges(dtype):
    info = np.finfo(dtype)
    one = [0.0, float(info.smallest_subnormal), 1.0, 1e8, float(info.max) / 2, math.inf]
    return [math.nan] + one + [-v for v in one]


def _tol(dtype):
    return dict(rtol=1e-6, atol=0) if dtype == "float32" else dict(rtol=1e-13, atol=0)


def _same(got, want, what, signed_zeros=True):
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, **_tol(str(want.dtype)), equal_nan=True,
                               err_msg=what)
    zeros = (got == 0) & (want == 0)
    assert not signed_zeros or (np.signbit(got[zeros]) == np.signbit(want[zeros])).all(), \
        f"{what}: signed zeros"


def _squared_in_dtype(name, a, dim, correction):
    """var/std with the squares taken in a's dtype (docs/semantics.md: ember's choice), or
    None where no square overflows or underflows (then PyTorch's answer is the one)."""
    axis = None if dim in (None, ()) else dim
    with np.errstate(all="ignore"):
        c = a - a.mean(axis=axis, keepdims=True)
        sq = c * c
        if not (np.isinf(sq) & np.isfinite(c)).any() and \
                not ((c != 0) & (sq < np.finfo(a.dtype).tiny)).any():
            return None
        n = a.size if axis is None else a.shape[axis]
        v = sq.sum(axis=axis) / a.dtype.type(max(n - correction, 0))
        return np.asarray(np.sqrt(v) if name.startswith("std") else v, a.dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_atan2_grid(dtype, device):
    v = np.array(edges(dtype), dtype)
    y, x = np.meshgrid(v, v, indexing="ij")                 # every (y, x) pair
    got = ember.atan2(ember.tensor(y, device=device), ember.tensor(x, device=device)).numpy()
    _same(got, torch.atan2(torch.tensor(y), torch.tensor(x)).numpy(),
          f"atan2 ({dtype}, {device})")


def _spread_inputs(dtype):
    """Every edge value alone (0-d) and first among finite ones (1.5, -2)."""
    for e in edges(dtype):
        yield f"{e!r} (0-d)", np.array(e, dtype)
        yield f"[{e!r}, 1.5, -2]", np.array([e, 1.5, -2.0], dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_var_std_grid(name, dtype, device):
    for label, a in _spread_inputs(dtype):
        for dim in ((None, ()) if a.ndim == 0 else ((), 0)):
            for correction in (0, 1):
                what = f"{name}({label}, dim={dim}, correction={correction}) on {device}"
                want = getattr(torch, name)(torch.tensor(a), dim=dim, correction=correction)
                got = getattr(ember, name)(ember.tensor(a, device=device), dim=dim,
                                           correction=correction)
                want = [w.numpy() for w in (want if name.endswith("_mean") else (want,))]
                got = [g.numpy() for g in (got if name.endswith("_mean") else (got,))]
                # ember squares in the input's dtype, PyTorch's CPU sums float32 in float64:
                # float32 std([3e38, 1.5, -2]) is inf here, 1.4e38 there (docs/semantics.md)
                own = _squared_in_dtype(name, a, dim, correction)
                if own is not None and a.dtype == np.float32:
                    want[0] = own
                _same(got[0], want[0], what)
                if name.endswith("_mean"):
                    # PyTorch's var_mean gives a nan mean for [inf, 1.5, -2] (its running
                    # mean meets inf - inf); the mean is torch.mean's (the sign of a zero
                    # mean is left open: PyTorch's sum of -0.0 starts from +0.0)
                    mean = torch.mean(torch.tensor(a), dim=dim).numpy()
                    _same(got[1], mean, f"{what}[1]", signed_zeros=False)


# unary functions on the edge grid plus values inside their ranges: name -> (ember, torch)
UNARY = {
    "sinh": (ember.sinh, torch.sinh), "cosh": (ember.cosh, torch.cosh),
    "lgamma": (ember.lgamma, torch.lgamma),
    "ndtri": (ember.special.ndtri, torch.special.ndtri),
}
MORE = [0.5, -0.5, 2.0, 3.0, -2.5, -3.0, 1e-4, -1e-4, 1e-8, 1e-30, 0.025, 0.975, 0.999,
        89.0, -89.0, 710.0, -710.0]
# math's double-precision value where PyTorch's float64 sinh/cosh overflow before the
# answer does (sinh(710) is 1.1e308)
EXACT = {"sinh": math.sinh, "cosh": math.cosh}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_grid(name, dtype, device):
    fe, ft = UNARY[name]
    with np.errstate(over="ignore"):
        a = np.array(edges(dtype) + MORE, dtype)
    got = fe(ember.tensor(a, device=device)).numpy()
    want = ft(torch.tensor(a)).numpy()
    if name in EXACT:
        for k, v in enumerate(a.tolist()):
            try:
                exact = EXACT[name](v)
            except OverflowError:
                continue
            if np.isinf(want[k]) and abs(exact) <= float(np.finfo(dtype).max):
                want[k] = exact
    # lgamma near its zeros (1, 2) has an absolute, not relative, error in float32
    atol = 1e-6 if name == "lgamma" and dtype == "float32" else 0
    np.testing.assert_allclose(got, want, rtol=_tol(dtype)["rtol"] * 4, atol=atol,
                               equal_nan=True, err_msg=f"{name} ({dtype}, {device})")


_PARTS = [-3.0, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_branch_cuts(dtype, device):
    """The inverse functions, log and sqrt on a grid through their branch cuts with both
    signed zeros: which side of a cut a point lies on is the sign of its zero part (OpenCL's
    asinh once added 1 + 0i to a -0 imaginary part, turning it +0 and flipping asin, acos
    and asinh of real values beyond +-1)."""
    z = np.array([complex(a, b) for a in _PARTS for b in _PARTS], dtype)
    for name in ("asin", "acos", "atan", "asinh", "acosh", "atanh", "log", "sqrt"):
        got = getattr(ember, name)(ember.tensor(z, device=device)).numpy()
        want = getattr(torch, name)(torch.tensor(z)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "complex64" else 1e-12,
                                   atol=1e-6, equal_nan=True, err_msg=f"{name} ({device})")
