"""Elementwise functions against PyTorch on cpu and opencl:0 (torch's tensor functions,
bit operations and shifts, round(decimals), heaviside, nan_to_num, atan2): forward values
and gradients with a random upstream gradient."""
from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from parity_helpers import TOL, Rows, check_parity, seeded, to_numpy

torch = pytest.importorskip("torch")


ROWS = Rows()
case = ROWS.case

case("nan_to_num", lambda T, a: T.nan_to_num(a, nan=1.0, posinf=5.0, neginf=-5.0),
     ("v", (4,), (math.nan, math.inf, -math.inf, 2.0)))
case("math", lambda T, a, p: (T.log2(p), p.log10(), T.exp2(a), T.sinh(a), a.cosh(), T.trunc(a * 3),
                              (a * 3).frac(), T.fmod(a * 3, 1.5), T.logaddexp(a, p),
                              T.hypot(a, p), T.erfc(a), T.logit(p * 0.9), T.xlogy(p, p + 1),
                              T.deg2rad(a), T.fmax(a, p), T.fmin(a, p)),
     ("f", (3, 4)), ("p", (3, 4)))
case("heaviside", lambda T, a, v: (T.heaviside(a, v), a.heaviside(v)),
     ("v", (5,), [-1.0, 0.0, 2.0, 0.0, -0.0]), ("f", (5,)), grad=False)
case("round_decimals", lambda T, a: (T.round(a * 100, decimals=1), a.round(decimals=2),
                                     T.round(a * 1000, decimals=-2), a.round()), ("f", (3, 4)),
     grad_tol=1e-5)
for _dtype in (np.int64, np.int32, np.int16, np.uint8):
    _lo = 0 if _dtype is np.uint8 else -100
    case(f"bitwise:{_dtype.__name__}", lambda T, i, j: (
        T.bitwise_and(i, j), T.bitwise_or(i, j), T.bitwise_xor(i, j), T.bitwise_not(i),
        i & j, i | j, i ^ j, ~i, i & 6, 5 | j, i.bitwise_xor(j)),
        ("i", (4, 5), _lo, 100, _dtype), ("i", (4, 5), _lo, 100, _dtype), grad=False)
case("bitwise:extremes", lambda T, i, j: (i & j, i | j, i ^ j, ~i),
     ("i", (6,), -2**62, 2**62, np.int64), ("i", (6,), -2**62, 2**62, np.int64), grad=False)
case("bitwise:bool", lambda T, a, b: (a & b, a | b, a ^ b, ~a, T.bitwise_and(a, b),
                                      T.bitwise_not(b)), ("b", (6,)), ("b", (6,)), grad=False)
case("shifts", lambda T, i, s: (i << s, i >> s, T.bitwise_left_shift(i, 3),
                                T.bitwise_right_shift(i, s), i << 2, i >> 1),
     ("i", (3, 4), -1000, 1000, np.int64), ("i", (3, 4), 0, 12, np.int64), grad=False)
case("shifts:int32", lambda T, i, s: (i << s, i >> s),
     ("i", (8,), -1000, 1000, np.int32), ("i", (8,), 0, 30, np.int32), grad=False)


@pytest.mark.parametrize("row", ROWS)
def test_parity(row):
    # on the CPU only: each op of these rows is checked on opencl:0 by its conformance row
    # (tests/ops/test_conformance.py); what PyTorch adds is the same on every device
    check_parity(row, "cpu")


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
